"""Detached campaigns: ``faascope run --detach``, ``faascope status`` and ``faascope stop``
(docs/schedules.md).

``run --detach`` checks the spec, the plan and the results file in the foreground (exit 2 for
bad input, before anything runs), then starts ``faascope run`` again as a process of its own
session (no terminal: closing the shell does not stop it) that writes its output to
``RESULTS.log`` and holds an exclusive lock (flock(2)) on its state file ``RESULTS.run.json``:
its pid, command, start, log and, when it ends, how. The lock, not the pid, says whether the
runner is alive: the kernel releases it when the process ends however it ends (SIGKILL and
power loss included), and a reused pid cannot hold it. A second runner of the same results file
(detached or not) is refused while the lock is held.

``stop`` sends the runner SIGTERM, which the campaign's stop flag turns into "stop after the
invocation in flight" (a periodic campaign waiting for its next slot stops at once); ``--abandon``
sends a second one, which abandons the invocation in flight. Either way the results file is
consistent and ``run --resume`` continues it.
"""
from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any, Optional

from faascope.designs.slots import recorded_anchor, slot_plan
from faascope.errors import BadInput, Failure
from faascope.processes import stop_process
from faascope.specs.model import ScheduleSpec
from faascope.store.reader import NotAResultsFile, ResultsFile
from faascope.store.timestamps import utc_now

#: how long ``run --detach`` waits for the runner to take its lock (it loads the spec first)
READY_TIMEOUT_S = 60.0

_held: Optional[IO[str]] = None   # the runner's own state file, open and locked for its life


def state_path(results: Path) -> Path:
    return results.with_name(results.name + ".run.json")


def log_path(results: Path) -> Path:
    return results.with_name(results.name + ".log")


def _read_state(path: Path) -> dict:
    try:
        return json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}


def runner_alive(results: Path) -> bool:
    """Whether a runner holds the results file's state lock."""
    path = state_path(results)
    if not path.exists():
        return False
    try:
        with open(path, "r") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh, fcntl.LOCK_UN)
            return False
    except OSError:
        return False


def refuse_if_running(results: Path) -> None:
    """BadInput (exit 2) when a runner already runs the campaign in ``results``."""
    if runner_alive(results):
        st = _read_state(state_path(results))
        raise BadInput(f"a runner (pid {st.get('pid', '?')}) is already running the campaign in "
                       f"{results}; see `faascope status {results}`, or stop it with "
                       f"`faascope stop {results}`", field="--results")


def hold_state(results: Path, spec: str, argv: list[str]) -> None:
    """In the runner: take the state file's lock for the life of this process and record who
    holds it. BadInput when another runner holds it."""
    global _held
    path = state_path(results)
    fh = open(path, "a+")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        refuse_if_running(results)
        raise BadInput(f"another runner holds {path}", field="--results") from None
    _held = fh
    _write_held({"pid": os.getpid(), "host": socket.gethostname(), "started_at": utc_now(),
                 "spec": spec, "results": str(results), "log": str(log_path(results)),
                 "argv": argv, "state": "running"})


def _write_held(state: dict) -> None:
    assert _held is not None
    _held.seek(0)
    _held.truncate()
    _held.write(json.dumps(state, indent=1) + "\n")
    _held.flush()
    os.fsync(_held.fileno())


def end_state(outcome: str, exit_code: int) -> None:
    """In the runner, as it ends: how (the lock goes with the process)."""
    if _held is None:
        return
    _held.seek(0)
    try:
        state = json.loads(_held.read() or "{}")
    except ValueError:
        state = {}
    state.update(state="ended", ended_at=utc_now(), outcome=outcome, exit_code=exit_code)
    _write_held(state)


def start_detached(spec: Path, results: Path, run_args: list[str]) -> dict:
    """Start ``faascope run SPEC --results RESULTS RUN_ARGS`` as a detached runner and wait until
    it holds its lock; the runner's state. Failure (with the end of its log) when it ends first."""
    refuse_if_running(results)
    log = log_path(results)
    argv = [sys.executable, "-m", "faascope", "run", str(spec), "--results", str(results),
            "--no-progress", "--runner-state", *run_args]
    state_file = state_path(results)
    before = _read_state(state_file).get("started_at")
    try:
        results.parent.mkdir(parents=True, exist_ok=True)
        out = open(log, "a")
    except OSError as exc:  # a read-only file system, no permission
        raise BadInput(f"cannot write the detached run's log {log} beside the results file: "
                       f"{exc.strerror or exc}", field="--results") from None
    with out:
        out.write(f"--- {utc_now()} faascope run (detached): {' '.join(argv[3:])}\n")
        out.flush()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True, close_fds=True)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        code = proc.poll()
        st = _read_state(state_file)
        if code is None and st.get("pid") == proc.pid and st.get("started_at") != before \
                and runner_alive(results):
            return st
        if code == 0:   # it had nothing to wait for (e.g. a complete campaign resumed)
            return {**st, "pid": proc.pid, "log": str(log), "finished": True}
        if code is not None:
            tail = "".join(log.read_text(errors="replace").splitlines(True)[-15:])
            raise (BadInput if code == 2 else Failure)(
                f"the detached run ended at once (exit {code}); the end of {log}:\n{tail}",
                **({"field": "SPEC"} if code == 2 else {}))
        time.sleep(0.1)
    raise Failure(f"the detached runner (pid {proc.pid}) did not start within "
                  f"{READY_TIMEOUT_S:.0f} s; see {log}")


def stop_runner(results: Path, timeout_s: float, abandon: bool = False) -> dict:
    """SIGTERM the runner (twice with ``abandon``) and wait until it ends (its lock goes)."""
    if not runner_alive(results):
        require_known(results)
        return {"stopped": False, "reason": "no runner is running it"}
    st = _read_state(state_path(results))
    pid = int(st["pid"])
    if abandon:
        os.kill(pid, signal.SIGTERM)  # the first of two: the second abandons what is in flight
        time.sleep(0.2)
    # the runner has ended when its lock goes; never killed: it records what is in flight
    if stop_process(pid, timeout_s, alive=lambda: runner_alive(results), kill=False, poll_s=0.1):
        return {"stopped": True, "pid": pid, **_read_state(state_path(results))}
    raise Failure(f"the runner (pid {pid}) is still finishing after {timeout_s:g} s (an "
                  f"invocation in flight); wait, or `faascope stop {results} --abandon`")


def require_known(results: Path) -> None:
    """Exit 2 naming RESULTS when it neither exists nor has a detached run recorded (a mistyped
    path must not read as "a campaign that has not started"). A run just started may not have
    created its file yet: its runner's state file is there, so it passes."""
    if not results.exists() and not state_path(results).exists():
        raise BadInput(f"no such results file: {results} (and no detached run of it recorded)",
                       field="RESULTS")


def status(results: Path) -> dict[str, Any]:
    """What ``faascope status`` reports: the runner, the campaign, its slots."""
    require_known(results)
    st = _read_state(state_path(results))
    out: dict[str, Any] = {"results": str(results), "running": runner_alive(results),
                           "runner": st or None, "log": str(log_path(results))}
    if not results.exists():
        out["campaign"] = None
        return out
    try:
        with ResultsFile(results, field="RESULTS") as rf:
            camp = rf.campaign()
            if camp is not None:
                out.update(rf.progress())
    except NotAResultsFile:
        camp = None   # being created (a runner has just started), or not faascope's file
    if camp is None:
        if not out["running"]:
            raise BadInput(f"{results} holds no campaign", field="RESULTS")
        out["campaign"] = None   # the runner is creating it
        return out
    sched = (json.loads(camp["spec_json"]).get("design") or {}).get("schedule")
    anchor = recorded_anchor(camp["plan_json"])
    if sched and anchor is not None and out["status"] != "complete":
        due = slot_plan(ScheduleSpec.model_validate(sched), anchor).due
        seen = out["slots"]["last_slot"]
        nxt = 0 if seen is None else seen + 1
        if nxt < len(due):
            out["slots"]["next_slot"] = nxt
            out["slots"]["next_due_unix"] = due[nxt]
    return out
