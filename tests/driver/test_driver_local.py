"""End to end on the REAL local platform (its own data directory, stopped afterwards): the same
boto3 code path as AWS, real sandboxes, real agent."""
from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from faascope.cli import cli
from go_binaries import skip_unless_built

pytestmark = pytest.mark.slow


needs_platform = skip_unless_built()


@pytest.fixture(scope="module")
def platform_dir(tmp_path_factory):
    from faascope.providers import local_platform

    d = tmp_path_factory.mktemp("platform")
    yield d
    local_platform.stop(d)


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "spec.yaml"
    p.write_text(text)
    return p


@needs_platform
def test_local_platform_campaign_end_to_end(tmp_path, platform_dir):
    spec = write(tmp_path, f"""
name: e2e-local
provider:
  kind: local
  settings: {{data_dir: "{platform_dir}"}}
function: {{memory_mb: 128}}
workload: {{kind: fileio, op: write, file_size: 64KiB, io_size: 4KiB}}
factors:
  profile: [lambda, gcf]
  op: [read, write]
design: {{replications: 2, warmup: 1, cold: true, seed: 5}}
""")
    db = tmp_path / "r.db"
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(db), "--no-progress"])
    assert r.exit_code == 0, r.output
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        rows = [dict(x) for x in c.execute("SELECT * FROM invocations_flat")]
        resp = [json.loads(x[0]) for x in c.execute("SELECT response_json FROM invocations")]
    assert len(rows) == 4 * 3 and all(x["ok"] == 1 for x in rows), rows
    # forced cold before each cell's first (warm-up) invocation, warm afterwards
    assert all(x["cold"] == 1 for x in rows if x["warmup"])
    assert all(x["cold"] == 0 for x in rows if not x["warmup"])
    assert all(x["latency_seconds"] > 0 and x["bytes"] == 65536 for x in rows)
    assert all(x["client_latency_seconds"] >= x["latency_seconds"] for x in rows)
    assert all(x["client_headers_seconds"] <= x["client_latency_seconds"] for x in rows)
    # the calibrated profiles' modelled front end (18 ms less the platform's own measured path,
    # agent/platform/frontend.go) is in every client latency, and says so
    assert all(0 <= x["platform_front_end_ms"] < 18.0 for x in rows), rows
    assert all(x["client_latency_seconds"] >= x["platform_front_end_ms"] / 1000 + x["latency_seconds"]
               for x in rows)
    # the profile tag reached the platform: different sandboxes per profile
    by_profile = {}
    for x, rsp in zip(rows, resp):
        by_profile.setdefault(x["profile"], set()).add(rsp["instance"]["cpu_quota"])
    assert set(by_profile) == {"lambda", "gcf"}
    if os.geteuid() == 0 and all(None not in v for v in by_profile.values()):
        assert by_profile["lambda"] != by_profile["gcf"]  # 128/1769 vs 0.083 vCPU
    # functions are deleted at the end
    from faascope.providers.local import LocalProvider
    p = LocalProvider(data_dir=str(platform_dir))
    names = [f["FunctionName"] for f in p.control.list_functions()["Functions"]]
    assert not [n for n in names if "e2e-local" in n]
    # export
    out = tmp_path / "o.csv"
    r = CliRunner().invoke(cli, ["export", str(db), "--format", "csv", "--out", str(out)])
    assert r.exit_code == 0 and len(out.read_text().splitlines()) == 13


@needs_platform
def test_sigkill_and_resume_on_the_local_platform(tmp_path, platform_dir):
    spec = write(tmp_path, f"""
name: e2e-kill
provider:
  kind: local
  settings: {{data_dir: "{platform_dir}"}}
workload: {{kind: noop}}
factors: {{memory: [128, 256]}}
design: {{replications: 40, seed: 9}}
""")
    db = tmp_path / "r.db"
    rng = random.Random(7)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))
    cmd = [sys.executable, "-m", "faascope", "run", str(spec), "--results", str(db), "--no-progress"]
    counts = []

    def n_records() -> int:
        try:
            with sqlite3.connect(db) as c:
                return c.execute("SELECT count(*) FROM invocations").fetchone()[0]
        except sqlite3.OperationalError:
            return 0

    for i in range(3):
        proc = subprocess.Popen(cmd + (["--resume"] if i else []), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        target = n_records() + rng.randint(3, 15)
        deadline = time.time() + 60
        while n_records() < target and proc.poll() is None and time.time() < deadline:
            time.sleep(0.002)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        counts.append(n_records())
    r = subprocess.run(cmd + ["--resume"], env=env, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    with sqlite3.connect(db) as c:
        got = c.execute("SELECT cell_key, replication, kind FROM invocations ORDER BY order_index").fetchall()
        want = c.execute("SELECT cell_key, replication, kind FROM planned_runs ORDER BY order_index").fetchall()
        assert c.execute("SELECT count(*) FROM invocations WHERE status != 'ok'").fetchone()[0] == 0
    assert got == want and len(got) == 80 and len(set(got)) == 80
    assert 0 < counts[0] < counts[-1] < 80, counts
