"""Adaptive replication (run --target-ci: the two-stage procedure) and top-ups
(--add-replications, --replications above the recorded count) against the FAKE in-process
provider (tests/driver/driver_fakes.py), and the precision rules they decide with, checked
against independently known results. The statistical validity of the procedure (coverage,
variance, Welch) is simulated in tests/analysis/test_adaptive_validity.py."""
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
from faascope.analysis.adaptive_record import adaptive_facts_of, adaptive_note
from faascope.analysis.intervals import mean_min_n
from faascope.analysis.precision import (MIN_PILOT_N, PROCEDURE, cell_precision, min_n_for,
                                        parse_target, quantile_ci_ranks)
from faascope.designs.topup import round_seed
from faascope.driver.adaptive import AdaptiveRounds, Budget
from faascope.driver.report_lines import adaptive_table
from faascope.driver.runner import run_campaign
from faascope.errors import BadInput
from test_driver_fake import _run_fake, count_records, has_campaign, planned, records, write_spec


def fake(_loaded=None):
    return InProcessFakeProvider(delay_s=0.002)


def quick(_loaded=None):
    return InProcessFakeProvider(delay_s=0.001)


#: two cells, so a pilot of MIN_PILOT_N per cell stays quick
SMALL_SPEC = """
name: fake-adaptive
provider: {kind: local}
function: {memory_mb: 128}
workload: {kind: fileio, op: write, io_size: 512B, file_size: 1KB}
factors:
  memory: [128, 256]
design:
  replications: {reps}
  warmup: {warmup}
  seed: 11
"""


def small_spec(tmp_path, reps=3, warmup=0):
    p = tmp_path / "small.yaml"
    p.write_text(SMALL_SPEC.replace("{reps}", str(reps)).replace("{warmup}", str(warmup)))
    return p


def measured_latencies(db) -> dict[str, list[float]]:
    """Each cell's successful measured latencies in run order."""
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT cell_key, latency_seconds FROM invocations_flat "
                         "WHERE warmup = 0 AND ok = 1 ORDER BY order_index").fetchall()
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


def stein_n(pilot, r) -> int:
    """Stein's total n for a relative half-width r, written out from the formula
    (docs/analysis.md): max(n0, 100, ⌈(t(0.975, n0-1)·s0 / (r·x̄0))²⌉), 100 being the fewest
    values a mean's interval is printed from (faascope.analysis.intervals)."""
    x = np.asarray(pilot, dtype=float)
    n0 = len(x)
    return max(n0, 100, math.ceil((stats.t.ppf(0.975, n0 - 1) * x.std(ddof=1)
                                   / (r * x.mean())) ** 2))


def test_the_mean_target_plans_steins_n_from_the_pilot_once():
    rng = np.random.default_rng(3)
    pilot = rng.normal(10.0, 2.0, MIN_PILOT_N)
    p = cell_precision(pilot, 0.02, "mean")
    assert p.stat == "mean" and p.plan is not None and not p.met
    assert p.needed == p.plan.planned_n == stein_n(pilot, 0.02) > MIN_PILOT_N
    # the interval is the ordinary t interval of the values there are
    assert p.rel_half_width == pytest.approx(stats.t.ppf(0.975, MIN_PILOT_N - 1)
                                             * pilot.std(ddof=1) / math.sqrt(MIN_PILOT_N)
                                             / pilot.mean())
    # later values, however they look, do not re-plan: narrow ones do not stop the cell early,
    # wild ones do not extend it
    calm = np.concatenate([pilot, np.full(10, 10.0)])
    wild = np.concatenate([pilot, rng.normal(10.0, 20.0, 10)])
    for more in (calm, wild):
        q = cell_precision(more, 0.02, "mean")
        assert q.plan == p.plan and q.needed == p.needed and not q.met
    done = np.concatenate([pilot, rng.normal(10.0, 2.0, p.needed - MIN_PILOT_N)])
    assert cell_precision(done, 0.02, "mean").met


def test_a_quantile_target_plans_from_the_pilots_order_statistic_interval():
    rng = np.random.default_rng(5)
    pilot = rng.lognormal(0.0, 1.0, MIN_PILOT_N)
    p = cell_precision(pilot, 0.05, "median")
    l, u, _ = median_ci_ranks(MIN_PILOT_N, 0.05)       # analysis.cells' own ranks (R-checked)
    v, m = np.sort(pilot), float(np.median(pilot))
    h0 = max(m - v[l - 1], v[u - 1] - m) / m
    assert p.plan.pilot_rel_half_width == pytest.approx(h0)
    assert p.needed == max(MIN_PILOT_N, math.ceil(MIN_PILOT_N * (h0 / 0.05) ** 2))


def test_auto_chooses_the_statistic_from_the_pilot():
    rng = np.random.default_rng(4)
    warm = rng.normal(1.0, 0.05, MIN_PILOT_N)
    mixed = np.concatenate([rng.normal(1.0, 0.05, 70), rng.normal(10.0, 0.5, 20)])  # cold+warm
    assert cell_precision(warm, 0.05).stat == "mean"
    p = cell_precision(mixed, 0.05)
    assert p.cv > 0.5 and p.stat == "median" == p.plan.stat
    l, u = quantile_ci_ranks(MIN_PILOT_N, 0.5)
    v = np.sort(mixed)
    assert (p.ci_low, p.ci_high) == (v[l - 1], v[u - 1])
    # a cold mode that appears only after the pilot does not switch the statistic
    later = np.concatenate([warm, rng.normal(10.0, 0.5, 40)])
    assert cell_precision(later, 0.05).stat == "mean"


def test_no_interval_however_narrow_meets_a_target_before_the_pilot_is_complete():
    tight = np.full(MIN_PILOT_N - 1, 1.0) + np.linspace(0, 1e-6, MIN_PILOT_N - 1)
    p = cell_precision(tight, 0.05, "mean")
    assert not p.met and p.plan is None and p.needed == MIN_PILOT_N and p.more == 1
    # the pilot complete: a mean is planned to at least the n its interval is printed from
    pilot = np.append(tight, 1.0)
    q = cell_precision(pilot, 0.05, "mean")
    assert q.plan is not None and q.needed == max(MIN_PILOT_N, mean_min_n()) and not q.met
    assert cell_precision(np.append(pilot, np.ones(q.needed - MIN_PILOT_N)), 0.05, "mean", plan=q.plan).met


@pytest.mark.parametrize("text", ["0", "100%", "abc", "-5%"])
def test_bad_targets_are_refused(text):
    with pytest.raises(BadInput) as e:
        parse_target(text)
    assert e.value.field == "--target-ci"
    assert parse_target("5%") == pytest.approx(0.05) == parse_target("0.05")


# ----------------------------------------------------------------------------- the runs
def events_of(db, kind) -> list[dict]:
    with sqlite3.connect(db) as c:
        return [json.loads(d) for (d,) in c.execute(
            "SELECT detail_json FROM events WHERE kind=? ORDER BY id", (kind,))]


def test_target_ci_runs_a_pilot_then_each_cells_planned_n_with_in_process_fake_provider(tmp_path):
    spec = small_spec(tmp_path, reps=3, warmup=1)
    db = tmp_path / "r.db"
    adaptive = AdaptiveRounds(0.05)
    s = run_campaign(spec, db, provider_factory=quick, progress=False, adaptive=adaptive)
    assert s.complete and s.recorded == s.planned
    assert adaptive.outcome.stopped_by == "every cell has its planned n"
    assert adaptive.outcome.reached and adaptive.outcome.rounds == 2
    # checked independently of the code that decided: each cell's n is Stein's n computed from
    # its first MIN_PILOT_N values (the fake's latencies are uniform, CV 0.29: n ≈ 130 > 90)
    values = measured_latencies(db)
    plans = events_of(db, "adaptive_plan")
    assert len(plans) == 1 and plans[0]["procedure"] == PROCEDURE
    assert plans[0]["pilot_n"] == MIN_PILOT_N and plans[0]["target_rel_half_width"] == 0.05
    for key, v in values.items():
        n = stein_n(v[:MIN_PILOT_N], 0.05)
        assert len(v) == n > MIN_PILOT_N, key
        assert plans[0]["cells"][key]["planned_n"] == n and plans[0]["cells"][key]["stat"] == "mean"
    assert records(db) == planned(db)
    rounds = events_of(db, "round_added")
    assert [r["stage"] for r in rounds] == ["pilot", "stage 2"]
    assert rounds[0]["added"] == {k: MIN_PILOT_N - 3 for k in values}
    assert rounds[0]["seed"] == round_seed(11, 1)
    with sqlite3.connect(db) as c:
        reps = c.execute("SELECT replications FROM campaign").fetchone()[0]
    assert reps == max(len(v) for v in values.values())
    text = adaptive_table(adaptive)
    assert "two-stage" in text and "NOT reached" not in text and text.count("reached") >= 2
    # a second run with the same target has nothing to add and records no new plan
    again = AdaptiveRounds(0.05)
    s2 = run_campaign(spec, db, provider_factory=quick, progress=False, adaptive=again)
    assert s2.ran_now == 0 and again.outcome.rounds == 0 and again.outcome.reached
    assert len(events_of(db, "adaptive_plan")) == 1
    # analyze's and report's facts: the procedure, the pilot, the target, every planned n
    facts = adaptive_facts_of(db)
    assert facts["valid"] and facts["pilot_n"] == MIN_PILOT_N and facts["reached"] == 2
    assert {k: c["planned_n"] for k, c in facts["cells"].items()} == {
        k: len(v) for k, v in values.items()}
    note = adaptive_note(facts)
    assert "two-stage" in note and f"pilot of {MIN_PILOT_N}" in note and "±5.0%" in note
    assert "reached in all 2 cells" in note
    r = CliRunner().invoke(cli, ["analyze", str(db), "--response", "latency_seconds",
                                 "--factors", "memory", "--format", "json", "--no-robust",
                                 "--bootstrap", "0"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.output)
    assert res["adaptive"]["valid"] and res["adaptive"]["reached"] == 2
    assert note in res["selection"]["notes"]


def test_a_budget_that_cuts_the_second_stage_says_the_target_was_not_reached_and_a_rerun_keeps_the_plan_with_in_process_fake_provider(
        tmp_path):
    spec = small_spec(tmp_path, reps=MIN_PILOT_N, warmup=0)
    db = tmp_path / "r.db"
    cut = AdaptiveRounds(0.03, budget=Budget(invocations=40))
    s = run_campaign(spec, db, provider_factory=quick, progress=False, adaptive=cut)
    assert s.ran_now <= 2 * MIN_PILOT_N + 40
    assert cut.outcome.stopped_by == "invocations budget spent"
    assert not cut.outcome.reached and sorted(cut.outcome.short) == sorted(cut.outcome.precision)
    text = adaptive_table(cut)
    assert "target NOT reached in 2 of 2 cell(s) (invocations budget spent; 2 short of the planned n)" in text
    facts = adaptive_facts_of(db)
    assert facts["not_reached"] == 2 and "NOT reached in 2 of 2 cells" in adaptive_note(facts)
    first = events_of(db, "adaptive_plan")[-1]["cells"]
    # the rest, without a budget: the n planned from the pilot, not from the values since
    rest = AdaptiveRounds(0.03)
    run_campaign(spec, db, provider_factory=quick, progress=False, adaptive=rest)
    assert rest.outcome.reached and len(events_of(db, "adaptive_plan")) == 1
    for key, v in measured_latencies(db).items():
        assert len(v) == first[key]["planned_n"] == stein_n(v[:MIN_PILOT_N], 0.03)
    # a new target is planned from the same pilot and recorded as a new plan
    wider = AdaptiveRounds(0.10)
    s3 = run_campaign(spec, db, provider_factory=quick, progress=False, adaptive=wider)
    assert s3.ran_now == 0 and wider.outcome.reached
    plans = events_of(db, "adaptive_plan")
    assert len(plans) == 2 and plans[-1]["target_rel_half_width"] == 0.10
    # the pilot already narrow enough: the plan is the fewest values a mean's interval is
    # printed from (faascope.analysis.intervals), which is more than the pilot
    assert all(c["planned_n"] == max(MIN_PILOT_N, mean_min_n()) for c in plans[-1]["cells"].values())


def test_failed_invocations_are_replaced_until_the_planned_n_succeeded_with_in_process_fake_provider(
        tmp_path):
    spec = small_spec(tmp_path, reps=3, warmup=0)
    db = tmp_path / "r.db"
    adaptive = AdaptiveRounds(0.05)
    run_campaign(spec, db, provider_factory=lambda _: InProcessFakeProvider(delay_s=0.001,
                                                                         fail_every=9),
                 progress=False, adaptive=adaptive)
    assert adaptive.outcome.reached and adaptive.outcome.rounds >= 3   # pilot, stage 2, repairs
    stages = [r["stage"] for r in events_of(db, "round_added")]
    assert stages[0] == "pilot" and set(stages[1:]) <= {"pilot", "stage 2"}
    plan = events_of(db, "adaptive_plan")[-1]["cells"]
    for key, v in measured_latencies(db).items():
        assert len(v) == plan[key]["planned_n"] == stein_n(v[:MIN_PILOT_N], 0.05)


def test_a_pilot_cut_by_a_budget_plans_nothing_and_says_so_with_in_process_fake_provider(
        tmp_path):
    spec = write_spec(tmp_path, reps=3, warmup=0)
    adaptive = AdaptiveRounds(0.01, budget=Budget(invocations=60))
    s = run_campaign(spec, tmp_path / "r.db", provider_factory=fake, progress=False,
                     adaptive=adaptive)
    assert s.complete and 30 < s.ran_now <= 60
    assert adaptive.outcome.stopped_by == "invocations budget spent"
    assert all(p.plan is None and not p.met for p in adaptive.outcome.precision.values())
    assert "NOT reached (pilot incomplete)" in adaptive_table(adaptive)
    assert not events_of(tmp_path / "r.db", "adaptive_plan")


def test_a_pilot_smaller_than_the_minimum_is_refused(tmp_path):
    with pytest.raises(BadInput) as e:
        AdaptiveRounds(0.05, pilot_n=MIN_PILOT_N - 1)
    assert e.value.field == "--pilot-n"
    assert AdaptiveRounds(0.05, pilot_n=MIN_PILOT_N + 10).pilot_n == MIN_PILOT_N + 10
    spec = write_spec(tmp_path)
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(tmp_path / "x.db"),
                                 "--target-ci", "5%", "--pilot-n", "10"])
    assert r.exit_code == 2 and "--pilot-n" in r.output and not has_campaign(tmp_path / "x.db")
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(tmp_path / "x.db"),
                                 "--pilot-n", "100"])
    assert r.exit_code == 2 and "--target-ci" in r.output


def test_fixed_and_topped_up_campaigns_are_not_marked_adaptive_and_the_earlier_rule_is_with_in_process_fake_provider(
        tmp_path):
    from faascope.store.writer import ResultsStore

    spec = small_spec(tmp_path, reps=3)
    db = tmp_path / "r.db"
    run_campaign(spec, db, provider_factory=quick, progress=False)
    assert adaptive_facts_of(db) is None and adaptive_note(None) is None
    run_campaign(spec, db, provider_factory=quick, progress=False, add_replications=2)
    assert adaptive_facts_of(db) is None
    # a file written by the earlier rule: its rounds' reason and no plan (schema version <= 5)
    with ResultsStore(db) as st:
        st.event(st.campaign()["id"], "round_added", {"round": 2, "reason": "target CI ±5.0%",
                                                      "added": {}, "runs": 0})
    facts = adaptive_facts_of(db)
    assert facts == {"procedure": facts["procedure"], "valid": False, "rounds": 1,
                     "target_rel_half_width": pytest.approx(0.05)}
    assert "earlier rule" in adaptive_note(facts)
    assert adaptive_facts_of(tmp_path / "small.yaml") is None     # not a results store
    plain = tmp_path / "plain.db"                                   # SQLite, not a store
    with sqlite3.connect(plain) as c:
        c.execute("CREATE TABLE t (x REAL)")
    assert adaptive_facts_of(plain) is None


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
    spec = small_spec(tmp_path, reps=6, warmup=0)
    db = tmp_path / "r.db"
    run_campaign(spec, db, provider_factory=quick, progress=False)
    r = CliRunner().invoke(cli, ["plan", "--pilot", str(db), "--target-ci", "3%",
                                 "--target-stat", "mean", "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["pilot_n"] == MIN_PILOT_N and out["procedure"] == PROCEDURE
    for c in out["cells"]:     # 6 values: the pilot comes first
        assert (c["n"], c["pilot_complete"], c["planned_n"], c["needed"], c["more"]) == (
            6, False, None, MIN_PILOT_N, MIN_PILOT_N - 6)
    run_campaign(spec, db, provider_factory=quick, progress=False,
                 add_replications=MIN_PILOT_N - 6 + 4)
    r = CliRunner().invoke(cli, ["plan", "--pilot", str(db), "--target-ci", "3%",
                                 "--target-stat", "mean", "--format", "json"])
    got = {c["cell"]: c for c in json.loads(r.output)["cells"]}
    for key, v in measured_latencies(db).items():
        n = stein_n(v[:MIN_PILOT_N], 0.03)        # the first 90 in run order, not all 94
        assert got[key]["planned_n"] == got[key]["needed"] == n > MIN_PILOT_N + 4, key
        assert got[key]["more"] == n - MIN_PILOT_N - 4
    r = CliRunner().invoke(cli, ["plan", "--pilot", str(db), "--target-ci", "3%"],
                           terminal_width=100)
    assert r.exit_code == 0 and "--target-ci 3%" in r.output
    r = CliRunner().invoke(cli, ["plan", "--pilot", str(db), "--pilot-n", "12"])
    assert r.exit_code == 2 and "--pilot-n" in r.output


def test_a_dollar_budget_stops_the_rounds_near_the_budget_with_in_process_fake_provider(tmp_path):
    from faascope.cost.report import invocation_costs
    from faascope.store.reader import read_flat

    spec = write_spec(tmp_path, reps=3, warmup=0)
    db = tmp_path / "r.db"
    budget = 2.5e-5                                   # USD: about a hundred 2 ms invocations
    # (the pilot alone asks for 10 × 87 invocations: the budget stops it)
    adaptive = AdaptiveRounds(0.005, budget=Budget(dollars=budget))
    run_campaign(spec, db, provider_factory=fake, progress=False, adaptive=adaptive)
    assert adaptive.outcome.stopped_by == "dollars budget spent" and not adaptive.outcome.reached
    spent = float(invocation_costs(read_flat(db))["cost"].sum())
    assert budget * 0.5 < spent <= budget * 1.1
