"""faascope.processes.stop_process: the one "SIGTERM, wait with a deadline, SIGKILL" that the
stand-ins, the local platform and a detached runner's stop share."""
from __future__ import annotations

import subprocess
import sys
import time

from faascope.processes import pid_alive, stop_process

IGNORES_TERM = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "print('ready', flush=True); time.sleep(60)")


def _child(code: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def test_a_process_that_exits_on_sigterm_ends_within_the_wait():
    p = _child("import time; print('ready', flush=True); time.sleep(60)")
    t0 = time.monotonic()
    assert stop_process(p.pid, 10.0) is True
    assert time.monotonic() - t0 < 5  # it did not wait out the deadline
    assert not pid_alive(p.pid)  # ended, and reaped (by pid_alive: it is our child)
    p.wait(5)


def test_a_process_that_ignores_sigterm_is_killed_at_the_deadline():
    p = _child(IGNORES_TERM)
    t0 = time.monotonic()
    assert stop_process(p.pid, 0.5) is False
    assert time.monotonic() - t0 >= 0.5
    assert p.wait(5) == -9


def test_without_kill_it_only_waits_and_says_whether_the_process_ended():
    p = _child(IGNORES_TERM)
    try:
        assert stop_process(p.pid, 0.3, kill=False) is False
        assert p.poll() is None  # still running: the caller decides (a detached runner's stop)
        assert stop_process(p.pid, 0.3, alive=lambda: False, kill=False) is True  # its own test of "ended"
    finally:
        p.kill()
        p.wait(5)


def test_a_pid_that_is_gone_is_stopped():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait(5)
    assert not pid_alive(p.pid)
    assert stop_process(p.pid, 5.0) is True
