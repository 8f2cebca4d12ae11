"""Faults during a campaign on the real local platform: the platform killed and restarted mid-run.
Each must end in recorded errors or a clean resume: never lost or duplicated records, never a
hung run."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faascope.providers import local_platform

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="real sandboxes need root")]

ROOT = Path(__file__).resolve().parents[2]


def n_records(db: Path) -> int:
    try:
        with sqlite3.connect(db) as c:
            return c.execute("SELECT count(*) FROM invocations").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_platform_killed_mid_campaign_then_restarted_and_resumed(tmp_path):
    pdir = tmp_path / "platform"
    local_platform.start(data_dir=pdir, port=0)
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: fault-platform
provider:
  kind: local
  settings: {{data_dir: "{pdir}", read_timeout_s: 20}}
workload: {{kind: spin, iterations: 3000000}}
factors: {{memory: [128, 256]}}
design: {{replications: 30, seed: 3}}
""")
    db = tmp_path / "r.db"
    cmd = [sys.executable, "-m", "faascope", "run", str(spec), "--results", str(db), "--no-progress"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 60
        while n_records(db) < 10 and time.time() < deadline:
            time.sleep(0.01)
        state = local_platform.running(pdir)
        os.kill(state["pid"], 9)  # the platform dies with invocations in flight
        _, err = proc.communicate(timeout=120)  # the run must end by itself, not hang
    finally:
        if proc.poll() is None:
            proc.kill()
    before = n_records(db)
    assert 10 <= before <= 60
    # The platform comes back (cleaning the dead one's sandboxes); the campaign resumes.
    local_platform.start(data_dir=pdir, port=0)
    try:
        r = subprocess.run(cmd + ["--resume"], env=env, capture_output=True, timeout=180)
    finally:
        local_platform.stop(pdir)
    with sqlite3.connect(db) as c:
        got = c.execute("SELECT cell_key, replication, kind FROM invocations ORDER BY order_index").fetchall()
        want = c.execute("SELECT cell_key, replication, kind FROM planned_runs ORDER BY order_index").fetchall()
        statuses = dict(c.execute("SELECT status, count(*) FROM invocations GROUP BY status").fetchall())
    assert len(got) == len(set(got)), "duplicated records"
    assert got == want, f"records {len(got)} vs planned {len(want)}; exit {r.returncode}: {r.stderr.decode()[-800:]}"
    # The invocation in flight when the platform died may have run: it is recorded as an error,
    # not retried away, and the run stops there (may_have_run_stop; or, killed between calls,
    # at the next call that cannot connect: endpoint_unreachable) instead of burning the plan
    # into errors; it says why in its events, and --resume ran the rest.
    assert sum(statuses.values()) == 60 and statuses.get("ok", 0) >= 59, statuses
    with sqlite3.connect(db) as c:
        kinds = [k for (k,) in c.execute("SELECT kind FROM events")]
    assert ("endpoint_unreachable" in kinds or "may_have_run_stop" in kinds) \
        and "resumed" in kinds, kinds
    assert not list((pdir / "platform" / "sandboxes").glob("*")), "sandboxes left behind"
