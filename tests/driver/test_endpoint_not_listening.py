"""``provider.settings.endpoint_url`` naming a place where no local platform listens: `faascope
run` ended in botocore's EndpointConnectionError traceback (after the control plane's retries);
it is exit 2 naming the setting, with the command that starts a platform there (issue #29)."""
from __future__ import annotations

import http.server
import socket
import threading

import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.errors import BadInput
from faascope.providers.local_platform import require_platform


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_run_with_no_platform_at_endpoint_url_is_exit_2(tmp_path):
    port = _unused_port()
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: nobody-home
provider: {{kind: local, settings: {{endpoint_url: "http://127.0.0.1:{port}"}}}}
function: {{memory_mb: 128}}
workload: {{kind: noop}}
design: {{replications: 1, seed: 1}}
""")
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(tmp_path / "r.db"),
                                 "--no-progress"])
    assert r.exit_code == 2, (r.output, r.exception)
    assert isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.output and "EndpointConnectionError" not in r.output
    assert "provider.settings.endpoint_url" in r.output, r.output
    assert f"http://127.0.0.1:{port}" in r.output
    assert f"faascope platform start --detach --port {port}" in r.output, r.output


class _Unauthorised(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # a platform started with --require-token, asked without one
        self.send_response(401)
        self.end_headers()

    def log_message(self, *a):
        pass


def test_a_platform_that_answers_at_all_is_not_refused():
    srv = http.server.HTTPServer(("127.0.0.1", 0), _Unauthorised)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        require_platform(f"http://127.0.0.1:{srv.server_address[1]}")  # answers: no error
    finally:
        srv.shutdown()
        srv.server_close()
    with pytest.raises(BadInput) as exc:  # the same port, nobody listening any more
        require_platform(f"http://127.0.0.1:{srv.server_address[1]}")
    assert exc.value.exit_code == 2
    assert exc.value.field == "provider.settings.endpoint_url"


def test_a_campaign_with_stand_ins_gets_the_same_answer(tmp_path):
    # the stand-in wiring checks the platform itself (it was exit 1, "does not answer", with no
    # way to start one); a sharedfs payload needs no stand-in server, so nothing starts here
    from faascope.standins.needs import Needs
    from faascope.standins.wiring import provide

    port = _unused_port()
    with pytest.raises(BadInput) as exc:
        provide(Needs(kinds={"shared"}), data_dir=tmp_path, endpoint_url=f"http://127.0.0.1:{port}")
    assert exc.value.exit_code == 2 and exc.value.field == "provider.settings.endpoint_url"
    assert f"faascope platform start --detach --port {port}" in str(exc.value.message)
