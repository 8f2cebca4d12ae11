"""The load section of a spec (bursts, arrival, staggering) and the burst plan: validation with
field-named errors, load factors and rules, invocation counts, slot expansion, schedules."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from faascope.designs.plan import build_plan
from faascope.driver.burst_plan import derived_name, expand_runs, group_pending
from faascope.driver.burst_summary import summarise
from faascope.designs.schedule import burst_schedule, read_trace, stagger_span
from faascope.errors import BadInput
from faascope.specs.loader import load_spec, parse_spec

BASE = {"name": "b", "provider": {"kind": "local"}, "function": {"memory_mb": 128},
        "workload": {"kind": "noop"}}


def spec(**kw) -> dict:
    d = dict(BASE)
    d.update(kw)
    return d


def test_specs_without_load_keep_their_hash_and_plan():
    ex = Path(__file__).resolve().parents[2] / "examples" / "thesis-local-fileio.yaml"
    loaded = load_spec(ex)
    assert "load" not in loaded.canonical()
    plan = build_plan(loaded, replications=1, seed=1)
    assert plan.invocations == len(plan.runs) and all(c.load is None for c in plan.cells)


def test_stagger_grid_is_a_normal_factor_pair_with_rules():
    loaded = parse_spec(spec(load={"burst_size": 20, "warm_pool": "burst"},
                             factors={"batch_size": [5, 20], "delay": ["0s", "500ms"]},
                             design={"replications": 3, "seed": 1,
                                     "rules": ["delay > 0 or batch_size == burst_size"]}))
    assert [(f.section, f.field) for f in loaded.factors] == [("load", "stagger.batch_size"),
                                                             ("load", "stagger.delay")]
    plan = build_plan(loaded)
    assert sorted(c.key for c in plan.cells) == ["batch_size=20|delay=0.0", "batch_size=20|delay=0.5",
                                                 "batch_size=5|delay=0.5"]
    assert [e.levels for e in plan.excluded] == [{"batch_size": 5, "delay": 0.0}]
    cell = plan.cells_by_key["batch_size=5|delay=0.5"]
    assert cell.load["stagger"] == {"batch_size": 5, "delay": 0.5} and cell.load["burst_size"] == 20
    assert plan.invocations == 3 * 3 * 40 and plan.measured_invocations == 3 * 3 * 20
    assert plan.to_json()["cells"][0]["load"]["burst_size"] == 20


def test_burst_plan_expands_to_one_slot_per_invocation():
    loaded = parse_spec(spec(load={"burst_size": 4, "warm_pool": 2}, factors={"start": ["warm", "cold"]},
                             design={"replications": 2, "seed": 3}))
    plan = build_plan(loaded)
    rows = expand_runs(plan)
    assert len(rows) == plan.invocations == 2 * (4 + 2) + 2 * 4  # no warm pool before cold bursts
    assert [r["order"] for r in rows] == list(range(len(rows)))
    warm = [r for r in rows if r["cell_key"] == 'start="warm"']
    assert sorted(r["replication"] for r in warm if r["kind"] == "measure") == list(range(8))
    assert sorted(r["replication"] for r in warm if r["kind"] == "warmup") == list(range(4))
    pending = [dict(r, order_index=r["order"]) for r in rows]
    groups = group_pending(pending, plan.cells_by_key)
    assert len(groups) == 4 and all(len(g.measure) == 4 for g in groups)
    assert {len(g.warmup) for g in groups if g.cell_key == 'start="warm"'} == {2}


@pytest.mark.parametrize("data, field, text", [
    (spec(load={"burst_size": 0}), "load.burst_size", "greater than or equal to 1"),
    (spec(load={"burst_size": 5, "stagger": {"batch_size": 2}}), "load.stagger.delay", "required"),
    (spec(load={"burst_size": 5, "arrival": {"process": "fixed"}}), "load.arrival", "needs interval"),
    (spec(load={"burst_size": 5, "arrival": {"process": "fixed", "interval": 0.1},
                "stagger": {"batch_size": 2, "delay": 1}}), "load", "stagger needs arrival.process"),
    (spec(load={"burst_size": 5}, design={"warmup": 2}), "design.warmup", "load.warm_pool"),
    (spec(load={"burst_size": 5}, design={"cold": True}), "design.cold", "load.start"),
    (spec(load={"burst_size": 5, "member_index": "index"}), "load.member_index", "no field"),
    (spec(factors={"delay": [-1]}), "factors.delay[0]", "negative"),
    (spec(load={"burst_size": 5}, overrides=[{"when": "burst_size > 1", "set": {"delay": 1}}]),
     "overrides[0].set.delay", "load field"),
])
def test_load_errors_name_the_field(data, field, text):
    with pytest.raises(BadInput) as ei:
        build_plan(parse_spec(data))
    assert ei.value.field == field or field in str(ei.value), str(ei.value)
    assert text in str(ei.value)


def test_stagger_schedule_and_span():
    slots = burst_schedule({"burst_size": 10, "stagger": {"batch_size": 4, "delay": 0.5}})
    assert [s.batch for s in slots] == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2]
    assert [s.offset_s for s in slots][::4] == [0.0, 0.5, 1.0]
    assert stagger_span(1000, 50, 2.0) == 38.0  # the study's b = 50, d = 2 s: last batch at 38 s
    assert stagger_span(10, 4, 0.5) == 1.0


def test_exponential_and_fixed_and_trace_schedules(tmp_path):
    ld = {"burst_size": 2000, "arrival": {"process": "exponential", "interval": 0.01, "shift": 0.002,
                                          "seed": 5}}
    a = [s.offset_s for s in burst_schedule(ld, burst_index=0)]
    b = [s.offset_s for s in burst_schedule(ld, burst_index=0)]
    c = [s.offset_s for s in burst_schedule(ld, burst_index=1)]
    assert a == b and a != c and a[0] == 0.0
    gaps = np.diff(a)
    assert gaps.min() >= 0.002 and abs(gaps.mean() - 0.012) < 0.001
    f = burst_schedule({"burst_size": 3, "arrival": {"process": "fixed", "interval": 0.25}})
    assert [s.offset_s for s in f] == [0.0, 0.25, 0.5]
    t = tmp_path / "t.txt"
    t.write_text("# offsets\n1.0\n1.5\n\n3.0\n")
    assert read_trace(t) == [0.0, 0.5, 2.0]
    t.write_text("0\n0.5\n1\n")
    assert read_trace(t, "gaps") == [0.0, 0.5, 1.5]
    ld = {"burst_size": 4, "arrival": {"process": "trace", "trace": str(t)}}
    with pytest.raises(BadInput, match="fewer than burst_size"):
        burst_schedule(ld)


def test_derived_names_fit_lambda_limits():
    base = "faascope-" + "x" * 50
    n = derived_name(base, "-p12")
    assert len(n) <= 64 and n.endswith("-p12")
    assert derived_name(base, "-p1") != derived_name(base, "-p2")
    assert derived_name("short", "-n3") == "short-n3"


def test_burst_summary_counts_throttles_and_spread():
    from faascope.driver.dispatch import Member
    from faascope.providers.invocation import InvokeResult

    ms = [Member(row={}, member=i, batch=0, offset_s=0.0, copy=0, function="f", scheduled_ns=1000)
          for i in range(3)]
    ok = {"ok": True, "cold": True, "instance": {"id": "a", "sandbox": "/s", "boot_id": "h"},
          "timings": {"received_ns": 3_000_000, "workload_start_ns": 3_000_000,
                      "workload_end_ns": 5_000_000}, "workload": {"kind": "noop"}}
    res = [InvokeResult(status="ok", response=ok, send_ns=1_000_000, end_ns=6_000_000),
           InvokeResult(status="ok", response=ok, send_ns=2_000_000, end_ns=7_000_000),
           InvokeResult(status="client_error", error_type="TooManyRequestsException",
                        send_ns=1_500_000, end_ns=1_600_000)]
    s = summarise(list(zip(ms, res)), 3)
    assert s["throttled"] == 1 and s["failed"] == 1 and s["statuses"] == {"ok": 2, "client_error": 1}
    assert s["send_spread_s"] == pytest.approx(0.001)
    assert s["wait_s"]["max"] == pytest.approx(0.002) and s["instances"] == 1 and s["cold"] == 2


def test_plan_cost_and_duration_count_burst_members():
    from faascope.designs.cost import estimate_plan_cost
    from faascope.designs.estimate import estimate

    loaded = parse_spec(spec(load={"burst_size": 50, "warm_pool": 10, "pause": "2s"},
                             factors={"start": ["warm", "cold"]}, design={"replications": 3, "seed": 1}))
    plan = build_plan(loaded)
    cost = estimate_plan_cost(plan)
    by = {c["key"]: c for c in cost["per_cell"]}
    assert by['start="warm"']["invocations"] == 3 * 60 and by['start="cold"']["invocations"] == 3 * 50
    assert by['start="cold"']["cold_invocations"] == 150
    est = estimate(plan)
    assert est["busy_seconds"] >= 6 * 2.0  # six bursts, each with its pause
    # members of a burst overlap: each burst takes its pause and a few seconds (a cold one sets
    # up 50 sandboxes sharing the host's CPUs), the campaign's fixed start-up aside
    assert est["busy_seconds"] - est["fixed_seconds"] < 6 * (2.0 + 2.5)
