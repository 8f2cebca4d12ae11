"""moto's server (the DynamoDB stand-in) with only the data-plane API reachable.

moto serves, beside the AWS APIs it emulates, its own control API under ``/moto-api/``: a
dashboard, ``POST /moto-api/reset`` (wipes every table), the state manager, recorder and
seeding. DynamoDB has no such paths, and a function that reached them could wipe or rewrite
the other functions' tables (issue #29: stand-ins expose to functions only what the managed
service does). This wrapper runs moto's own WSGI application behind one check: a path under
``/moto-api`` is answered as DynamoDB answers a request that names no operation it has
(HTTP 400, ``UnknownOperationException``), and never reaches moto. Nothing in faascope uses
moto's control API; a stand-in is reset by stopping it.

Run: ``python -m faascope.standins.moto_server -p 9200`` (loopback only), as ``python -m
moto.server`` is run.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys

#: path prefix of moto's own control API (moto.moto_api), refused
CONTROL_PREFIX = "/moto-api"
#: DynamoDB's answer to a request for an operation it does not have (JSON 1.0 protocol)
UNKNOWN_OPERATION = {"__type": "com.amazon.coral.service#UnknownOperationException"}


def is_control_path(path: str) -> bool:
    """Whether a request path reaches moto's control API (``/moto-api``, ``/moto-api/...``;
    repeated leading slashes count, as moto's router normalises them)."""
    p = "/" + path.lstrip("/")
    return p == CONTROL_PREFIX or p.startswith(CONTROL_PREFIX + "/")


def data_plane_only(app):
    """``app`` (a WSGI application) with moto's control API refused."""
    body = json.dumps(UNKNOWN_OPERATION).encode()

    def wrapped(environ, start_response):
        if is_control_path(environ.get("PATH_INFO", "")):
            start_response("400 Bad Request", [("Content-Type", "application/x-amz-json-1.0"),
                                               ("Content-Length", str(len(body)))])
            return [body]
        return app(environ, start_response)

    return wrapped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m faascope.standins.moto_server")
    ap.add_argument("-H", "--host", default="127.0.0.1")
    ap.add_argument("-p", "--port", type=int, required=True)
    args = ap.parse_args(argv)
    # moto reads MOTO_PORT for the URLs it builds; set as moto.server sets it
    os.environ.setdefault("MOTO_PORT", str(args.port))
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import run_simple

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    run_simple(args.host, args.port, data_plane_only(DomainDispatcherApplication(create_backend_app)),
               threaded=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
