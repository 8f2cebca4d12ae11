"""Cells where the host, not the modelled cloud, is the bottleneck: the capacity probe at a
local campaign's start, the aggregate demand per cell, the flag, and why the flag is at half
the probed capacity."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.analysis.host_bound import (HOST_BOUND_FRACTION, aggregate_demand, busy_seconds, host_bound_cells,
                                          max_overlap)
from faascope.cli import cli
from faascope.fidelity.compare import WITHIN
from faascope.store.reader import ResultsFile
from faascope.store.schema import HOST_BOUND_EVENT, HOST_CAPACITY_EVENT

MiB = 1 << 20
S = 1_000_000_000


def test_busy_time_is_the_union_of_intervals():
    assert busy_seconds([0, S // 2, 3 * S], [S, 2 * S, 4 * S]) == pytest.approx(3.0)
    assert busy_seconds([], []) == 0
    assert max_overlap([0, S // 2, 3 * S], [S, 2 * S, 4 * S]) == 2
    assert max_overlap([0, S], [S, 2 * S]) == 1   # one after the other


def _cell(key, functions, bytes_each, seconds_each, start=0):
    """One burst of ``functions`` concurrent invocations, each moving bytes_each in seconds_each."""
    return [{"cell_key": key, "ok": 1, "warmup": 0, "bytes": bytes_each,
             "agent_workload_start_ns": start + i * 1000, "agent_workload_end_ns": start + i * 1000 + int(seconds_each * S)}
            for i in range(functions)]


def test_a_cell_demanding_more_than_the_probe_is_flagged_one_well_below_is_not():
    # the case: 4 MiB PUTs, 62 ms alone, 336 ms each with 16 at once; the S3 stand-in
    # as this machine's probe measured it (226 MiB/s, 8 clients)
    df = pd.DataFrame(_cell("n=1", 1, 4 * MiB, 0.062) + _cell("n=16", 16, 4 * MiB, 0.336, start=10 * S))
    capacity = {"standins": {"s3": {"bytes_per_s": 226 * MiB}}}
    out = host_bound_cells(df, {"n=1": ["s3"], "n=16": ["s3"]}, capacity)
    d = aggregate_demand(df).set_index("cell_key")
    assert d.loc["n=16", "demand_bytes_per_s"] == pytest.approx(16 * 4 * MiB / 0.336, rel=1e-3)
    assert out["cells_host_bound"] == ["n=16"]
    assert out["cells"]["n=16"]["standins"]["s3"]["fraction"] == pytest.approx(190.5 / 226, rel=1e-3)
    one = out["cells"]["n=1"]["standins"]["s3"]
    assert not one["host_bound"] and one["fraction"] == pytest.approx(4 / 0.062 / 226, rel=1e-3)
    # one function at a time queues behind nobody, however much of the server it uses
    alone = pd.DataFrame(_cell("seq", 1, 4 * MiB, 0.02) + _cell("seq", 1, 4 * MiB, 0.02, start=S))
    seq = host_bound_cells(alone, {"seq": ["s3"]}, capacity)["cells"]["seq"]
    assert seq["concurrency"] == 1 and seq["standins"]["s3"]["fraction"] > 0.5 and not seq["host_bound"]
    # a stand-in the probe did not measure (or a cell that uses none) is not judged
    out = host_bound_cells(df, {"n=1": ["redis"], "n=16": []}, capacity)
    assert out["cells"] == {} and out["cells_host_bound"] == []


def test_cpu_quotas_beyond_the_host_are_said_not_judged_host_bound():
    """Issue #29's case: instances whose quotas add up to more than the host's CPUs at one
    instant are marked oversubscribed (peak vCPU against host CPUs); one after the other, or
    fewer at once, are not; it is a warning, never the host-bound verdict (no CPU use is
    recorded)."""
    def cpu(key, n, quota, start=0, seconds=0.5, stagger=0):
        rows = _cell(key, n, 0, seconds, start)
        for i, r in enumerate(rows):
            r.update(instance_cpu_quota=quota, instance_num_cpu=2)
            r["agent_workload_start_ns"] += i * stagger
            r["agent_workload_end_ns"] += i * stagger
        return rows
    df = pd.DataFrame(cpu("big", 1, 5.8) + cpu("four", 4, 0.5789, start=10 * S)
                      + cpu("three", 3, 0.5789, start=20 * S)
                      + cpu("serial", 4, 0.5789, start=30 * S, stagger=S))
    out = host_bound_cells(df, {k: [] for k in ("big", "four", "three", "serial")}, {})
    assert out["cells_cpu_oversubscribed"] == ["big", "four"]
    assert out["cells"]["four"]["cpu"]["peak_vcpu"] == pytest.approx(4 * 0.5789)
    assert out["cells"]["four"]["cpu"]["host_cpus"] == 2
    assert out["cells_host_bound"] == [] and "three" not in out["cells"] and "serial" not in out["cells"]


def test_half_the_capacity_is_where_queueing_alone_reaches_the_fidelity_tolerance():
    """M/D/1 (fixed-size requests arriving at random), simulated: the mean response at
    utilisation 0.5 is x1.5 the service time (Pollaczek-Khinchine), the fidelity tolerance;
    below it the host's queueing stays under the tolerance."""
    rng = np.random.default_rng(26)
    service, n = 1.0, 400_000

    def mean_response(rho):
        arrivals = np.cumsum(rng.exponential(service / rho, n))
        # Lindley's recursion for the departure of each request from a FIFO server
        done = np.empty(n)
        free = 0.0
        for i, a in enumerate(arrivals):
            free = max(free, a) + service
            done[i] = free
        return float(np.mean(done - arrivals)) / service

    # the docs quote the fraction: they must say the same
    root = Path(__file__).resolve().parents[2]
    for doc in ("docs/storage.md", "docs/analysis.md", "docs/report.md"):
        assert f"{HOST_BOUND_FRACTION * 100:.0f} %" in (root / doc).read_text(), doc
    at_half = mean_response(HOST_BOUND_FRACTION)
    assert at_half == pytest.approx(WITHIN, rel=0.03)
    assert mean_response(0.4) < WITHIN < mean_response(0.6)


@pytest.fixture(scope="module")
def object_campaign(tmp_path_factory, platform_dir):
    d = tmp_path_factory.mktemp("capacity")
    spec = d / "obj.yaml"
    spec.write_text(f"""
name: host-capacity
provider: {{kind: local, settings: {{data_dir: "{platform_dir}"}}}}
function: {{memory_mb: 512, timeout_s: 60}}
workload: {{kind: object, op: put, object_size: 64KiB, count: 4}}
design: {{replications: 2, seed: 3}}
""")
    db = d / "obj.db"
    res = CliRunner().invoke(cli, ["run", str(spec), "--results", str(db), "--no-progress"])
    assert res.exit_code == 0, res.output
    return db


def _events(db: Path, kind: str) -> list[dict]:
    with ResultsFile(db) as rf:
        return [json.loads(e["detail_json"]) for e in rf.campaign_meta()["events"] if e["kind"] == kind]


def test_local_campaign_probes_and_judges_its_cells(object_campaign):
    probe, = _events(object_campaign, HOST_CAPACITY_EVENT)
    s3 = probe["standins"]["s3"]
    assert s3["bytes_per_s"] > 0 and s3["op"] == "PUT", probe
    assert probe["duration_s"] < 15   # seconds, not a benchmark
    assert s3["device"] in probe["devices"]
    bound, = _events(object_campaign, HOST_BOUND_EVENT)
    assert bound["fraction"] == HOST_BOUND_FRACTION
    cell = next(iter(bound["cells"].values()))
    # a few 64 KiB PUTs from one function: far below what the host delivers
    assert cell["standins"]["s3"]["fraction"] < HOST_BOUND_FRACTION and bound["cells_host_bound"] == []


def test_report_shows_the_probe_and_the_verdict(object_campaign, tmp_path):
    out = tmp_path / "report"
    res = CliRunner().invoke(cli, ["report", str(object_campaign), "--out", str(out), "--formats", "none"])
    assert res.exit_code == 0, res.output
    text = (out / "summary.md").read_text()
    assert "Host capacity: where this machine" in text
    assert "| s3 | PUT |" in text
    assert "No cell reached the share of the probed capacity" in text


def test_report_warns_about_a_host_bound_cell(object_campaign, tmp_path):
    """The same file with a host_bound verdict that flags its cell (as a 16-function burst's
    would be): the report tables it as host-bound and warns."""
    import shutil
    import sqlite3

    db = tmp_path / "flagged.db"
    shutil.copyfile(object_campaign, db)
    (bound,) = _events(db, HOST_BOUND_EVENT)
    key = next(iter(bound["cells"]))
    bound["cells"][key]["standins"]["s3"].update(fraction=0.8, host_bound=True)
    bound["cells"][key]["host_bound"] = True
    bound["cells_host_bound"] = [key]
    with sqlite3.connect(db) as c:
        c.execute("UPDATE events SET detail_json = ? WHERE kind = ?", (json.dumps(bound), HOST_BOUND_EVENT))
    out = tmp_path / "report"
    res = CliRunner().invoke(cli, ["report", str(db), "--out", str(out), "--formats", "none"])
    assert res.exit_code == 0, res.output
    text = (out / "summary.md").read_text()
    assert "| **host-bound** |" in text and "80%" in text
    assert f"1 cell(s) demanded {HOST_BOUND_FRACTION:.0%} or more" in text and f"`{key}`" in text
