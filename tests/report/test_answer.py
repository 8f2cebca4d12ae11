"""The report's answer and cost: the orderings come from the engine's decision rows (estimated
marginal means with Welch tests, Games-Howell-adjusted; checked against R), the cost interval is Student's t (checked against R's t.test), the per-row cost is the cost
model's, numbers are auto-scaled, and the report puts the answer first."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from faascope.analysis.decisions import first_group, ordering, ordering_with_p, rank_levels, relabel
from faascope.analysis.engine import analyze
from faascope.cost import Pricing, invocation_cost, invocation_costs
from faascope.report.numbers import money_ci, ratio, si, si_ci

R_DIR = Path(__file__).resolve().parents[1] / "analysis" / "data"
THESIS_CSV = Path(__file__).resolve().parents[2] / "examples" / "data" / "thesis-2024" / "main_experiment.csv"


# --------------------------------------------------------------------------- the orderings
def test_rank_levels_is_rs_emmeans_and_the_decision_tables_ordering():
    # the cost's ordering: estimated marginal means with Welch standard errors, pairs adjusted as
    # Games-Howell (R: emmeans(lm(y ~ A * B), ~ A, vcov. = cell-variance sandwich), pairs(),
    # Welch-Satterthwaite df; tests/analysis/data/r/make_pairwise_fixtures.R)
    df = pd.read_csv(R_DIR / "emm_unequal.csv")
    r = json.loads((R_DIR / "r" / "emm_unequal.json").read_text())
    res = rank_levels(df, "y", ["A", "B"], "A")
    row = res["decisions"][0]
    assert row["test"] == "Welch EMM (Games-Howell adjustment)"
    for e in r["emms"]:
        assert row["mean"][e["level"]] == pytest.approx(e["emmean"], rel=1e-12)
    got = {(p["group1"], p["group2"]): p for p in row["pairs"]}
    for w in r["pairs"]:
        mine = got[(w["group1"], w["group2"])]
        for key in ("diff", "se", "df", "lower", "upper"):
            assert mine[key] == pytest.approx(w[key], rel=1e-6), key
        assert mine["p_adj"] == pytest.approx(w["p_adj"], rel=1e-6, abs=1e-9)  # R's ptukey: ~1e-9 absolute
        assert mine["separated"] == (w["p_adj"] < 0.05)
    # and the ordering is exactly the one the full analysis's decision table gives
    full = analyze(df, "y", ["A", "B"], compare="A", n_boot=0, robust=False)["decisions"][0]
    assert row["performance_order"] == full["performance_order"] == "a3 ≤ a1 ≤ a2 (a3 < a2)"
    assert row["performance"] == full["performance"] == "-"
    assert row["tested_mean"] == pytest.approx(full["tested_mean"])
    assert row["mean"] == pytest.approx(full["mean"])
    assert row["pairs"] == full["pairs"]


def test_ordering_with_p_states_ties_and_separations_with_their_p_values():
    v = {"512": 3.0, "1769": 1.0, "3008": 1.01}
    better = {("1769", "512"): True, ("3008", "512"): True}
    p = {frozenset(("512", "1769")): 1e-5, frozenset(("512", "3008")): 2e-4, frozenset(("1769", "3008")): 0.97}
    mb = lambda x: f"{x} MB"  # noqa: E731
    assert ordering(v, better) == "1769 = 3008 < 512"
    # the separation's p is the largest of the pairs it separates (2e-4, not 1e-5)
    assert ordering_with_p(v, better, p, label=mb) == "1769 MB = 3008 MB (p = 0.97) < 512 MB (p ≤ 0.0002)"
    assert first_group(v, better) == ["1769", "3008"]
    assert first_group(v, {**better, ("1769", "3008"): True}) == ["1769"]
    # non-transitive ties keep ordering()'s '≤' form, labelled in one pass
    v3 = {"a": 1.0, "b": 2.0, "c": 3.0}
    text = ordering_with_p(v3, {("a", "c"): True}, {frozenset(("a", "c")): 0.031}, label=str.upper)
    assert text == "A ≤ B ≤ C (A < C: p = 0.031)"
    assert ordering(v3, {("a", "c"): True}) == "a ≤ b ≤ c (a < c)"          # the decision table's, unchanged
    # the levels that may be best: the lowest and those not separated from it (not c)
    assert first_group(v3, {("a", "c"): True}) == ["a", "b"]
    assert first_group(v3, {}) == ["a", "b", "c"]
    assert relabel("12 < 128", ["12", "128"], lambda x: f"{x} MB") == "12 MB < 128 MB"


# --------------------------------------------------------------------------- cost
def test_vectorised_invocation_costs_equal_the_model_row_by_row():
    rng = np.random.default_rng(3)
    n = 60
    df = pd.DataFrame({
        "config_profile": rng.choice(["lambda", "gcf", "unlimited"], n),
        "config_memory_mb": rng.choice([128, 512, 1769, 3008], n),
        "config_arch": rng.choice(["x86_64", "arm64"], n),
        "config_ephemeral_mb": rng.choice([512, 2048, None], n),
        "billed_duration_ms": np.where(rng.random(n) < 0.5, rng.integers(1, 900, n).astype(float), np.nan),
        "platform_duration_ms": rng.random(n) * 900,
        "client_latency_seconds": rng.random(n),
    })
    df.loc[3, ["billed_duration_ms", "platform_duration_ms"]] = np.nan   # only the client's round trip
    got = invocation_costs(df)
    pricing = Pricing()
    for i, r in df.iterrows():
        if r["billed_duration_ms"] == r["billed_duration_ms"]:
            dur, billed = r["billed_duration_ms"] / 1000, True
        elif r["platform_duration_ms"] == r["platform_duration_ms"]:
            dur, billed = r["platform_duration_ms"] / 1000, False
        else:
            dur, billed = r["client_latency_seconds"], False
        plat = r["config_profile"]
        eph = r["config_ephemeral_mb"] if r["config_ephemeral_mb"] == r["config_ephemeral_mb"] and \
            r["config_ephemeral_mb"] is not None else 512
        want = invocation_cost(plat, r["config_memory_mb"], dur, arch=r["config_arch"], ephemeral_mb=eph,
                               billed=billed and plat != "gcf", pricing=pricing)
        assert got.loc[i, "cost"] == pytest.approx(want.total, rel=1e-12), (i, r.to_dict())
        assert got.loc[i, "billed_s"] == pytest.approx(want.billed_s, rel=1e-12)


# --------------------------------------------------------------------------- numbers
def test_numbers_are_auto_scaled_and_clipped_at_zero():
    assert si(3.6e-05, "s") == "36.0 µs"
    assert si(1.234, "s") == "1.23 s"
    assert si(0.0871, "s") == "87.1 ms"
    assert si_ci(0.1413, (0.089, 0.192), "s") == "141 ms [89, 192]"
    assert si_ci(0.172, (-0.03, 0.374), "s") == "172 ms [0*, 374]"      # a latency is never negative
    assert money_ci(2.17, (0.94, 3.40)) == "$2.17 [0.94, 3.40]"
    assert money_ci(9.49, (-2.0, 21.04)) == "$9.49 [0*, 21.04]"
    assert ratio(4638.6) == "4,639×" and ratio(1.42) == "1.4×"
    assert "e-" not in si(2e-9, "s")


# --------------------------------------------------------------------------- the report
def test_the_answer_is_the_first_section_and_the_cost_section_has_the_front(store_report):
    html = store_report.html.read_text()
    md = store_report.summary.read_text()
    body = html[html.index("<main>"):]
    sections = re.findall(r'<section class="block" id="([^"]+)"', body)
    assert sections[0] == "answer" and "cost" in sections
    answer = body[body.index('id="answer"'):body.index("</section>", body.index('id="answer"'))]
    for word in ("Fastest:", "Most predictable:", "Cheapest:", 'href="#cost"', 'href="#scenario-1-decision"'):
        assert word in answer, word
    # the speed line names the test that decided and links to its decision rows, which exist
    assert re.search(r'<a href="#scenario-1-decision">(Games-Howell|Welch EMM \(Games-Howell adjustment\))</a>', answer)
    assert 'id="scenario-1-decision"' in body
    # summary.md starts with the answer too, links and all
    first = md.split("\n## ")[1]
    assert first.startswith("Answer") and "**Cheapest:**" in first and "](#cost)" in first
    # one cost chart per scenario, drawn as PNG by default (key figure), with a Pareto front trace
    cost_figs = [f for f in store_report.figures if f.name.startswith("cost_vs_latency_")]
    assert len(cost_figs) == 2 and all(f.key for f in cost_figs)
    for f in cost_figs:
        names = [t.name for t in f.plotly.data]
        assert "Pareto front" in names
        front = next(t for t in f.plotly.data if t.name == "Pareto front")
        assert len(front.x) >= 1 and list(front.x) == sorted(front.x)   # cheapest first
        assert list(front.y) == sorted(front.y, reverse=True)            # ... each step faster


def test_only_storage_kinds_make_storage_requests():
    # the report skips the plan's storage model for the other kinds; it must price nothing for them
    from faascope.designs.cost import storage_usage
    from faascope.report.costs import STORAGE_KINDS

    for w in ({"kind": "noop"}, {"kind": "spin", "iterations": 10},
              {"kind": "fileio", "op": "read", "file_size": 10, "io_size": 1, "prepare": True},
              {"kind": "network", "direction": "in", "bytes": 10, "duration_ms": 1}):
        assert w["kind"] not in STORAGE_KINDS and storage_usage(w) == {}, w
    assert storage_usage({"kind": "object", "op": "put", "object_size": 10, "count": 2})["object_puts"] == 2


def test_the_answer_names_the_more_predictable_level_by_the_cv_test(thesis_report):
    # READ / 1024 MB of the 2024 thesis: CV 8.6 % (GCF_DD) against 25.2 % (LAMBDA_DD), 150 values a
    # cell, too skewed for a CV interval; the CV test (faascope.analysis.cv_test) decides, with its
    # Holm p (B = 300 re-allocations here: p ≥ 1/301) and a link to the comparisons
    md = thesis_report.summary.read_text()
    answer = md.split("\n## ")[1]
    block = answer[answer.index("**operation_type = READ, file_size_bytes = 1024 MB**"):]
    line = next(ln for ln in block.splitlines() if ln.startswith("**Most predictable:**"))
    assert line.startswith("**Most predictable:** **GCF_DD**, CV GCF_DD: 8.6%.")
    assert "Order by CV: GCF_DD < LAMBDA_DD (p ≤ 0.0033) ([CV permutation test](#scenario-2-predictability))" in line


def test_no_predictability_answer_says_why_with_its_brackets_whole(tmp_path):
    # below the CV test's minimum n the answer says why, the reason's own brackets intact
    from faascope.analysis.cv_test import MIN_N
    from faascope.report.build import build_report

    df = pd.read_csv(THESIS_CSV)
    df = df[(df.operation_type == "READ") & (df.file_size_bytes == 1024000000) & (df.io_size_bytes == 512)]
    small = tmp_path / "small.csv"
    df.sort_values("occurred_at").groupby("system_name").tail(MIN_N - 1).to_csv(small, index=False)
    rep = build_report(small, tmp_path / "out", factors=["system_name"], formats=(), n_boot=200)
    line = next(ln for ln in rep.summary.read_text().splitlines() if ln.startswith("**Most predictable:**"))
    assert line.startswith(f"**Most predictable:** none can be named: too few (n = {MIN_N - 1}; needs ≥ {MIN_N}); "
                           "1 more cell(s) without a CV test; CV ")
