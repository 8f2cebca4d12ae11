"""What a local `faascope run` started on this machine, written down as it starts it, so that
nothing it started outlives it unnoticed: the stand-in servers and shapers it started, their
tmpfs mounts and work directories, and the local platform it started.

Each run (each local provider it opens) keeps a record, ``<data dir>/runs/<pid>-<n>.json``:
its own process (pid and :func:`faascope.processes.process_identity`), the processes it started
(with their identities, so that a pid the kernel has since handed to another process is never
signalled), its mounts and directories, and the platform it uses (data directory, pid, whether
this run started it). The record is rewritten after every server started, and removed when the
run ends (:meth:`RunRecord.release`). A record whose process is gone (SIGKILL, OOM killer,
power) is a leftover: the next run with that data directory, and `faascope cleanup --provider
local`, stop what it names (:func:`reap`).

A platform that a run started (``started_by_run`` in its state, faascope.providers.local_platform)
is stopped when the last run using it ends or is found dead; one the user started (`faascope
platform start`) never is, nor one a run was asked to keep (``--keep-platform``). All of this
happens under one lock per data directory (``runs/.lock``), so two runs that share a platform
never stop it under each other.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from faascope.processes import is_process, process_identity, stop_process
from faascope.providers import local_platform

#: the folder of the runs' records, under the data directory
RUNS_DIR = "runs"
#: how long a left-over server has to exit after SIGTERM before it is killed (seconds)
STOP_WAIT_S = 10.0


def runs_dir(data_dir: Path) -> Path:
    return Path(data_dir) / RUNS_DIR


@contextmanager
def locked(data_dir: Path) -> Iterator[None]:
    """The data directory's runs lock (flock: released by the kernel if its holder dies)."""
    d = runs_dir(data_dir)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / ".lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


#: how long an unmount is retried while the mount is busy (a server that was just stopped may
#: still be closing its files), before it is detached lazily
UNMOUNT_RETRY_S = 2.0


def unmount(path: str) -> None:
    """Unmount a tmpfs faascope mounted. A busy mount is retried for UNMOUNT_RETRY_S, then
    detached lazily (``umount -l``: gone from the tree at once, freed when its last user
    closes), so no stand-in's 4 GiB tmpfs stays mounted after its run (seen: eight left by
    fidelity runs, "target is busy"); says so on stderr if it still stays."""
    deadline = time.monotonic() + UNMOUNT_RETRY_S
    while True:
        r = subprocess.run(["umount", path], capture_output=True, text=True)
        if r.returncode == 0 or not os.path.ismount(path):
            return
        if time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    lazy = subprocess.run(["umount", "-l", path], capture_output=True, text=True)
    if lazy.returncode != 0 and os.path.ismount(path):
        print(f"faascope: could not unmount {path}: {r.stderr.strip()}", file=sys.stderr)


@dataclass
class RunRecord:
    """One run's record of what it started (see the module's docstring)."""
    data_dir: Path
    path: Path
    doc: dict = field(default_factory=dict)

    @classmethod
    def create(cls, data_dir: Path) -> "RunRecord":
        d = runs_dir(data_dir)
        d.mkdir(parents=True, exist_ok=True)
        pid = os.getpid()
        n = 0
        while (d / f"{pid}-{n}.json").exists():
            n += 1
        rec = cls(Path(data_dir), d / f"{pid}-{n}.json",
                  {"owner": {"pid": pid, "identity": process_identity(pid), "argv": sys.argv[:8]},
                   "processes": [], "mounts": [], "dirs": [], "platform": None})
        rec.write()
        return rec

    @classmethod
    def read(cls, data_dir: Path, path: Path) -> Optional["RunRecord"]:
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return cls(Path(data_dir), path, doc) if isinstance(doc, dict) else None

    def write(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.doc, indent=1))
        os.chmod(tmp, 0o600)
        tmp.replace(self.path)  # a run killed mid-write leaves the previous record whole

    @property
    def alive(self) -> bool:
        """Whether the run that wrote this record still runs."""
        o = self.doc.get("owner") or {}
        return isinstance(o.get("pid"), int) and is_process(o["pid"], o.get("identity"))

    def note(self, processes: dict[int, str], mounts: list[str], dirs: list[str]) -> None:
        """What the run owns now (pid -> what it is), written at once."""
        known = {p["pid"]: p for p in self.doc["processes"]}
        self.doc["processes"] = [known.get(pid) or {"pid": pid, "what": what,
                                                    "identity": process_identity(pid)}
                                 for pid, what in processes.items()]
        self.doc["mounts"], self.doc["dirs"] = list(mounts), list(dirs)
        self.write()

    def use_platform(self, data_dir: Optional[Path], endpoint: str, pid: Optional[int],
                     how: str, remove_dir: bool = False) -> None:
        """The platform this run uses (data_dir None: one at a given endpoint, not ours)."""
        self.doc["platform"] = {"data_dir": str(data_dir) if data_dir else None, "endpoint": endpoint,
                                "pid": pid, "how": how, "remove_dir": remove_dir}
        self.write()

    def uses(self, data_dir: Path, pid: int) -> bool:
        p = self.doc.get("platform") or {}
        return p.get("data_dir") == str(data_dir) and p.get("pid") == pid

    def stop_owned(self) -> list[str]:
        """Stop the processes still running as recorded, unmount, remove the directories;
        what was stopped."""
        done = []
        for p in self.doc.get("processes", []):
            if is_process(p.get("pid", 0), p.get("identity")):
                stop_process(p["pid"], STOP_WAIT_S)
                done.append(f"{p.get('what', 'process')} (pid {p['pid']})")
        for m in self.doc.get("mounts", []):
            if os.path.ismount(m):
                unmount(m)
                done.append(f"tmpfs {m}")
        for d in self.doc.get("dirs", []):
            if os.path.isdir(d):
                shutil.rmtree(d, ignore_errors=True)
        self.doc.update(processes=[], mounts=[], dirs=[])
        return done

    def release(self) -> dict:
        """The run ends: remove the record, and stop the platform if a run started it and no
        other live run uses it; what became of the platform (:func:`settle_platform`)."""
        with locked(self.data_dir):
            self.path.unlink(missing_ok=True)
            return settle_platform(self.data_dir, self.doc.get("platform"))


def records(data_dir: Path) -> list[RunRecord]:
    d = runs_dir(data_dir)
    if not d.is_dir():
        return []
    return [r for p in sorted(d.glob("*.json")) if (r := RunRecord.read(data_dir, p)) is not None]


def settle_platform(data_dir: Path, entry: Optional[dict]) -> dict:
    """What happens to a platform a run used, as that run ends (the caller holds the lock):
    ``{"action": ..., "endpoint", "data_dir"}`` with action ``stopped`` (a run started it and no
    live run uses it), ``in use`` (another live run does; the last one stops it), ``left``
    (the user's, or kept), ``gone`` (no longer running) or ``given`` (an endpoint_url)."""
    if not entry or not entry.get("data_dir"):
        return {"action": "given", **(entry or {})}
    d = Path(entry["data_dir"])
    out = {"endpoint": entry.get("endpoint"), "data_dir": str(d)}
    state = local_platform.running(d)
    if state is None or state.get("pid") != entry.get("pid"):
        if entry.get("remove_dir"):
            shutil.rmtree(d, ignore_errors=True)
        return out | {"action": "gone"}
    if not state.get("started_by_run"):
        return out | {"action": "left"}
    users = [r for r in records(data_dir) if r.alive and r.uses(d, state["pid"])]
    if users:
        return out | {"action": "in use", "by": [r.doc["owner"]["pid"] for r in users]}
    local_platform.stop(d)
    if entry.get("remove_dir"):
        shutil.rmtree(d, ignore_errors=True)
    return out | {"action": "stopped"}


def reap(data_dir: Path) -> list[dict]:
    """Stop what runs that are gone left behind (their records' processes, mounts, directories
    and the platforms only they used); one entry per such run: its pid, what was stopped, and
    what became of its platform. Runs that still run are left alone."""
    data_dir = Path(data_dir)
    if not runs_dir(data_dir).is_dir():
        return []
    out = []
    with locked(data_dir):
        for rec in records(data_dir):
            if rec.alive:
                continue
            stopped = rec.stop_owned()
            rec.path.unlink(missing_ok=True)
            platform = settle_platform(data_dir, rec.doc.get("platform"))
            out.append({"run_pid": (rec.doc.get("owner") or {}).get("pid"), "stopped": stopped,
                        "platform": platform})
    return out
