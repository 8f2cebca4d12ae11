"""`faascope platform status` finds a platform started in the foreground (issue #29), and does
not believe the state a killed one left behind (real platform, as a subprocess)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

import faascope
from faascope.cli import cli
from faascope.providers import local_platform


def _status(data_dir: Path):
    return CliRunner().invoke(cli, ["platform", "status", "--data-dir", str(data_dir)])


def _start_foreground(data_dir: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(Path(faascope.__file__).resolve().parents[1]))
    return subprocess.Popen([sys.executable, "-m", "faascope", "platform", "start", "--port", "0",
                             "--isolation", "none", "--network", "host", "--data-dir", str(data_dir)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_running(data_dir: Path, proc: subprocess.Popen) -> dict:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the foreground platform exited"
        if (state := local_platform.running(data_dir)) is not None:
            return state
        time.sleep(0.1)
    raise AssertionError("the foreground platform never became discoverable")


def test_status_finds_a_foreground_platform_and_forgets_it_when_it_ends(tmp_path):
    proc = _start_foreground(tmp_path)
    try:
        state = _wait_running(tmp_path, proc)
        assert state["pid"] == proc.pid  # the CLI became the platform (execve: same pid)
        r = _status(tmp_path)
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["pid"] == proc.pid
        assert state["endpoint"].startswith("http://127.0.0.1:")
        # a second start in the same data directory sees it, as it sees a detached one
        r2 = CliRunner().invoke(cli, ["platform", "start", "--detach", "--port", "0",
                                      "--data-dir", str(tmp_path)])
        assert r2.exit_code == 2 and state["endpoint"] in r2.output
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        proc.wait(timeout=20)
    r = _status(tmp_path)
    assert r.exit_code == 1 and "not running" in r.output
    assert not (tmp_path / "platform.json").exists()  # it went with its platform


def test_a_killed_foreground_platforms_state_is_not_believed(tmp_path):
    proc = _start_foreground(tmp_path)
    try:
        state = _wait_running(tmp_path, proc)
    finally:
        proc.kill()
        proc.wait(timeout=20)
    left = json.loads((tmp_path / "platform.json").read_text())
    assert left["pid"] == state["pid"] and left["identity"]  # SIGKILL: nothing removed it
    assert local_platform.running(tmp_path) is None
    assert _status(tmp_path).exit_code == 1


def test_a_recorded_pid_that_is_another_process_now_is_not_the_platform(tmp_path):
    """A stale file whose pid the kernel has handed on, to a process that answers at the
    recorded endpoint with that pid, is still not believed: the start time differs."""
    proc = _start_foreground(tmp_path)
    try:
        state = _wait_running(tmp_path, proc)
        f = tmp_path / "platform.json"
        doc = json.loads(f.read_text())
        boot, ticks = doc["identity"].rsplit(":", 1)
        f.write_text(json.dumps(doc | {"identity": f"{boot}:{int(ticks) + 1}"}))
        assert local_platform.running(tmp_path) is None
        f.write_text(json.dumps(doc))
        assert local_platform.running(tmp_path)["endpoint"] == state["endpoint"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
