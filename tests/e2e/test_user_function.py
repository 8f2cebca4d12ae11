"""A user's own function (examples/user-function: a Python handler that writes and reads /tmp and
S3, nothing of faascope's inside) on the REAL local platform's lambda profile, as a user meets
it: the example spec as a campaign (`faascope run` starts the S3 stand-in it names), with a
payload that makes the function fail; `faascope analyze` and `faascope report` on its latency;
`faascope tune --spec` with one row per memory size."""
from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from faascope.cli import cli
from go_binaries import skip_unless_built

pytestmark = [pytest.mark.slow, skip_unless_built(),
              pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root (cgroups, namespaces)")]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOOD = {"key": "t/good.bin", "size": 65536}
BAD = {"key": "t/bad.bin", "size": "not a number"}   # int() raises ValueError in the handler


def example(tmp_path: Path, platform_dir: Path, **factors) -> Path:
    """The example spec, on the test's own platform, its package named absolutely."""
    spec = yaml.safe_load((EXAMPLES / "user-function-local.yaml").read_text())
    spec["provider"]["settings"] = {"data_dir": str(platform_dir)}
    spec["function"]["code"]["path"] = str(EXAMPLES / "user-function")
    spec["factors"].update(factors)
    spec["design"]["replications"] = 2
    out = tmp_path / "spec.yaml"
    out.write_text(yaml.safe_dump(spec))
    return out


def test_example_campaign_records_the_functions_replies_and_the_platforms_figures(tmp_path, platform_dir):
    spec = example(tmp_path, platform_dir, payload=[GOOD, BAD])
    db = tmp_path / "r.db"
    runner = CliRunner()
    r = runner.invoke(cli, ["run", str(spec), "--results", str(db), "--no-progress"])
    # every invocation recorded; the failing payload's cells are said, and the run exits 1
    assert r.exit_code == 1 and "8 of 8 invocations recorded" in r.output, r.output
    assert "0 of 2 invocations succeeded (ValueError)" in r.output, r.output
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        rows = [dict(x) for x in c.execute(
            "SELECT f.*, i.response_json, i.platform_json FROM invocations_flat f "
            "JOIN invocations i ON i.id = f.invocation_id")]
        servers = {s["kind"] for (d,) in c.execute("SELECT detail_json FROM events WHERE kind = 'standins'")
                   for s in json.loads(d).get("servers", [])}
    assert len(rows) == 8 and "s3" in servers
    good = [r for r in rows if json.loads(r["payload"]) == GOOD]
    bad = [r for r in rows if json.loads(r["payload"]) == BAD]
    # what the function returned is stored whole: it wrote and read back /tmp and S3
    for r in good:
        assert r["status"] == "ok", r
        returned = json.loads(r["response_json"])["returned"]
        assert returned["bytes"] == 65536 and returned["key"] == "t/good.bin"
        assert len(returned["sha256"]) == 64 and returned["tmp_s"] > 0 and returned["get_s"] > 0
        # the platform's REPORT figures; latency_seconds is its Duration
        assert r["billed_duration_ms"] >= r["report_duration_ms"] > 0
        assert 0 < r["max_memory_used_mb"] <= r["config_memory_mb"]
        assert r["latency_seconds"] == pytest.approx(r["report_duration_ms"] / 1000)
        assert r["client_latency_seconds"] > r["latency_seconds"]
    # a function error is recorded as one, with the handler's own error type and message
    for r in bad:
        assert r["status"] == "function_error" and r["error_type"] == "ValueError", r
        assert "not a number" in r["error_message"]
    # cold starts (forced at each cell's first invocation) carry an Init Duration, warm ones none
    for r in rows:
        assert (r["init_duration_ms"] is not None) == bool(r["cold"]), r
    assert sum(bool(r["cold"]) for r in rows) >= 4   # 4 cells, each first invocation cold

    res = runner.invoke(cli, ["analyze", str(db), "--response", "latency_seconds",
                              "--factors", "memory", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["n"] == 4 and {c["levels"]["memory"] for c in out["cells"]} == {"128", "1024"}
    assert all(c["mean"] > 0 for c in out["cells"])

    rep = runner.invoke(cli, ["report", str(db), "--out", str(tmp_path / "report"),
                              "--response", "latency_seconds", "--formats", "none"])
    assert rep.exit_code == 0, rep.output
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert "Fastest:" in summary and "workload: kind=invoke" in summary, summary[:3000]


def test_tune_on_the_example_gives_one_row_per_memory_size(tmp_path, platform_dir):
    spec = example(tmp_path, platform_dir)
    r = CliRunner().invoke(cli, ["tune", "--spec", str(spec), "--memory", "128,1024",
                                 "--budget-invocations", "8", "--results", str(tmp_path / "t.db"),
                                 "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    rows = out["sizes"]
    assert sorted(int(x["memory_mb"]) for x in rows) == [128, 1024], out
    # each size has its warm latency (the REPORT Duration) and a price from the billed duration
    assert all(x["n_warm"] >= 1 and x["latency_mean"] > 0 and x["cost_per_million"] > 0
               for x in rows), rows


def test_a_burst_of_the_example_each_member_its_own_reply_and_report(tmp_path, platform_dir):
    """Bursts (load:) of a user's function: the burst driver reads each member's reply as the
    function's (not as a failed agent's) and asks for the log tail, so the REPORT figures and
    latency_seconds are there; {index} in the payload gives every member its own S3 key."""
    spec = example(tmp_path, platform_dir, memory=[256])
    doc = yaml.safe_load(spec.read_text())
    doc["workload"]["payload"] = {"key": "burst/{index}.bin", "size": 4096}
    doc["load"] = {"burst_size": 3, "start": "cold"}
    doc["design"]["replications"] = 1
    del doc["design"]["cold"]          # bursts choose their start with load.start
    spec.write_text(yaml.safe_dump(doc))
    db = tmp_path / "b.db"
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(db), "--no-progress"])
    assert r.exit_code == 0, r.output
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT f.status, f.cold, f.latency_seconds, f.report_duration_ms, "
                         "i.response_json FROM invocations_flat f JOIN invocations i "
                         "ON i.id = f.invocation_id WHERE f.warmup = 0").fetchall()
    assert len(rows) == 3, rows
    keys = set()
    for status, cold, lat, dur, resp in rows:
        assert status == "ok" and cold == 1, (status, cold, resp)
        assert lat == pytest.approx(dur / 1000) and lat > 0
        keys.add(json.loads(resp)["returned"]["key"])
    assert keys == {"burst/0.bin", "burst/1.bin", "burst/2.bin"}
