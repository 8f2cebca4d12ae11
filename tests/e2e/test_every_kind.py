"""Every workload kind as a designed campaign on the REAL local platform, as a user would meet it:
`faascope plan`, `faascope run` (with the stand-ins the kind needs started by run itself),
stopped after its first record and continued with `--resume`, then `faascope analyze` on the
kind's own measure and `faascope report`.

Each campaign is two cells (memory 256 and 512 MB) × two replications, randomised: small enough
to run in seconds, large enough that the analysis has a residual (two rows per cell).
"""
from __future__ import annotations

import json
import os
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

pytestmark = [pytest.mark.slow, skip_unless_built(),
              pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root (cgroups, namespaces)")]

#: kind -> (workload, the measure to analyse, a check of that measure's values)
KINDS = {
    "noop": ("{kind: noop}", "latency_seconds", lambda v: v >= 0),
    "spin": ("{kind: spin, iterations: 200000}", "compute_s", lambda v: v > 0),
    "fileio": ("{kind: fileio, op: write, file_size: 1MiB, io_size: 64KiB, fsync: end}",
               "write_s", lambda v: v > 0),
    "object": ("{kind: object, op: put, object_size: 4KiB, count: 5}", "request_p50_s",
               lambda v: v > 0),
    "kv-redis": ("{kind: kv, backend: redis, op: put, item_size: 1KiB, count: 5}",
                 "request_p50_s", lambda v: v > 0),
    "kv-dynamodb": ("{kind: kv, backend: dynamodb, op: put, item_size: 1KiB, count: 3}",
                    "request_p50_s", lambda v: v > 0),
    "sharedfs": ("{kind: sharedfs, op: write, file_size: 1MiB, io_size: 256KiB, fsync: end}",
                 "write_s", lambda v: v > 0),
    "network": ("{kind: network, direction: in, bytes: 4MiB, duration_ms: 2000}",
                "net_in_bytes_per_s", lambda v: v > 0),
    "transfer": ("{kind: transfer, via: object, payload_size: 16KiB, chain_length: 2}",
                 "chain_s", lambda v: v > 0),
    "app": ("{kind: app, shape: sort, storage: object, input_size: 100000, output_size: 100000}",
            "io_s", lambda v: v > 0),
}


def _spec(tmp_path: Path, platform_dir: Path, kind: str, workload: str) -> Path:
    spec = tmp_path / f"{kind}.yaml"
    spec.write_text(f"""
name: every-kind-{kind}
provider:
  kind: local
  settings: {{data_dir: "{platform_dir}"}}
function: {{memory_mb: 256, timeout_s: 60}}
workload: {workload}
factors:
  memory: [256, 512]
design: {{replications: 2, seed: 17}}
""")
    return spec


def _records(db: Path) -> list[tuple]:
    try:
        with sqlite3.connect(db) as c:
            return c.execute("SELECT cell_key, replication, kind FROM invocations").fetchall()
    except sqlite3.OperationalError:  # not created yet
        return []


def _run_stopped_after_first_record(spec: Path, db: Path) -> None:
    """`faascope run` in its own process, sent SIGTERM once the first record is durable (it
    finishes the invocation in flight, records it and stops, as Ctrl-C does)."""
    proc = subprocess.Popen([sys.executable, "-m", "faascope", "run", str(spec), "--results",
                             str(db), "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not _records(db):
        time.sleep(0.05)
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    # stopped early: exit 1 with the resume command; or it had already finished: exit 0
    assert proc.returncode in (0, 1), out
    if proc.returncode == 1:
        assert "--resume" in out, out


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_kind_plans_runs_resumes_analyses_and_reports(tmp_path, platform_dir, kind):
    workload, measure, sane = KINDS[kind]
    spec = _spec(tmp_path, platform_dir, kind, workload)
    runner = CliRunner()

    plan = runner.invoke(cli, ["plan", str(spec), "--format", "json"])
    assert plan.exit_code == 0, plan.output
    assert json.loads(plan.output)["invocations"] == 4

    db = tmp_path / "r.db"
    _run_stopped_after_first_record(spec, db)
    assert 1 <= len(_records(db)) <= 4
    r = runner.invoke(cli, ["run", str(spec), "--results", str(db), "--resume", "--no-progress"])
    assert r.exit_code == 0, r.output
    recs = _records(db)
    assert len(recs) == 4 and len(set(recs)) == 4       # nothing lost, nothing duplicated
    with sqlite3.connect(db) as c:
        statuses = dict(c.execute("SELECT status, count(*) FROM invocations GROUP BY status"))
        events = [json.loads(d) for (d,) in c.execute(
            "SELECT detail_json FROM events WHERE kind = 'standins'")]
    assert statuses == {"ok": 4}, statuses

    # the stand-ins the kind needs were started by run and recorded with their versions
    servers = {s["kind"] for e in events for s in e.get("servers", [])}
    expect = {"object": {"s3"}, "kv-redis": {"redis"}, "kv-dynamodb": {"dynamodb"},
              "network": {"sink"}, "transfer": {"s3"}, "app": {"s3"},
              "sharedfs": {"shared"}}.get(kind, set())
    assert servers >= expect, events
    # a server says which version served (the shared directory is a directory, not a server)
    assert all(s.get("version") for e in events for s in e.get("servers", [])
               if s["kind"] != "shared"), events

    res = runner.invoke(cli, ["analyze", str(db), "--response", measure, "--factors", "memory",
                              "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["n"] == 4 and {c["levels"]["memory"] for c in out["cells"]} == {"256", "512"}
    assert all(sane(c["mean"]) for c in out["cells"]), out["cells"]

    rep = runner.invoke(cli, ["report", str(db), "--out", str(tmp_path / "report"),
                              "--response", measure, "--formats", "none"])
    assert rep.exit_code == 0, rep.output
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert measure in summary
    if expect - {"shared"}:  # the overview names the servers that stood in, with versions
        line = next(ln for ln in summary.splitlines() if ln.startswith("- stand-ins:"))
        assert all(k in line for k in expect), line
