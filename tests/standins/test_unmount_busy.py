"""A stand-in's tmpfs that is still busy when its run stops is detached, not left mounted.

Eight 4 GiB ``faascope-s3`` mounts were found left behind by fidelity runs ("umount: target is
busy": a server just stopped may still hold a file open). ``unmount`` retries, then detaches
lazily, so the mount leaves the tree at once and is freed when its last user goes.
"""
from __future__ import annotations

import os
import subprocess

import pytest

from faascope.providers import leftovers

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")


def test_a_busy_tmpfs_is_detached(tmp_path, monkeypatch):
    monkeypatch.setattr(leftovers, "UNMOUNT_RETRY_S", 0.3)
    mnt = tmp_path / "busy"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "faascope-test", str(mnt)], check=True)
    holder = subprocess.Popen(["sleep", "60"], cwd=mnt)  # its working directory keeps the mount busy
    try:
        assert subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0, "not busy"
        leftovers.unmount(str(mnt))
        assert not os.path.ismount(mnt)
    finally:
        holder.kill()
        holder.wait()
        if os.path.ismount(mnt):
            subprocess.run(["umount", "-l", str(mnt)])
