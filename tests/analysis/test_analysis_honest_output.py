"""Output that must not mislead (issue #19), checked against exact arithmetic or by construction
(R is not the reference here): ART ties, the decision table's orderings, the relative
predictability criterion, and the SS type at the top of every ANOVA table."""
from __future__ import annotations

import itertools
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from click.testing import CliRunner
from statsmodels.stats.anova import anova_lm

from faascope.analysis import analyze
from faascope.analysis.commands import analyze_command
from faascope.analysis.render import to_markdown

DATA = Path(__file__).resolve().parents[1] / "data"
HERE = Path(__file__).resolve().parent / "data"


def run(*args):
    return CliRunner().invoke(analyze_command, [str(a) for a in args])


# ------------------------------------------------------------------ ART: exact ties
ART_Y = [1.3, 0.7, 0.7, 0.2, 0.2, 0.1, 0.1, 0.1, 0.2, 1.1, 0.7, 1.3,
         0.7, 0.7, 1.3, 1.1, 0.7, 0.7, 0.7, 1.3, 0.2, 1.1, 1.1, 0.1]


def _art_data():
    cells = list(itertools.product(["a1", "a2"], ["b1", "b2", "b3"]))
    return pd.DataFrame({"y": ART_Y, "A": [c[0] for c in cells for _ in range(4)],
                         "B": [c[1] for c in cells for _ in range(4)]})


def _exact_art_F(df: pd.DataFrame, term: tuple[str, ...]) -> float:
    """Aligned ranks in exact rational arithmetic (Fraction), exact ties given their average
    rank; then the full-factorial ANOVA on those ranks by statsmodels (row level, patsy)."""
    y = [Fraction(str(v)) for v in df["y"]]
    keys = {f: list(df[f]) for f in ("A", "B")}

    def marginal(sub):
        groups: dict = {}
        for i, v in enumerate(y):
            groups.setdefault(tuple(keys[f][i] for f in sub), []).append(v)
        means = {k: sum(v) / len(v) for k, v in groups.items()}
        return [means[tuple(keys[f][i] for f in sub)] for i in range(len(y))]

    cell = marginal(("A", "B"))
    effect = [Fraction(0)] * len(y)
    for r in range(len(term) + 1):
        for sub in itertools.combinations(term, r):
            m = marginal(sub)
            effect = [e + (-1) ** (len(term) - r) * mi for e, mi in zip(effect, m)]
    aligned = [v - c + e for v, c, e in zip(y, cell, effect)]
    order = sorted(set(aligned))
    rank, pos = {}, 0
    for v in order:
        k = aligned.count(v)
        rank[v] = pos + (k + 1) / 2
        pos += k
    d = df.assign(r=[rank[v] for v in aligned])
    tab = anova_lm(smf.ols("r ~ C(A, Sum) * C(B, Sum)", data=d).fit(), typ=2)
    name = ":".join(f"C({f}, Sum)" for f in term)
    return float(tab.loc[name, "F"])


@pytest.mark.parametrize("term", [("A",), ("B",), ("A", "B")])
def test_art_breaks_exact_ties_exactly(term):
    df = _art_data()
    res = analyze(df, "y", ["A", "B"], n_boot=0)
    art = {r["source"]: r for r in res["robust"]["art_anova"]}
    assert art[":".join(term)]["F"] == pytest.approx(_exact_art_F(df, term), rel=1e-9)


# ------------------------------------------------------------------ decision table orderings
def _memory_data(means, sd=0.3, n=12, seed=3):
    rng = np.random.default_rng(seed)
    rows = []
    for lvl, mu in means.items():
        for v in mu + rng.normal(0, sd, n):
            rows.append({"latency": float(v), "memory": lvl})
    return pd.DataFrame(rows)


def test_decision_states_ordering_with_ties():
    df = _memory_data({"512 MB": 10.0, "1769 MB": 5.0, "3008 MB": 5.05})
    res = analyze(df, "latency", ["memory"], n_boot=200, levels={"memory": ["512 MB", "1769 MB", "3008 MB"]})
    row = res["decisions"][0]
    assert row["performance"] == "-"  # no single winner...
    assert row["performance_order"] == "1769 MB = 3008 MB < 512 MB"  # ...but an ordering
    md = to_markdown(res)
    assert "1769 MB = 3008 MB < 512 MB" in md


def test_decision_ordering_with_a_clear_winner_and_when_not_transitive():
    df = _memory_data({"a": 1.0, "b": 5.0, "c": 9.0})
    assert analyze(df, "latency", ["memory"], n_boot=200)["decisions"][0]["performance_order"] == "a < b < c"
    # b is separated from neither a nor c, but a < c: no chain of = and < says that
    e = np.tile([0.3, -0.3], 6)  # SD 0.31 in every level: q = 2.8 for 0.25 apart, 5.5 for 0.5 (q crit 3.5)
    df = pd.DataFrame({"latency": np.concatenate([5.0 + e, 5.25 + e, 5.5 + e]), "memory": np.repeat(["a", "b", "c"], 12)})
    res = analyze(df, "latency", ["memory"], n_boot=200)
    tk = {(r["group1"], r["group2"]): r["reject"] for r in res["tukey"]}
    assert tk == {("a", "b"): False, ("a", "c"): True, ("b", "c"): False}
    assert res["decisions"][0]["performance_order"] == "a ≤ b ≤ c (a < c)"


def test_all_levels_tied_reads_as_equal():
    df = _memory_data({"a": 5.0, "b": 5.0, "c": 5.0}, sd=1.0)
    assert analyze(df, "latency", ["memory"], n_boot=200)["decisions"][0]["performance_order"] == "a = b = c"


# ------------------------------------------------------------------ relative predictability criterion
def _cv_data():
    rng = np.random.default_rng(4)
    # 90 values a level: the CV test needs 90 (faascope.analysis.cv_test.MIN_N), a CV comparison's
    # interval 75 (faascope.analysis.intervals.MIN_N)
    return pd.DataFrame({"latency": np.concatenate([100 + rng.normal(0, 0.1, 90), 100 + rng.normal(0, 7.2, 90)]),
                         "platform": ["steady"] * 90 + ["jumpy"] * 90})


def test_absolute_criterion_calls_cv_01_vs_72_no_difference():
    res = analyze(_cv_data(), "latency", ["platform"], n_boot=500)
    assert res["predictability"]["criterion"] == "difference"
    assert res["decisions"][0]["predictability"] == "-"


def test_relative_criterion_ratio_of_cvs_with_ci():
    res = analyze(_cv_data(), "latency", ["platform"], n_boot=500, cv_criterion="ratio")
    pr = res["predictability"]
    assert pr["criterion"] == "ratio" and pr["ratio_threshold"] == 1.5
    comp = pr["factors"][0]["comparisons"][0]
    assert (comp["group1"], comp["group2"]) == ("jumpy", "steady")  # ratio = CV(steady) / CV(jumpy)
    assert comp["cv_ratio"] < 1 / 30 and comp["cv_ratio_ci"][1] < 1 / 1.5 and comp["meaningful"]
    assert comp["p_adj"] <= 0.05 and comp["statistic"] < 0   # the test decides; steady's CV is the lower
    assert res["decisions"][0]["predictability"] == "steady"
    md = to_markdown(res)
    assert "ratio" in md and "CV ratio" in md


def test_cli_says_which_predictability_criterion_it_used(tmp_path):
    p = tmp_path / "cv.csv"
    _cv_data().to_csv(p, index=False)
    for args, needle in [((), "difference of CVs"), (("--cv-criterion", "ratio"), "ratio of CVs")]:
        r = run(p, "--response", "latency", "--factors", "platform", "--bootstrap", "200", "--format", "markdown", *args)
        assert r.exit_code == 0, r.output
        assert f"Criterion: {needle}" in r.stdout


@pytest.mark.parametrize("args, needle", [
    (["--cv-criterion", "bogus"], "--cv-criterion"),
    (["--cv-ratio", "0.9"], "--cv-ratio"),
])
def test_bad_cv_options_exit_2(args, needle):
    r = run(DATA / "warpbreaks.csv", "--response", "breaks", "--factors", "wool,tension", *args)
    assert r.exit_code == 2 and needle in r.output and "Traceback" not in r.output


# ------------------------------------------------------------------ SS type at the top of every ANOVA table
@pytest.mark.parametrize("ss, label", [("2", "Type II"), ("I", "Type I"), ("3", "Type III")])
def test_every_anova_table_states_its_ss_type_at_the_top(ss, label):
    r = run(DATA / "warpbreaks.csv", "--response", "breaks", "--factors", "wool,tension",
            "--ss-type", ss, "--format", "markdown", "--bootstrap", "0")
    lines = r.stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("| Source | df | Sum Sq"):  # the plain ANOVA table
            above = "\n".join(lines[max(0, i - 4):i])
            assert f"{label} sums of squares" in above
        if line.startswith("| Source | p (ANOVA)"):   # robustness: log-scale and ART ANOVAs
            above = "\n".join(lines[max(0, i - 4):i])
            assert f"{label} sums of squares" in above
    assert r.stdout.count(f"{label} sums of squares") >= 2
    if label == "Type II":
        assert "--ss-type I" in r.stdout  # how to reproduce R's aov()


def test_scenario_output_states_ss_type_per_table(tmp_path):
    r = run(DATA / "warpbreaks.csv", "--response", "breaks", "--factors", "tension", "--scenario", "wool",
            "--format", "markdown", "--bootstrap", "0", "--no-robust")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    tables = [i for i, line in enumerate(lines) if line.startswith("| Source | df | Sum Sq")]
    assert len(tables) == 2
    for i in tables:
        assert "Type II sums of squares" in "\n".join(lines[i - 3:i])


def test_json_still_carries_ss_type():
    r = run(DATA / "warpbreaks.csv", "--response", "breaks", "--factors", "wool,tension", "--format", "json",
            "--bootstrap", "0")
    assert json.loads(r.stdout)["ss_type"] == "II"
