"""Adaptive replication (run --target-ci) and top-ups (--add-replications, --replications above
the recorded count) against the FAKE in-process provider (tests/driver/driver_fakes.py), and the
precision rules they decide with, checked against independently known results."""
from __future__ import annotations

import json
import math
import random
import signal
import sqlite3
import time

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from driver_fakes import InProcessFakeProvider
from faascope.analysis.cells import median_ci_ranks
from faascope.cli import cli
from faascope.analysis.precision import (cell_precision, min_n_for, parse_target,
                                        quantile_ci_ranks)
from faascope.designs.topup import round_seed
from faascope.driver.adaptive import AdaptiveRounds, Budget
from faascope.driver.runner import run_campaign
from faascope.errors import BadInput
from test_driver_fake import _run_fake, count_records, has_campaign, planned, records, write_spec


def fake(_loaded=None):
    return InProcessFakeProvider(delay_s=0.002)


def measured_latencies(db) -> dict[str, list[float]]:
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT cell_key, latency_seconds FROM invocations_flat "
                         "WHERE warmup = 0 AND ok = 1").fetchall()
    out: dict[str, list[float]] = {}
    for k, v in rows:
        out.setdefault(k, []).append(v)
    return out


def all_rows(db) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT id, cell_key, replication, kind, order_index, status, "
                         "client_send_ns, response_json FROM invocations ORDER BY id").fetchall()


# ----------------------------------------------------------------------------- the rules
def test_quantile_ci_ranks_agree_with_the_median_ranks_and_known_minimum_sizes():
    for n in range(1, 80):
        got = quantile_ci_ranks(n, 0.5)
        ref = median_ci_ranks(n, 0.05)
        assert (got is None) == (ref is None), n
        if ref:
            assert got == (ref[0], ref[1]), n
    # 95 % CIs exist from n = 6 for the median (2·0.5^6 = 0.031 ≤ 0.05 > 2·0.5^5) and, for p95,
    # from the n with 0.95^n ≤ 0.025: ln 0.025 / ln 0.95 = 71.9
    assert min_n_for("median") == 6
    assert min_n_for("p95") == 72


def test_mean_target_needs_the_iterated_t_formula():
    rng = np.random.default_rng(3)
    x = rng.normal(10.0, 2.0, 12)
    p = cell_precision(x, 0.05, "mean")
    s, m = x.std(ddof=1), x.mean()
    # n = (t(0.975, n-1)·s / (r·mean))², iterated: the smallest n that satisfies it
    n = 2
    while stats.t.ppf(0.975, n - 1) * s / (math.sqrt(n) * m) > 0.05:
        n += 1
    assert p.stat == "mean" and p.needed == n and not p.met
    assert p.rel_half_width == pytest.approx(stats.t.ppf(0.975, 11) * s / math.sqrt(12) / m)


def test_auto_switches_to_the_median_when_the_cv_is_high():
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(1.0, 0.05, 40), rng.normal(10.0, 0.5, 10)])  # cold + warm
    p = cell_precision(x, 0.05)
    assert p.cv > 0.5 and p.stat == "median"
    l, u = quantile_ci_ranks(50, 0.5)
    v = np.sort(x)
    assert (p.ci_low, p.ci_high) == (v[l - 1], v[u - 1])


def test_a_lucky_narrow_interval_with_few_values_does_not_stop_a_cell():
    assert not cell_precision([1.0, 1.001, 1.0005], 0.05, "mean").met
    assert cell_precision([1.0, 1.001, 1.0005, 1.0002, 1.0003], 0.05, "mean").met


@pytest.mark.parametrize("text", ["0", "100%", "abc", "-5%"])
def test_bad_targets_are_refused(text):
    with pytest.raises(BadInput) as e:
        parse_target(text)
    assert e.value.field == "--target-ci"
    assert parse_target("5%") == pytest.approx(0.05) == parse_target("0.05")


# ----------------------------------------------------------------------------- the runs
def test_target_ci_runs_rounds_until_every_cell_meets_it_with_in_process_fake_provider(tmp_path):
    spec = write_spec(tmp_path, reps=3, warmup=1)
    db = tmp_path / "r.db"
    adaptive = AdaptiveRounds(0.15)
    s = run_campaign(spec, db, provider_factory=fake, progress=False, adaptive=adaptive)
    assert s.complete and s.recorded == s.planned > 40  # 40 planned at first: rounds ran
    assert adaptive.outcome.stopped_by == "target met" and adaptive.outcome.rounds >= 1
    # checked independently of the code that decided: every cell's t interval is narrow enough
    for key, v in measured_latencies(db).items():
        v = np.asarray(v)
        half = stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v))
        assert half / v.mean() <= 0.15 and len(v) >= 5, key
    assert records(db) == planned(db)
    with sqlite3.connect(db) as c:
        rounds = [json.loads(d) for (d,) in c.execute(
            "SELECT detail_json FROM events WHERE kind='round_added' ORDER BY id")]
        reps = c.execute("SELECT replications FROM campaign").fetchone()[0]
        most = c.execute("SELECT max(n) FROM (SELECT count(*) n FROM planned_runs WHERE "
                         "kind='measure' GROUP BY cell_key)").fetchone()[0]
    assert [r["round"] for r in rounds] == list(range(1, len(rounds) + 1))
    assert rounds[0]["seed"] == round_seed(11, 1) and reps == most
    # a second run with the same target has nothing to add
    again = AdaptiveRounds(0.15)
    s2 = run_campaign(spec, db, provider_factory=fake, progress=False, adaptive=again)
    assert s2.ran_now == 0 and again.outcome.rounds == 0


def test_an_invocation_budget_stops_the_rounds_with_in_process_fake_provider(tmp_path):
    spec = write_spec(tmp_path, reps=3, warmup=0)
    adaptive = AdaptiveRounds(0.01, budget=Budget(invocations=60))
    s = run_campaign(spec, tmp_path / "r.db", provider_factory=fake, progress=False,
                     adaptive=adaptive)
    assert s.complete and 30 < s.ran_now <= 60
    assert adaptive.outcome.stopped_by == "invocations budget spent"


def test_top_up_keeps_every_earlier_record_and_randomises_the_new_ones_with_in_process_fake_provider(
        tmp_path):
    spec = write_spec(tmp_path, reps=3, warmup=1)
    db = tmp_path / "r.db"
    run_campaign(spec, db, provider_factory=fake, progress=False)
    before = all_rows(db)
    old_max = max(r[4] for r in before)
    s = run_campaign(spec, db, provider_factory=fake, progress=False, add_replications=4)
    after = all_rows(db)
    assert after[:len(before)] == before                       # untouched, same ids
    assert s.added == 10 * (4 + 1) and s.recorded == len(before) + s.added
    new = [r for r in after[len(before):]]
    assert min(r[4] for r in new) > old_max                    # after every earlier run
    measured_new = [(r[1], r[2]) for r in sorted(new, key=lambda r: r[4]) if r[3] == "measure"]
    assert sorted(r for _, r in measured_new) == sorted(list(range(3, 7)) * 10)
    # randomised among themselves: neither cell-major nor replication-major
    assert measured_new != sorted(measured_new)
    assert measured_new != sorted(measured_new, key=lambda p: (p[1], p[0]))
    # each cell's new replications start with a warm-up (functions were redeployed)
    firsts = {}
    for r in sorted(new, key=lambda r: r[4]):
        firsts.setdefault(r[1], r[3])
    assert set(firsts.values()) == {"warmup"}
    # --replications above the recorded count tops up to it; below it is refused
    s = run_campaign(spec, db, provider_factory=fake, progress=False, resume=True,
                     replications=9)
    assert s.added == 10 * (2 + 1) and s.complete
    with pytest.raises(BadInput) as e:
        run_campaign(spec, db, provider_factory=fake, progress=False, resume=True,
                     replications=5)
    assert e.value.field == "--replications"


def test_a_top_up_killed_at_random_points_resumes_with_nothing_lost_or_duplicated_with_in_process_fake_provider(
        tmp_path):
    spec = write_spec(tmp_path, reps=2, warmup=0)
    db = tmp_path / "r.db"
    run_campaign(spec, db, provider_factory=fake, progress=False)
    before = all_rows(db)
    rng = random.Random(17)
    proc = _run_fake(spec, db, "--add-replications", "15", "--delay-ms", "5")
    for kill in range(3):
        if kill:
            proc = _run_fake(spec, db, "--resume", "--delay-ms", "5")
        target = count_records(db) + rng.randint(5, 30)
        deadline = time.time() + 30
        while count_records(db) < target and proc.poll() is None and time.time() < deadline:
            time.sleep(0.003)
        time.sleep(rng.uniform(0, 0.012))
        assert proc.poll() is None, "the top-up finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    proc = _run_fake(spec, db, "--resume", "--delay-ms", "5")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    rows = records(db)
    assert len(rows) == 10 * 17 and rows == planned(db)
    assert all_rows(db)[:len(before)] == before
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM events WHERE kind='round_added'").fetchone()[0] == 1
        assert c.execute("SELECT status FROM campaign").fetchone()[0] == "complete"


def test_run_cli_refuses_budgets_without_a_target_and_topups_without_a_campaign(tmp_path):
    spec = write_spec(tmp_path)
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(tmp_path / "x.db"),
                                 "--budget-invocations", "10"])
    assert r.exit_code == 2 and "--target-ci" in r.output
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(tmp_path / "x.db"),
                                 "--add-replications", "3"])
    assert r.exit_code == 2 and "--add-replications" in r.output
    assert not has_campaign(tmp_path / "x.db")


def test_plan_pilot_says_how_many_replications_each_cell_needs_with_in_process_fake_provider(
        tmp_path):
    spec = write_spec(tmp_path, reps=6, warmup=0)
    db = tmp_path / "r.db"
    run_campaign(spec, db, provider_factory=fake, progress=False)
    r = CliRunner().invoke(cli, ["plan", "--pilot", str(db), "--target-ci", "10%",
                                 "--target-stat", "mean", "--format", "json"])
    assert r.exit_code == 0, r.output
    got = {c["cell"]: c for c in json.loads(r.output)["cells"]}
    for key, v in measured_latencies(db).items():
        v = np.asarray(v)
        s, m = v.std(ddof=1), v.mean()
        n = 2
        while stats.t.ppf(0.975, n - 1) * s / (math.sqrt(n) * m) > 0.10:
            n += 1
        assert got[key]["needed"] == max(n, 6) and got[key]["n"] == 6, key
    r = CliRunner().invoke(cli, ["plan", "--pilot", str(db), "--target-ci", "10%"],
                           terminal_width=100)
    assert r.exit_code == 0 and "--target-ci 10%" in r.output


def test_a_dollar_budget_stops_the_rounds_near_the_budget_with_in_process_fake_provider(tmp_path):
    from faascope.cost.report import invocation_costs
    from faascope.store.reader import read_flat

    spec = write_spec(tmp_path, reps=3, warmup=0)
    db = tmp_path / "r.db"
    budget = 2.5e-5                                   # USD: about a hundred 2 ms invocations
    adaptive = AdaptiveRounds(0.005, budget=Budget(dollars=budget))
    run_campaign(spec, db, provider_factory=fake, progress=False, adaptive=adaptive)
    assert adaptive.outcome.stopped_by == "dollars budget spent"
    spent = float(invocation_costs(read_flat(db))["cost"].sum())
    assert budget * 0.5 < spent <= budget * 1.1
