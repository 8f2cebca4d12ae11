"""`faascope compare`'s per-invocation (within-run) statistics, which decide only under
--assume-no-drift between single runs: an injected 20 % slowdown in one cell is flagged, nothing
else is, and the exit status follows (1: regression, 0: none, 2: bad input); the statistics are
R's (tests/analysis/data/r/compare.json, made by make_compare_fixtures.R from the committed
inputs); the timeline marks a change point where the inputs change and nowhere else. Without
--assume-no-drift one run a side is not tested (tests/compare/test_compare_units.py)."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.compare.engine import Cell, decide
from faascope.compare.timeline import change_points

DATA = Path(__file__).resolve().parents[1] / "analysis" / "data"
BASE, NEW = DATA / "compare_base.csv", DATA / "compare_new.csv"
R = json.loads((DATA / "r" / "compare.json").read_text())
ARGS = ["--factors", "memory,op", "--format", "json", "--assume-no-drift"]


def compare(*args: str):
    return CliRunner().invoke(cli, ["compare", *args])


def test_the_injected_slowdown_is_the_only_regression_and_the_exit_status_says_so():
    # one run a side: described, not tested, exit 0 (the drift between runs is unknown)
    r = compare(str(BASE), str(NEW), *ARGS[:-1])
    assert r.exit_code == 0 and json.loads(r.stdout)["comparison"]["tested"] == 0
    r = compare(str(BASE), str(NEW), *ARGS)
    assert r.exit_code == 1, r.output
    res = json.loads(r.stdout)
    flagged = [tuple(c["levels"]) for c in res["comparison"]["cells"] if c["regression"]]
    assert flagged == [("256", "write")]
    assert [tuple(c["levels"]) for c in res["comparison"]["cells"] if c["significant"]] == flagged
    cell = next(c for c in res["comparison"]["cells"] if c["regression"])
    lo, hi = cell["within_run"]["mean_diff_ci"]
    mean = cell["base"]["mean"]
    assert lo / mean < 0.20 < hi / mean  # the interval covers the injected 20 %
    assert cell["verdict"] == "REGRESSION*"  # marked: decided by assuming no drift
    # nothing changed from a campaign to itself: exit 0
    r = compare(str(BASE), str(BASE.with_name("compare_base.csv")), *ARGS)
    assert r.exit_code == 2  # the same file twice is refused …


def test_no_regression_exits_zero(tmp_path):
    copy = tmp_path / "again.csv"
    shutil.copyfile(BASE, copy)  # … a copy compares as unchanged
    r = compare(str(BASE), str(copy), *ARGS)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["comparison"]["regressions"] == 0
    # the slowdown the other way round is an improvement, not a regression
    r = compare(str(NEW), str(BASE), *ARGS)
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)["comparison"]
    assert res["improvements"] == 1 and res["regressions"] == 0
    # a threshold above the change: significant, but not beyond it
    r = compare(str(BASE), str(NEW), *ARGS, "--threshold", "25%")
    assert r.exit_code == 0, r.output


def test_statistics_match_r():
    res = json.loads(compare(str(BASE), str(NEW), *ARGS).stdout)["comparison"]
    mine = {tuple(c["levels"]): c for c in res["cells"]}
    assert len(mine) == len(R["cells"]) == 6
    for rc in R["cells"]:
        c = mine[(rc["memory"], rc["op"])]
        assert (c["base"]["n"], c["new"]["n"]) == (rc["n_base"], rc["n_new"])
        w = c["within_run"]
        for ours, theirs in [(c["mean_diff"], rc["mean_diff"]), (w["mean_diff_ci"][0], rc["ci_low"]),
                             (w["mean_diff_ci"][1], rc["ci_high"]), (w["t"], rc["t"]),
                             (w["df"], rc["df"]), (w["p"], rc["p"]), (w["p_holm"], rc["p_holm"]),
                             (c["p_holm"], rc["p_holm"]),
                             (c["base"]["median"], rc["median_base"]),
                             (c["new"]["median"], rc["median_new"]),
                             (c["base"]["cv"], rc["cv_base"]), (c["new"]["cv"], rc["cv_new"]),
                             (c["base"]["p99"], rc["p99_base"]), (c["new"]["p99"], rc["p99_new"])]:
            assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-15)
        # the bootstrap interval (not R's: its own seeded resamples) holds its estimate
        lo, hi = w["median_diff_ci"]
        assert lo <= c["median_diff"] <= hi


@pytest.mark.parametrize("seed", range(8))
def test_a_20_percent_slowdown_is_found_and_nothing_else_across_seeds(seed):
    """Not just the committed data: fresh noise each time, one slowed cell among twelve."""
    rng = np.random.default_rng(seed)
    base, new = {}, {}
    for k in range(12):
        mu = 0.01 * (k + 1)
        base[(str(k),)] = mu * np.exp(rng.normal(0, 0.08, 30))
        new[(str(k),)] = mu * (1.2 if k == 7 else 1.0) * np.exp(rng.normal(0, 0.08, 30))
    cells = [Cell(k, base[k], new[k], [base[k]], [new[k]]) for k in base]
    res = decide(cells, [], design="runs", alpha=0.05, threshold=0.10, higher_is_better=False,
                 n_boot=0, seed=0, assume_no_drift=True)
    assert [c["levels"] for c in res["cells"] if c["regression"]] == [("7",)]


def test_bad_input_exits_2_naming_the_field(tmp_path):
    r = compare(str(BASE), *ARGS)
    assert r.exit_code == 2 and "at least two inputs" in r.output
    r = compare(str(BASE), str(NEW), *ARGS, "--threshold", "ten")
    assert r.exit_code == 2 and "--threshold" in r.output
    other = tmp_path / "text.csv"
    df = pd.read_csv(NEW)
    df["memory"] = df["memory"].astype(str) + "MB"  # another unit
    df.to_csv(other, index=False)
    r = compare(str(BASE), str(other), *ARGS)
    assert r.exit_code == 2 and "factor memory" in r.output and "128MB" in r.output


def test_timeline_marks_the_change_where_the_inputs_change(tmp_path):
    """Six daily campaigns drawn as compare_base.csv and compare_new.csv were (fresh seeds):
    the slowed cell changes at day3, the others nowhere. (Copies of one file would not do:
    identical campaigns show no variation between campaigns, so any difference is exact.)
    How often a change is found where there is none is tests/compare/test_change_points.py's."""
    sys.path.insert(0, str(DATA))
    from make_compare_inputs import SLOWER, campaign  # noqa: E402  (the inputs' own generator)

    paths = []
    for i in range(6):
        p = tmp_path / f"day{i}.csv"
        campaign(100 + i, 30, SLOWER if i >= 3 else {}).to_csv(p, index=False)
        paths.append(str(p))
    r = compare(*paths, *ARGS)
    assert r.exit_code == 1, r.output  # the first against the last (assuming no drift)
    res = json.loads(r.stdout)
    marked = {tuple(t["levels"]): [c["at"] for c in t["change_points"]] for t in res["timeline"]}
    assert marked.pop(("256", "write")) == ["day3.csv"]
    assert all(v == [] for v in marked.values()), marked
    cp = next(t for t in res["timeline"] if t["levels"] == ["256", "write"])["change_points"][0]
    assert cp["rel_change"] == pytest.approx(0.20, abs=0.04) and cp["p"] < 0.05


def test_change_points_of_a_drift_free_series_are_none_and_a_step_is_found():
    rng = np.random.default_rng(3)
    flat = [1 + 0.05 * rng.standard_normal(20) for _ in range(6)]
    assert change_points(flat) == []
    step = flat[:3] + [g * 1.2 for g in flat[3:]]
    assert change_points(step) == [3]
