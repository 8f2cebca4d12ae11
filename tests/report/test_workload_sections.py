"""The report's sections per workload kind (network, transfers, phases, storage requests), the
burst-size curves of the concurrency section and the staggering heatmaps' significance marks:
their statistics on known input, and each section appearing exactly when its data is there."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from faascope.analysis.concurrency import bandwidth_curves, heatmap_panels, load_bursts, scaling_curves
from faascope.analysis.improvement import MIN_BURSTS_PER_SIDE, ci_excludes_zero, improvement
from faascope.analysis.network import cell_series, fit_cells, fitted_rate
from faascope.analysis.intervals import MIN_N, too_few
from faascope.analysis.per_cell import mean_ci
from faascope.analysis.phases import has_phases, phase_means
from faascope.analysis.storage_requests import has_storage_requests, request_counts
from faascope.analysis.transfers import hop_segments, typical_chains
from faascope.report.build import build_report
from faascope.report.sections.concurrency import bandwidth_fig, bandwidth_sentences
from faascope.report.stagger_heatmaps import SIGNIFICANT, heatmaps_plot
from faascope.store.reader import ResultsFile

DATA = Path(__file__).resolve().parent / "data"
MiB = 1 << 20


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copyfile(DATA / name, dst)
    return dst


def _flat(path: Path) -> pd.DataFrame:
    with ResultsFile(path) as rf:
        df = rf.flat(include_warmups=False)
    return df[df["ok"] == 1]


# ------------------------------------------------------------------------------------ statistics
def test_mean_ci_is_students_t():
    m, lo, hi, n = mean_ci([1.0, 2.0, 3.0, np.nan])
    assert (m, n) == (2.0, 3)
    assert lo == pytest.approx(2 - 4.302653 / np.sqrt(3)) and hi == pytest.approx(2 + 4.302653 / np.sqrt(3))
    assert mean_ci([5.0])[1:3] == (None, None)


def _bucket_samples(rng, budget=16 * MiB, peak=256 * MiB, refill=16 * MiB, dt=0.02, n=150):
    """Bytes per interval through a token bucket, with the lumpy arrival of a real burst."""
    t = np.arange(n + 1) * dt
    cum = np.minimum(peak * t, budget + refill * t)
    inc = np.diff(cum)
    return np.clip(inc * rng.normal(1, 0.05, n), 0, None)


def test_network_fit_recovers_the_bucket_per_cell():
    rng = np.random.default_rng(3)
    rows, flat = [], []
    for inv, cell in enumerate(["a", "a", "a", "b", "b", "b"], start=1):
        budget = 16 * MiB if cell == "a" else 32 * MiB
        for i, v in enumerate(_bucket_samples(rng, budget=budget)):
            rows.append({"invocation_id": inv, "direction": "in", "sample": i, "interval_s": 0.02, "bytes": v})
        # each a cold start: a new sandbox's bucket, full (faascope.analysis.network)
        flat.append({"invocation_id": inv, "cell_key": f"mem={cell}", "mem": cell, "cold": 1})
    samples, df = pd.DataFrame(rows), pd.DataFrame(flat)
    series = cell_series(samples, df, ["mem"])
    assert set(series["invocations"]) == {3}
    fits = fit_cells(series, samples, df, ["mem"]).set_index("cell_key")
    for cell, budget in (("mem=a", 16 * MiB), ("mem=b", 32 * MiB)):
        f = fits.loc[cell, "fit"]
        assert f.knee
        assert f.budget_bytes == pytest.approx(budget, rel=0.1)
        assert f.refill_bytes_per_s == pytest.approx(16 * MiB, rel=0.05)
        lo, hi = fits.loc[cell, "refill_bytes_per_s_ci"]
        assert lo <= f.refill_bytes_per_s <= hi
        assert fits.loc[cell, "budget_bytes_per_invocation"] is not None
        x, y = fitted_rate(f, 3.0)
        assert x[-1] == 3.0 and y[0] == f.burst_bytes_per_s and y[-1] == f.refill_bytes_per_s


def test_transfer_typical_chain_and_its_segments(tmp_path):
    db = _copy(tmp_path, "transfer-chain.db")
    df = _flat(db)
    with ResultsFile(db) as rf:
        hops = rf.hops()
    typical = typical_chains(df, ["via", "payload_size", "chain_length"])
    assert len(typical) == df["cell_key"].nunique() == 12
    for key, inv in typical.items():
        cell = df[df["cell_key"] == key]
        chosen = float(cell.loc[cell["invocation_id"] == inv, "chain_s"].iloc[0])
        assert chosen == sorted(cell["chain_s"])[(len(cell) - 1) // 2]   # the (lower) median chain
        segs = hop_segments(hops, inv)
        length = int(cell["chain_length"].iloc[0])
        assert sorted(segs["hop"].unique()) == list(range(length))
        assert (segs["end_s"] >= segs["start_s"]).all() and segs["start_s"].min() == 0
        # every hop after the first was invoked by the one before it, and the last hop waits for nobody
        assert set(segs[segs["segment"] == "invoked"]["hop"]) == set(range(1, length))
        assert length - 1 not in set(segs[segs["segment"] == "waiting"]["hop"])
        assert segs["end_s"].max() <= chosen + 1e-6


def test_phase_means_add_up_and_need_two_phases(tmp_path):
    df = _flat(_copy(tmp_path, "app-phases.db"))
    assert has_phases(df)
    assert not has_phases(df.assign(read_s=None, compute_s=None))
    m = phase_means(df, ["storage"])
    assert set(m["measure"]) == {"read_s", "compute_s", "write_s"}
    for ck, g in m.groupby("cell_key"):
        cell = df[df["cell_key"] == ck]
        assert g["mean"].sum() == pytest.approx((cell["read_s"] + cell["compute_s"] + cell["write_s"]).mean())
        # a few invocations per cell: no interval, and why (faascope.analysis.intervals)
        need = MIN_N["boot-t-log"]
        assert (g["n"] < need).all() and g["ci_low"].isna().all()
        assert (g["ci_why"] == [too_few(int(n), need) for n in g["n"]]).all()


def test_storage_request_counts_are_summed(tmp_path):
    df = _flat(_copy(tmp_path, "storage-object.db"))
    assert has_storage_requests(df)
    c = request_counts(df, ["memory", "object_size", "op"])
    assert c["invocations"].sum() == len(df)
    assert c["requests_ok"].sum() == df["requests_ok"].sum() == 50 * len(df)


def test_burst_size_curves_show_the_colocation_effect(tmp_path):
    data = load_bursts(_copy(tmp_path, "colocation.db"))
    curves = scaling_curves(data)
    assert sorted(curves["burst_size"].unique()) == [1, 2, 4, 8]
    assert {f"{m}_{s}" for m in ("wait_s", "run_s", "service_s") for s in ("p50", "p95", "max")} == set(curves["column"])
    bw = bandwidth_curves(data).pivot(index="burst_size", columns="column", values="mean")
    # one writer alone: per-function = aggregate; eight at once: each gets less than the aggregate
    assert bw.loc[1, "per_function_bytes_per_s"] == pytest.approx(bw.loc[1, "aggregate_bytes_per_s"], rel=0.05)
    assert bw.loc[8, "per_function_bytes_per_s"] < bw.loc[1, "per_function_bytes_per_s"]
    assert bw.loc[8, "aggregate_bytes_per_s"] > 2 * bw.loc[8, "per_function_bytes_per_s"]


def test_colocation_fixture_reproduces_kim_and_lee():
    """The fixture was recorded on the lambda profile with the host /tmp budget (hostdisk.go):
    per-function bandwidth falls about as 1/n and the aggregate stays flat, Kim & Lee's finding
    (before the budget: aggregate x8 from 1 to 8 writers)."""
    bw = bandwidth_curves(load_bursts(DATA / "colocation.db")).pivot(
        index="burst_size", columns="column", values="mean")
    per, agg = bw["per_function_bytes_per_s"], bw["aggregate_bytes_per_s"]
    assert per[8] / per[1] < 0.25
    assert 1 / 1.3 < agg[8] / agg[1] < 1.3


def test_colocation_sentence_says_what_the_table_shows(tmp_path):
    res = build_report(_copy(tmp_path, "colocation.db"), tmp_path / "out", formats=(), n_boot=200)
    text = res.summary.read_text()
    bw = bandwidth_curves(load_bursts(DATA / "colocation.db")).pivot(
        index="burst_size", columns="column", values="mean")
    (line,) = [x for x in text.splitlines() if "functions at once" in x]
    per = bw["per_function_bytes_per_s"]
    agg = bw["aggregate_bytes_per_s"]
    assert line.startswith("from 1 to 8 functions at once")
    assert f"(×{per[8] / per[1]:.2f})" in line and f"(×{agg[8] / agg[1]:.2f})" in line
    assert f"{agg[8] / 2**20:.4g} MiB/s" in line
    # three bursts per size: no intervals, so no direction is claimed, and the caption claims none
    assert line.count("no direction claimed") == 2
    assert "falls" not in bandwidth_fig(bandwidth_curves(load_bursts(DATA / "colocation.db"))).caption


def test_bandwidth_direction_needs_non_overlapping_intervals():
    def rows(col, a, b):
        return [{"burst_size": 1, "column": col, "mean": a[0], "ci_low": a[1], "ci_high": a[2], "ci_why": None,
                 "n_bursts": 200},
                {"burst_size": 4, "column": col, "mean": b[0], "ci_low": b[1], "ci_high": b[2], "ci_why": None,
                 "n_bursts": 200}]
    MiB = 2**20
    curves = pd.DataFrame(rows("per_function_bytes_per_s", (32 * MiB, 31 * MiB, 33 * MiB), (8 * MiB, 7 * MiB, 9 * MiB))
                          + rows("aggregate_bytes_per_s", (32 * MiB, 31 * MiB, 33 * MiB), (33 * MiB, 32 * MiB, 34 * MiB)))
    (line,) = bandwidth_sentences(curves, "95%")
    assert "per-function bandwidth 32 → 8 MiB/s (×0.25): fell" in line
    assert "aggregate bandwidth 32 → 33 MiB/s (×1.03): no change beyond the intervals" in line
    # the old platform's shape: per-function flat, aggregate x4
    curves = pd.DataFrame(rows("per_function_bytes_per_s", (32 * MiB, 31 * MiB, 33 * MiB), (32 * MiB, 31 * MiB, 33 * MiB))
                          + rows("aggregate_bytes_per_s", (32 * MiB, 31 * MiB, 33 * MiB), (128 * MiB, 120 * MiB, 136 * MiB)))
    (line,) = bandwidth_sentences(curves.assign(memory=2048), "95%")
    assert line.startswith("memory=2048: from 1 to 4 functions at once")
    assert "per-function bandwidth 32 → 32 MiB/s (×1.00): no change" in line and "(×4.00): rose" in line


def test_stagger_heatmap_marks_cells_whose_interval_excludes_zero():
    assert ci_excludes_zero(5.0, 20.0) and ci_excludes_zero(-30.0, -1.0)
    assert not ci_excludes_zero(-5.0, 20.0) and not ci_excludes_zero(None, None)
    imp = pd.DataFrame([
        {"batch_size": 4, "delay": 0.25, "metric": "write_s", "stat": "p50", "improvement_pct": 40.0,
         "ci_low": 10.0, "ci_high": 60.0, "n_bursts": 3, "n_baseline": 3},
        {"batch_size": 8, "delay": 0.25, "metric": "write_s", "stat": "p50", "improvement_pct": 5.0,
         "ci_low": -20.0, "ci_high": 30.0, "n_bursts": 3, "n_baseline": 3}])
    (panel,) = heatmap_panels(imp)
    assert panel["significant"].tolist() == [[True], [False]]
    text = heatmaps_plot([panel]).panels[0].marks[0].text
    assert text == [[f"+40%{SIGNIFICANT}"], ["+5%"]]


# ------------------------------------------------------------------------------------ the report
SECTION_FIGURES = {
    "transfer-chain.db": {"transfer_timelines", "transfer_chain_times"},
    "network-unshaped.db": {"network_throughput_over_time"},
    "storage-object.db": {"storage_request_latency"},
    "app-phases.db": {"phases_read_compute_write"},
    "colocation.db": {"burst_scaling_wait_run_service", "burst_bandwidth_per_function_and_aggregate"},
}
ALL_SECTION_FIGURES = set().union(*SECTION_FIGURES.values())


@pytest.mark.parametrize("name", sorted(SECTION_FIGURES))
def test_each_section_appears_only_with_its_data(tmp_path, name):
    res = build_report(_copy(tmp_path, name), tmp_path / "out", formats=(), n_boot=200)
    names = {f.name for f in res.figures}
    assert names & ALL_SECTION_FIGURES == SECTION_FIGURES[name]


def test_a_measure_as_response_is_named_and_keeps_the_invocations_that_have_it(tmp_path):
    res = build_report(_copy(tmp_path, "storage-object.db"), tmp_path / "out", response="write_s",
                       formats=(), n_boot=200)
    text = res.summary.read_text()
    first = text.splitlines()[2]
    assert "response `write_s` (seconds of writing" in first
    assert "have no write_s" in text            # the gets, left out and said so
    assert res.rows == 8                        # the puts: 4 cells × 2 replications


def test_an_improvement_gets_an_interval_only_with_enough_bursts():
    """Two bursts a side once gave a percentile-bootstrap interval so narrow that every
    staggering cell was marked significant; below MIN_BURSTS_PER_SIDE there is no interval and no
    mark, only the point estimate."""
    base, cand = np.array([1.0, 1.3]), np.array([0.9, 1.2])
    few = improvement(cand, base)
    assert few["improvement_pct"] == pytest.approx(100 * (1.15 - 1.05) / 1.15)
    assert few["ci_low"] is None and not ci_excludes_zero(few["ci_low"], few["ci_high"])
    n = MIN_BURSTS_PER_SIDE
    rng = np.random.default_rng(0)
    enough = improvement(0.5 + 0.01 * rng.standard_normal(n), 1.0 + 0.01 * rng.standard_normal(n))
    assert enough["ci_low"] is not None and ci_excludes_zero(enough["ci_low"], enough["ci_high"])
