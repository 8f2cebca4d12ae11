"""The http provider's invoker names failures as the Lambda providers do: a call that never
connected is EndpointConnectionError (the campaign stops, nothing recorded), a call that was
sent and then lost is MayHaveRun.* (recorded, never resent), counted on the receiving side.
It once named a refused connection ConnectionRefusedError, which the campaign recorded as a
measurement, and called a reset after sending plain ConnectionResetError."""
from __future__ import annotations

import socket
import threading

from faascope.providers.http import HTTPInvoker


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_never_connected_is_named_as_never_sent():
    port = _free_port()  # nothing listens there
    res = HTTPInvoker(connect_timeout_s=2, max_attempts=3).post(f"http://127.0.0.1:{port}/",
                                                                b"{}")
    assert res.status == "client_error" and res.error_type == "EndpointConnectionError"
    assert res.attempts == 3 and res.send_ns is None


def test_a_call_lost_after_sending_may_have_run_and_is_sent_once():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    seen: list[bytes] = []

    def serve():
        srv.settimeout(2)
        try:
            while True:
                conn, _ = srv.accept()
                seen.append(conn.recv(65536))   # read the request, then drop the connection
                conn.close()
        except OSError:
            return

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        res = HTTPInvoker(max_attempts=3).post(f"http://127.0.0.1:{srv.getsockname()[1]}/",
                                               b'{"workload": {"kind": "noop"}}')
    finally:
        srv.close()
        t.join(3)
    assert res.status == "client_error" and res.error_type.startswith("MayHaveRun.")
    assert res.attempts == 1 and len([r for r in seen if r]) == 1   # never resent
