"""A loopback HTTP server speaking just enough of the Lambda ``Invoke`` API to count, on the
receiving side, what a client really sends, and to misbehave on cue.

Each request to ``POST /2015-03-31/functions/{name}/invocations`` takes the next action of
``script`` (then ``default``):

- ``ok``: an agent reply (200, the agent's JSON);
- ``429``: ``TooManyRequestsException``, as Lambda throttles;
- ``drop``: read the whole request, then close the socket without a reply (the function "ran");
- ``die``: as ``drop``, then stop listening: every later connection is refused (a platform that
  died with the call in flight).

``requests`` counts every request received, per action.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional


class LoopbackLambda:
    def __init__(self, script: Optional[list[str]] = None, default: str = "ok"):
        self.script = list(script or [])
        self.default = default
        self.requests: list[str] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with owner.lock:
                    action = owner.script.pop(0) if owner.script else owner.default
                    owner.requests.append(action)
                if action in ("drop", "die"):
                    self.close_connection = True
                    self.connection.close()
                    if action == "die":
                        threading.Thread(target=owner.stop, daemon=True).start()
                        owner.stopped.wait(5)
                    return
                if action == "429":
                    out = json.dumps({"Type": "User", "message": "Rate Exceeded."}).encode()
                    self.send_response(429)
                    self.send_header("X-Amzn-ErrorType", "TooManyRequestsException")
                else:
                    now = time.time_ns()
                    kind = (json.loads(body or b"{}").get("workload") or {}).get("kind", "noop")
                    out = json.dumps({
                        "ok": True, "cold": False,
                        "instance": {"id": "i-1", "started_at": "", "sandbox": "/loopback",
                                     "boot_id": "b", "cpu_quota": None, "memory_limit_bytes": None},
                        "timings": {"received_ns": now, "workload_start_ns": now,
                                    "workload_end_ns": now},
                        "workload": {"kind": kind, "elapsed_s": 0.0, "bytes": 0, "ops": 0},
                        "error": None}).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.send_header("X-Amzn-RequestId", f"req-{len(owner.requests)}")
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.stopped = threading.Event()
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self.stopped.is_set():
            return
        self.server.shutdown()
        self.server.server_close()  # connections are refused from now on
        self.stopped.set()
