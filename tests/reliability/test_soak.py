"""The soak harness (bench/soak.py) in a short run: sustained mixed invocations, timeouts and OOM
kills must leave no process, cgroup, mount, loop device, sandbox directory or memory behind."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes with cgroups need root")
def test_short_soak_leaves_nothing_behind(tmp_path):
    out = tmp_path / "soak.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "soak.py"), "--seconds", "20", "--out", str(out)],
                          capture_output=True, text=True, timeout=180)
    result = json.loads(out.read_text())
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert result["grew"] == {} and result["cgroups_left_after_stop"] == 0
    assert result["counts"].get("ok", 0) > 100
    assert result["counts"].get("timeout", 0) > 0 and result["counts"].get("oom", 0) > 0
    after = result["after"]
    assert after["sandbox_processes"] == 0 and after["loop_devices"] == 0 and after["sandbox_dirs"] == 0
    assert after["host_disk_devices"] <= 1  # the platform's one host disk (hostdisk.go)
    assert after["spare_sandboxes"] <= 2  # the platform's standing spares (--spare-sandboxes), no more
