"""`faascope stagger suggest`: the successive-halving search on a synthetic objective, and the
whole command against a FAKE Lambda endpoint with a contended shared resource
(tests/driver/burst_fakes.py)."""
from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "driver"))
from burst_fakes import FakeEndpointProvider, FakeLambda, spec_text  # noqa: E402

from faascope.cli import cli  # noqa: E402
from faascope.stagger.search import (  # noqa: E402
    Candidate,
    default_batch_sizes,
    default_delays,
    schedule_bound,
    successive_halving,
)
from faascope.analysis.improvement import MIN_BURSTS_PER_SIDE, too_few  # noqa: E402
from faascope.stagger.suggest import suggest  # noqa: E402


def synthetic(truth: dict, noise: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    calls = {"bursts": 0}

    def evaluate(cands, k):
        for c in cands:
            for _ in range(k):
                calls["bursts"] += 1
                c.scores.append(truth[c.key] * (1 + noise * rng.standard_normal()))

    def baseline(k):
        calls["bursts"] += k
        return list(truth["base"] * (1 + noise * rng.standard_normal(k)))

    return evaluate, baseline, calls


def test_successive_halving_finds_the_best_candidate_with_few_bursts():
    bs, ds = [5, 10, 20, 40], [0.1, 0.5, 1.0, 2.0]
    # a bowl with its minimum at (10, 0.5); all-at-once = 10
    truth = {(b, d): 2 + abs(np.log2(b / 10)) + 2 * abs(np.log2(d / 0.5)) for b in bs for d in ds}
    truth["base"] = 10.0
    cands = [Candidate(b, d) for b in bs for d in ds]
    evaluate, baseline, calls = synthetic(truth, noise=0.05)
    res = successive_halving(cands, evaluate, baseline, eta=3, seed=1)
    assert res.best.key == (10, 0.5)
    # the naive way to be as sure: every candidate and the baseline at the rule's bursts
    exhaustive = 17 * MIN_BURSTS_PER_SIDE
    assert res.bursts == calls["bursts"] and res.bursts < 0.75 * exhaustive
    assert 70 < res.improvement_pct < 90
    lo, hi = res.ci
    assert lo < res.improvement_pct < hi and lo > 0 and res.too_few is None
    assert res.p_value_vs_all_at_once < 0.001
    assert 0 <= res.p_value_vs_runner_up <= 1
    assert res.confirm_bursts == MIN_BURSTS_PER_SIDE
    assert len(res.best.scores) >= 1 + MIN_BURSTS_PER_SIDE
    dropped = [c for c in cands if c.eliminated_in]
    assert len(dropped) == 15 and all(c.scores for c in cands)


def test_successive_halving_respects_the_budget_and_says_so():
    truth = {(b, 1.0): float(b) for b in (1, 2, 3, 4, 5, 6)}
    truth["base"] = 10.0
    cands = [Candidate(b, 1.0) for b in (1, 2, 3, 4, 5, 6)]
    evaluate, baseline, calls = synthetic(truth, noise=0.0)
    res = successive_halving(cands, evaluate, baseline, eta=2, budget=10, seed=0)
    assert res.bursts <= 10 and calls["bursts"] <= 10
    assert res.stopped_by_budget and any("budget" in n for n in res.notes)
    assert res.best.key == (1, 1.0)
    # no confirmation bursts: a point estimate from the bursts that chose the winner, no interval
    assert res.confirm_bursts == 0 and res.ci == (None, None) and res.p_value_vs_all_at_once is None
    assert res.too_few == too_few(0, what="confirmation burst") and any("favour it" in n for n in res.notes)


def test_few_bursts_give_no_interval_and_no_p_value():
    """`stagger suggest` once printed a CI and P(better) = 1.00 from 3 vs 4 bursts: the winner's
    interval now rests on MIN_BURSTS_PER_SIDE fresh bursts, or the answer says it has too few."""
    truth = {(b, 1.0): float(b) for b in (1, 2, 3)}
    truth["base"] = 10.0
    n = MIN_BURSTS_PER_SIDE
    # 2 pilot bursts + one round (3 candidates + 1 baseline) = 6, then the confirmation: n of the
    # best, n of the runner-up, the baseline topped up from 3 to n
    for budget, confirmed, runner in ((6 + 2 * n + n - 3, True, True), (6 + n + n - 3, True, False),
                                      (6 + n + n - 4, False, False)):
        cands = [Candidate(b, 1.0) for b in (1, 2, 3)]
        evaluate, baseline, _ = synthetic(truth, noise=0.05)
        res = successive_halving(cands, evaluate, baseline, eta=3, budget=budget)
        assert res.bursts <= budget
        assert (res.ci[0] is not None) == confirmed == (res.p_value_vs_all_at_once is not None)
        assert (res.p_value_vs_runner_up is not None) == runner
        assert (res.too_few is None) == confirmed


def test_noisy_no_effect_is_reported_as_uncertain():
    truth = {(b, 1.0): 10.0 for b in (2, 4, 8)}
    truth["base"] = 10.0
    cands = [Candidate(b, 1.0) for b in (2, 4, 8)]
    evaluate, baseline, _ = synthetic(truth, noise=0.2, seed=4)
    res = successive_halving(cands, evaluate, baseline, eta=3, seed=0)
    assert res.ci[0] < 0 < res.ci[1]
    assert any("includes 0" in n for n in res.notes)


def test_defaults_and_schedule_bound():
    assert default_batch_sizes(1000) == [31, 62, 125, 250, 500]
    assert default_batch_sizes(2) == [1]
    assert default_delays(0.2) == [0.05, 0.1, 0.2, 0.4]
    # 100 invocations in batches of 10, 1 s apart: the median member waits 4 s, the last 9 s
    assert schedule_bound(100, 10, 1.0, 0.5) == 4.0
    assert schedule_bound(100, 10, 1.0, 1.0) == 9.0


def test_suggest_with_fake_lambda_endpoint_and_contended_writes(tmp_path):
    fake = FakeLambda(delay_s=0.002, contended_io=0.004)
    fake.start()
    try:
        spec = tmp_path / "s.yaml"
        spec.write_text(spec_text(fake.url, burst=20,
                                  workload="{kind: fileio, op: write, file_size: 4KiB, io_size: 4KiB}"))
        out = suggest(spec, 20, objective=("write_s", "p50"), batch_sizes=[2, 5, 10],
                      delays=[0.05, 0.15], results=tmp_path / "s.db", seed=2, progress=False,
                      provider_factory=lambda loaded: FakeEndpointProvider(fake.url))
    finally:
        fake.stop()
    assert out["best"]["batch_size"] == 2  # fewer writers at once: faster writes
    assert out["improvement_pct"] > 50 and out["improvement_ci"][0] > 0
    assert out["confirm_bursts"] == MIN_BURSTS_PER_SIDE and out["too_few"] is None
    assert out["p_value_vs_all_at_once"] < 0.05
    assert out["trial_bursts"] < 6 * 4
    assert out["trial_invocations"] == 20 * out["trial_bursts"]
    assert {c["outcome"].split()[0] for c in out["candidates"]} <= {"best", "dropped"}
    with sqlite3.connect(tmp_path / "s.db") as c:
        n = c.execute("SELECT count(*) FROM invocations").fetchone()[0]
        ev = c.execute("SELECT detail_json FROM events WHERE kind='stagger_suggest'").fetchone()
    assert n == out["trial_invocations"] and json.loads(ev[0])["best"]["batch_size"] == 2


def test_suggest_command_refuses_other_factors(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(spec_text(factors="  memory: [128, 256]"))
    r = CliRunner().invoke(cli, ["stagger", "suggest", str(spec), "--concurrency", "10",
                                 "--results", str(tmp_path / "x.db")])
    assert r.exit_code == 2 and "memory" in r.output
    r = CliRunner().invoke(cli, ["stagger", "suggest", str(spec), "--concurrency", "10",
                                 "--objective", "latency:p50"])
    assert r.exit_code == 2 and "METRIC:STAT" in r.output


def test_stagger_grid_command_table_json_and_figure(tmp_path):
    fake = FakeLambda(delay_s=0.002, contended_io=0.003)
    fake.start()
    try:
        spec = tmp_path / "g.yaml"
        spec.write_text(spec_text(
            fake.url, burst=12, reps=2, workload="{kind: fileio, op: write, file_size: 4KiB, io_size: 4KiB}",
            factors="  batch_size: [4, 12]\n  delay: [0s, 100ms]",
            rules='["delay > 0 or batch_size == burst_size", "batch_size < burst_size or delay == 0"]'))
        from faascope.driver.runner import run_campaign

        run_campaign(spec, tmp_path / "g.db", progress=False,
                     provider_factory=lambda loaded: FakeEndpointProvider(fake.url))
    finally:
        fake.stop()
    r = CliRunner().invoke(cli, ["stagger", "grid", str(tmp_path / "g.db"), "--format", "json",
                                 "--figure", str(tmp_path / "h.png")])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert {x["metric"] for x in rows} >= {"write_s", "service_s", "start_s"}
    assert "read_s" not in {x["metric"] for x in rows}  # no reads in a write workload
    w = [x for x in rows if x["metric"] == "write_s" and x["stat"] == "p50"][0]
    assert w["batch_size"] == 4 and w["improvement_pct"] > 0
    assert (tmp_path / "h.png").stat().st_size > 10_000
    r = CliRunner().invoke(cli, ["stagger", "grid", str(tmp_path / "g.db")], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "median write" in r.output and "Staggering vs all at once" in r.output
    # two bursts a side: below the rule, said in words, not a CI of "–" (issue #25, item 7)
    assert w["too_few"] == too_few(2) and w["ci_low"] is None and w["p_value"] is None
    assert too_few(2) in r.output and "│ no " not in r.output
