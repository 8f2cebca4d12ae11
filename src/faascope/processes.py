"""Stopping a process with a deadline: SIGTERM, wait for it to end, SIGKILL what is left.

One helper for the stand-ins' servers (:mod:`faascope.standins`), the local platform
(:mod:`faascope.providers.local_platform`) and a detached campaign's runner
(:mod:`faascope.driver.detach`, which waits without killing: its runner finishes the
invocation in flight and records it).
"""
from __future__ import annotations

import os
import signal
import time
from typing import Callable, Optional


def pid_alive(pid: int) -> bool:
    """Whether pid still runs; a zombie (exited, not yet reaped by its parent) does not, and a
    child of this process that has exited is reaped here."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False  # it was our child and has just been reaped
    except ChildProcessError:
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def process_identity(pid: int) -> Optional[str]:
    """What tells this process apart from any other that ever has or will have its pid: the
    boot it runs in and its start time since boot (``/proc/<pid>/stat``, field 22, in clock
    ticks). None when it does not run. A pid alone is not enough to signal a process found in a
    record later: the kernel hands a dead process's pid to the next one."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] == "Z":
        return None
    return f"{boot}:{fields[19]}"  # field 22 of stat; fields here start at field 3


def is_process(pid: int, identity: Optional[str]) -> bool:
    """Whether ``pid`` is still the process ``identity`` (:func:`process_identity`) named."""
    return identity is not None and process_identity(pid) == identity


def stop_process(pid: int, wait_s: float, *, alive: Optional[Callable[[], bool]] = None,
                 kill: bool = True, poll_s: float = 0.05) -> bool:
    """SIGTERM ``pid`` and wait up to ``wait_s`` for it to end (``alive``: whether it still
    runs; by default :func:`pid_alive`), then SIGKILL it if it has not and ``kill``. True when
    it ended within the wait (or was gone already), False when it had to be killed or, without
    ``kill``, still runs."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    running = alive if alive is not None else (lambda: pid_alive(pid))
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not running():
            return True
        time.sleep(poll_s)
    if not running():
        return True
    if kill:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return False
