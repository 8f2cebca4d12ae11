"""``faascope tune``'s replication is the two-stage procedure of ``run --target-ci`` on the warm
latencies (issue #25, item 4): a pilot round, then each size's n planned once from its pilot.
Against a FAKE in-process target (seeded log-normal latencies, no platform), checked against
Stein's formula written out here."""
from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from faascope.analysis.precision import MIN_PILOT_N
from faascope.cli import cli
from faascope.tune.render import as_json, render
from faascope.tune.answer import per_size
from faascope.tune.sweep import SampleLog, SweepSettings, sweep
from faascope.tune.targets import Sample


class FakeTarget:
    """Warm latency log-normal (σ = 0.3, median 1 s × 1024 / MB), a cold start 8× as long."""
    cost_platform = "aws_lambda"
    cold_supported = True

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.memory = None
        self.restored = False

    def describe(self) -> str:
        return "a fake target"

    def set_memory(self, memory_mb: int) -> None:
        self.memory = memory_mb

    def restore(self) -> None:
        self.restored = True

    def invoke(self, payload: bytes, start: str) -> Sample:
        lat = 1024 / self.memory * float(self.rng.lognormal(0.0, 0.3))
        lat *= 8 if start == "cold" else 1
        return Sample(memory_mb=self.memory, arch="x86_64", start=start, ok=True,
                      latency_seconds=lat, client_latency_seconds=lat,
                      billed_duration_ms=math.ceil(lat * 1000), init_duration_ms=None,
                      max_memory_used_mb=64)


def stein_n(pilot, r) -> int:
    x = np.asarray(pilot)
    n0 = len(x)
    return max(n0, math.ceil((stats.t.ppf(0.975, n0 - 1) * x.std(ddof=1) / (r * x.mean())) ** 2))


def warm_by_size(res) -> dict[int, list[float]]:
    out: dict[int, list[float]] = {}
    for r in res.samples:                     # in time order
        if r["start"] == "warm" and r["ok"]:
            out.setdefault(r["memory_mb"], []).append(r["latency_seconds"])
    return out


def test_tune_runs_a_pilot_then_each_sizes_planned_n_with_in_process_fake_target(tmp_path):
    settings = SweepSettings(memories=[512, 1024], target=0.04, seed=3)
    target = FakeTarget(1)
    res = sweep(target, b"{}", settings, SampleLog(tmp_path / "t.csv"), say=lambda m: None)
    assert res.rounds == 2 and res.stopped_by == "every size has its planned n"
    assert not res.short and target.restored
    for m, warm in warm_by_size(res).items():
        n = stein_n(warm[:MIN_PILOT_N], 0.04)          # CV 0.3 at ±4 %: n ≈ 220
        assert len(warm) == n > MIN_PILOT_N, m
        assert res.precision[m].met and res.precision[m].plan.planned_n == n
    # one cold start per size per round, then its warm ones
    assert sum(1 for r in res.samples if r["start"] == "cold") == 4
    out = as_json(per_size(res.samples), res, settings, tmp_path / "t.csv")
    assert out["adaptive"]["target_reached"] and out["adaptive"]["pilot_n"] == MIN_PILOT_N


def test_a_tune_budget_reaches_every_size_and_says_the_target_was_not_reached_with_in_process_fake_target(
        tmp_path):
    from rich.console import Console

    settings = SweepSettings(memories=[512, 1024, 2048], target=0.04, budget_invocations=60,
                             seed=3)
    res = sweep(FakeTarget(2), b"{}", settings, SampleLog(tmp_path / "t.csv"),
                say=lambda m: None)
    assert len(res.samples) <= 60 and res.stopped_by == "invocations budget spent"
    warm = warm_by_size(res)
    assert sorted(warm) == [512, 1024, 2048] and all(len(v) == 19 for v in warm.values())
    assert sorted(res.short) == [512, 1024, 2048]
    table = per_size(res.samples)
    out = as_json(table, res, settings, tmp_path / "t.csv")
    assert not out["adaptive"]["target_reached"]
    assert all(not s["reached"] and s["planned_n"] is None
               for s in out["adaptive"]["sizes"].values())
    con = Console(width=200, record=True)
    render(con, table, res, settings, "fake", tmp_path / "t.csv")
    text = con.export_text()
    assert "target NOT reached for 512 MB, 1024 MB, 2048 MB" in text and "(not reached)" in text


def test_tune_refuses_a_pilot_below_the_minimum():
    r = CliRunner().invoke(cli, ["tune", "--function", "f", "--warm", "5"])
    assert r.exit_code == 2 and "--warm" in r.output
    assert str(MIN_PILOT_N) in r.output
