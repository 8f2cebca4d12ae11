"""A platform killed without a chance to stop takes its sandboxes with it.

Issue #29: after a SIGKILL of the platform its sandbox (and a background child) kept running, and
the next platform handed the same uid to a new sandbox. The sandbox's pid 1 (the runtime, exec'd
by the sandbox's init after it dropped to the sandbox's uid) now carries the parent-death signal,
which the kernel had cleared with the credentials; a warm instance idle at the time is frozen,
and cgroup v1's freezer holds its SIGKILL until it is thawed, so the next platform to start (any
data directory) thaws and kills the groups of every platform whose lock nobody holds before it
hands out a uid (agent/platform/platformlock.go).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import boto3
import pytest
from botocore.config import Config

from faascope.providers import local_platform

from .conftest import needs_sandboxes

pytestmark = pytest.mark.skipif(not needs_sandboxes(), reason="real sandboxes need root and cgroups")

ROLE = "arn:aws:iam::000000000000:role/faascope"
SANDBOX_UID_BASE = 1051  # agent/platform/sandbox.go, SandboxUID


def _descendants(root: int) -> dict[int, int]:
    """pid -> real uid of every process descended from ``root``."""
    parent, uid = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        parent[int(entry.name)] = int(fields["PPid"].split()[0])
        uid[int(entry.name)] = int(fields["Uid"].split()[0])
    out = {}
    for pid in parent:
        p = pid
        while p > 1:
            p = parent.get(p, 0)
            if p == root:
                out[pid] = uid[pid]
                break
    return out


def _alive(pid: int) -> bool:
    """Running (a zombie has ended: only its parent's wait is missing)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


CGROUPS = Path("/sys/fs/cgroup")


def _platform_groups() -> set[Path]:
    """Every platform's group in every cgroup v1 hierarchy (cgroup v2: the one tree)."""
    return {d for d in CGROUPS.glob("*/faascope/*") if d.is_dir()} | {
        d for d in CGROUPS.glob("faascope/*") if d.is_dir()}


def test_sandboxes_end_with_a_killed_platform(tmp_path, agent_zip):
    data = tmp_path / "platform"
    groups_before = _platform_groups()
    state = local_platform.start(profile="lambda", data_dir=data, port=0, keep_alive="5m")
    try:
        lam = boto3.client("lambda", endpoint_url=state["endpoint"], region_name="us-east-1",
                           aws_access_key_id="local", aws_secret_access_key="local",
                           config=Config(retries={"max_attempts": 1}, read_timeout=60))
        lam.create_function(FunctionName="orphan", Runtime="provided.al2023", Role=ROLE, Handler="bootstrap",
                            Code={"ZipFile": agent_zip}, MemorySize=256, Timeout=30)
        lam.get_waiter("function_active_v2").wait(FunctionName="orphan")
        out = lam.invoke(FunctionName="orphan", Payload=json.dumps({"workload": {"kind": "noop"}}))
        assert "FunctionError" not in out, out["Payload"].read()
        sandboxed = {pid: uid for pid, uid in _descendants(state["pid"]).items() if uid >= SANDBOX_UID_BASE}
        assert sandboxed, "the warm instance's runtime runs as a sandbox uid under the platform"
        everything = _descendants(state["pid"])  # spares' inits too
        killed_groups = _platform_groups() - groups_before
        assert any(d.parent.parent.name == "blkio" for d in killed_groups) or not (
            CGROUPS / "blkio").is_dir(), f"the platform's v1 blkio group: {sorted(killed_groups)}"
        os.kill(state["pid"], signal.SIGKILL)
        # what was running dies with it; a frozen idle instance at the next platform's start
        other = tmp_path / "other"
        local_platform.start(profile="lambda", data_dir=other, port=0, keep_alive="5m")
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and any(_alive(p) for p in everything):
                time.sleep(0.05)
            left = {p: everything[p] for p in everything if _alive(p)}
            assert not left, f"sandbox processes (pid: uid) outlived their platform: {left}"
            # and its groups went with them, its v1 blkio group too (which has no sandbox groups
            # under it, so a sweep of the others' hierarchies never saw it)
            # (a platform killed just before the next one started may still hold its lock while
            # the kernel tears it down: the next one sweeps again 1, 4 and 14 s after its start)
            while time.monotonic() < deadline + 5 and any(d.exists() for d in killed_groups):
                time.sleep(0.05)
            stale = sorted(str(d) for d in killed_groups if d.exists())
            assert not stale, f"the killed platform's cgroups outlived it: {stale}"
        finally:
            local_platform.stop(other)
    finally:
        local_platform.stop(data)
        # the killed platform could not unmount its host disk (a platform starting on this data
        # directory would): leave no mount in pytest's temporary directory
        for mount in (m for m in data.rglob("*") if m.is_dir() and os.path.ismount(m)):
            subprocess.run(["umount", "-l", str(mount)], check=False)
