"""The Redis stand-in lets a function run what ElastiCache lets a client run, and no more.

Issue #29: from inside a sandbox, ``CONFIG SET requirepass`` on the stand-in succeeded, and every
other function and the host then got NOAUTH. Runs a real redis-server through the stand-in's own
start function and speaks RESP to it.
"""
from __future__ import annotations

import shutil
import socket

import pytest

from faascope import standins
from faascope.processes import stop_process

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")


def _command(port: int, *args: str) -> bytes:
    """One RESP command on a fresh connection; the first line of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(f"*{len(args)}\r\n".encode() + b"".join(
            f"${len(a.encode())}\r\n{a}\r\n".encode() for a in args))
        return s.makefile("rb").readline().rstrip(b"\r\n")


@pytest.fixture
def redis_port(tmp_path):
    server = standins.start_redis(tmp_path)
    yield server.port
    stop_process(server.pid, 10)


def test_privileged_commands_are_refused_and_nobody_is_locked_out(redis_port):
    for args in (("CONFIG", "SET", "requirepass", "x"), ("CONFIG", "GET", "*"), ("SHUTDOWN", "NOSAVE"),
                 ("DEBUG", "SLEEP", "0"), ("ACL", "SETUSER", "default", ">x"), ("SAVE",),
                 ("REPLICAOF", "127.0.0.1", "1"), ("MODULE", "LIST")):
        answer = _command(redis_port, *args)
        # NOPERM from the ACL; DEBUG and MODULE are refused by redis-server's own defaults too
        assert answer.startswith(b"-NOPERM") or b"not allowed" in answer, (args, answer)
    # what a function's kv workload does still works, for everyone
    assert _command(redis_port, "SET", "k", "v") == b"+OK"
    assert _command(redis_port, "GET", "k") == b"$1"
    assert _command(redis_port, "PING") == b"+PONG"
    assert _command(redis_port, "ACL", "WHOAMI") == b"$7"  # "default"
