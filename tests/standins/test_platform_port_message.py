"""`platform start` says loudly when its port is taken and which one it chose (real platform)."""
from __future__ import annotations

import re
import socket

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
