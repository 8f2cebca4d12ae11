"""The shared directory (EFS's stand-in) keeps what functions wrote when the platform is killed,
and `faascope cleanup --provider local` removes what the sharedfs workload left in it.

Issue #29: "the shared directory is copied back at platform stop, so a platform killed outright
loses that run's writes; shared-FS campaigns leave their files (512 MB seen) that cleanup does
not remove". The directory is served through the metered FUSE file system over itself, so there
is nothing to copy back: a write a function finished is in the host directory.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import boto3
import pytest
from botocore.config import Config

from faascope.providers import cleanup, local_platform

from .conftest import needs_sandboxes

pytestmark = pytest.mark.skipif(not needs_sandboxes(), reason="real sandboxes need root and cgroups")

ROLE = "arn:aws:iam::000000000000:role/faascope"


def _lambda(endpoint: str):
    return boto3.client("lambda", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="local", aws_secret_access_key="local",
                        config=Config(retries={"max_attempts": 1}, read_timeout=60))


def test_killed_platform_keeps_shared_writes_and_cleanup_removes_the_workloads_files(tmp_path, agent_zip):
    shared, data = tmp_path / "shared", tmp_path / "platform"
    state = local_platform.start(profile="lambda", data_dir=data, port=0, shared_dir=shared)
    killed = False
    try:
        assert (local_platform.health(state["endpoint"]) or {}).get("shared_dir") == str(shared)
        lam = _lambda(state["endpoint"])
        lam.create_function(FunctionName="efs", Runtime="provided.al2023", Role=ROLE, Handler="bootstrap",
                            Code={"ZipFile": agent_zip}, MemorySize=512, Timeout=60)
        lam.get_waiter("function_active_v2").wait(FunctionName="efs")
        for index in (0, 1):
            out = lam.invoke(FunctionName="efs", Payload=json.dumps({"workload": {
                "kind": "sharedfs", "op": "write", "mode": "private", "index": index,
                "file_size": 2 * 2**20, "io_size": 2**20}}))
            body = json.loads(out["Payload"].read())
            assert "FunctionError" not in out and body["ok"], body
        os.kill(state["pid"], signal.SIGKILL)
        killed = True
        time.sleep(0.5)
        subprocess.run(["umount", "-l", str(shared)], capture_output=True)  # the dead FUSE mount, if any
        names = cleanup.shared_file_name()
        written = {p.name: p.stat().st_size for p in shared.iterdir()}
        assert written == {f"{names}.0": 2 * 2**20, f"{names}.1": 2 * 2**20}, written
    finally:
        local_platform.stop(data)
    # a platform on the same directories again; the user's own file stays
    (shared / "mine.dat").write_bytes(b"x" * 10)
    state = local_platform.start(profile="lambda", data_dir=data, port=0, shared_dir=shared)
    try:
        dry = cleanup.run_cleanup("local", dry_run=True, data_dir=data)
        assert sorted(r["name"] for r in dry["resources"] if r["kind"] == "shared-file") == \
            [str(shared / f"{names}.0"), str(shared / f"{names}.1")]
        assert len(list(shared.iterdir())) == 3, "a dry run removes nothing"
        cleanup.run_cleanup("local", data_dir=data)
        assert [p.name for p in shared.iterdir()] == ["mine.dat"]
    finally:
        local_platform.stop(data)
    assert killed
