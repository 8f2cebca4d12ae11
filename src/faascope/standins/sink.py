"""The faascope network sink: the other end of the agent's `network` workload.

Protocol (version 1, one TCP connection per stream; docs/storage.md):

1. The agent sends one JSON line: ``{"faascope_sink": 1, "mode": "recv"|"send", "session": ID,
   "bytes": N, "duration_ms": D, "interval_ms": I}``.
2. The sink answers ``{"ok": true}`` (or ``{"ok": false, "error": ...}``) and a newline.
3. ``send``: the sink writes N bytes (0 = no byte limit) or until D ms have passed, then closes.
   ``recv``: the agent writes until it half-closes; the sink counts the bytes it receives into
   intervals of I ms from the session's start (the first header of that session it saw) and
   answers one JSON line ``{"ok": true, "bytes", "interval_ms", "samples", "first_ns",
   "last_ns"}`` (times in ns after the session start), then closes.

Sampling happens where the bytes arrive, so a token bucket in between is seen as it paces
the stream, not as the sender's socket buffers absorb it.

Run: ``python -m faascope.standins.sink --port 9100`` (loopback only).
"""
from __future__ import annotations

import argparse
import json
import socket
import socketserver
import sys
import threading
import time

VERSION = 1
MAX_HEADER = 4096
SESSION_TTL_S = 600.0
MAX_SAMPLES = 200_000
CHUNK = 1 << 20

_sessions: dict[str, float] = {}
_sessions_lock = threading.Lock()


def _session_start(session: str, now_ns: int) -> int:
    with _sessions_lock:
        cutoff = now_ns - int(SESSION_TTL_S * 1e9)
        for k in [k for k, v in _sessions.items() if v < cutoff]:
            del _sessions[k]
        return _sessions.setdefault(session, now_ns)


def _read_line(sock: socket.socket) -> bytes:
    buf = bytearray()
    while not buf.endswith(b"\n"):
        b = sock.recv(1)
        if not b:
            raise ConnectionError("connection closed before the header ended")
        buf += b
        if len(buf) > MAX_HEADER:
            raise ValueError("header longer than 4096 bytes")
    return bytes(buf)


def _reply(sock: socket.socket, doc: dict) -> None:
    sock.sendall(json.dumps(doc, separators=(",", ":")).encode() + b"\n")


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(960)
        try:
            header = json.loads(_read_line(sock))
            now = time.monotonic_ns()
            if header.get("faascope_sink") != VERSION:
                raise ValueError(f"protocol version {header.get('faascope_sink')!r}, this sink speaks {VERSION}")
            mode = header.get("mode")
            interval_ns = int(header.get("interval_ms", 20)) * 1_000_000
            nbytes = int(header.get("bytes", 0))
            duration_ns = int(header.get("duration_ms", 10_000)) * 1_000_000
            if mode not in ("recv", "send") or interval_ns <= 0 or nbytes < 0 or duration_ns <= 0:
                raise ValueError("bad header: mode must be recv or send, interval_ms and duration_ms positive")
            start = _session_start(str(header.get("session", "")), now)
        except (ValueError, TypeError, ConnectionError, OSError) as exc:
            try:
                _reply(sock, {"ok": False, "error": str(exc)})
            except OSError:
                pass
            return
        _reply(sock, {"ok": True})
        if mode == "send":
            self._send(sock, nbytes, now + duration_ns)
        else:
            self._recv(sock, start, interval_ns)

    @staticmethod
    def _send(sock: socket.socket, nbytes: int, deadline_ns: int) -> None:
        chunk = memoryview(bytes(CHUNK))
        sent = 0
        try:
            while (nbytes == 0 or sent < nbytes) and time.monotonic_ns() < deadline_ns:
                n = CHUNK if nbytes == 0 else min(CHUNK, nbytes - sent)
                sent += sock.send(chunk[:n])
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    @staticmethod
    def _recv(sock: socket.socket, start: int, interval_ns: int) -> None:
        buf = bytearray(CHUNK)
        samples: list[int] = []
        total = 0
        first = last = -1
        while True:
            n = sock.recv_into(buf)
            t = time.monotonic_ns() - start
            if n == 0:
                break
            k = min(max(t // interval_ns, 0), MAX_SAMPLES - 1)
            if k >= len(samples):
                samples.extend([0] * (k + 1 - len(samples)))
            samples[k] += n
            total += n
            if first < 0:
                first = t
            last = t
        _reply(sock, {"ok": True, "bytes": total, "interval_ms": interval_ns // 1_000_000, "samples": samples,
                      "first_ns": max(first, 0), "last_ns": max(last, 0)})


class SinkServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(host: str = "127.0.0.1", port: int = 0) -> SinkServer:
    """A running sink in a background thread; ``server.server_address`` has the port."""
    server = SinkServer((host, port), _Handler)
    threading.Thread(target=server.serve_forever, name="faascope-sink", daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m faascope.standins.sink", description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9100)
    p.add_argument("--ready-file", help="write {\"port\": N} here once listening")
    a = p.parse_args(argv)
    server = SinkServer((a.host, a.port), _Handler)
    if a.ready_file:
        with open(a.ready_file, "w") as f:
            json.dump({"port": server.server_address[1]}, f)
    print(f"faascope sink on {a.host}:{server.server_address[1]}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
