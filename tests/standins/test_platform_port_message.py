"""`platform start` says loudly when its port is taken and which one it chose (real platform)."""
from __future__ import annotations

import re
import socket
import time

from click.testing import CliRunner

import faascope.standins.platform_commands as platform_commands
from faascope.cli import cli


def test_platform_start_says_when_its_port_is_taken_and_which_it_chose(tmp_path, monkeypatch):
    hold = socket.socket()
    hold.bind(("127.0.0.1", 0))
    hold.listen()
    taken = hold.getsockname()[1]
    monkeypatch.setattr(platform_commands, "DEFAULT_PORT", taken)  # as if 9001 were taken
    try:
        r = CliRunner().invoke(cli, ["platform", "start", "--detach", "--data-dir",
                                     str(tmp_path / "a")])
        assert r.exit_code == 0, r.output
        assert f"port {taken} is taken" in r.stderr and "WARNING" in r.stderr
        chosen = int(re.search(r"running at http://127.0.0.1:(\d+)", r.stdout).group(1))
        assert chosen != taken
        # an explicit --port that is taken is refused, naming the option
        r2 = CliRunner().invoke(cli, ["platform", "start", "--detach", "--port", str(taken),
                                      "--data-dir", str(tmp_path / "b")])
        assert r2.exit_code == 2 and "--port" in r2.output
    finally:
        CliRunner().invoke(cli, ["platform", "stop", "--data-dir", str(tmp_path / "a")])
        hold.close()


def _time_wait_ports() -> set[int]:
    """Local ports of loopback IPv4 connections in TIME_WAIT (/proc/net/tcp state 06)."""
    ports = set()
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            local, _, state = line.split()[1:4]
            if state == "06":
                ports.add(int(local.split(":")[1], 16))
    return ports


def _plain_bind_fails(port: int) -> bool:
    with socket.socket() as plain:
        try:
            plain.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def test_a_port_in_time_wait_is_free_for_the_platform(tmp_path):
    """Issue #29: `platform start --port P` refused P for ~60 s after a stop with clients
    connected: the free-port check bound without SO_REUSEADDR, which Go's listener sets, and
    tripped on the old connections in TIME_WAIT, which the platform's own bind does not."""
    import http.client

    from faascope.providers.local_platform import port_is_free

    a, b = tmp_path / "a", tmp_path / "b"
    try:
        r = CliRunner().invoke(cli, ["platform", "start", "--detach", "--port", "0", "--data-dir", str(a)])
        assert r.exit_code == 0, r.output
        port = int(re.search(r"running at http://127.0.0.1:(\d+)", r.stdout).group(1))
        clients = []
        for _ in range(3):  # clients with keep-alive connections, as boto3's
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/faascope/health")
            assert c.getresponse().read()
            clients.append(c)
        r = CliRunner().invoke(cli, ["platform", "stop", "--data-dir", str(a)])
        assert r.exit_code == 0 and "stopped" in r.output, r.output
        # The platform closed first, so its side waits in FIN_WAIT2 until each client closes too,
        # and then in TIME_WAIT. Closing the clients makes that certain: without it, whether one
        # of the platform's connections had reached TIME_WAIT by now was a race (a CI failure).
        for c in clients:
            c.close()
        deadline = time.monotonic() + 5
        while port not in _time_wait_ports() and time.monotonic() < deadline:
            time.sleep(0.05)
        # the situation of the issue: the platform's side of the connections waits in TIME_WAIT,
        # and a bind without SO_REUSEADDR trips on it
        assert port in _time_wait_ports()
        assert _plain_bind_fails(port)
        assert port_is_free(port)
        r = CliRunner().invoke(cli, ["platform", "start", "--detach", "--port", str(port),
                                     "--data-dir", str(b)])
        assert r.exit_code == 0, r.output
        assert f"running at http://127.0.0.1:{port} " in r.stdout
        # a port a server listens on is still taken (here: the platform's)
        assert not port_is_free(port)
    finally:
        for d in (a, b):
            CliRunner().invoke(cli, ["platform", "stop", "--data-dir", str(d)])
