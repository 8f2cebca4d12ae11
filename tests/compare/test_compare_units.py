"""`faascope compare` with the block or the run as the unit: the interleaved A/B campaign (--by),
several runs a side, and A/A runs (--aa) — checked against R (tests/analysis/data/r/
compare_runs.json, made by make_compare_runs_fixtures.R from the committed inputs of
make_compare_runs_inputs.py); what one run a side may and may not say; exact differences; the
settings that differ between BASE and NEW."""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.compare import between as bt
from faascope.compare.timeline import max_t

TESTS = Path(__file__).resolve().parents[1]
DATA = TESTS / "analysis" / "data"
RUNS = DATA / "compare_runs"
R = json.loads((DATA / "r" / "compare_runs.json").read_text())


def compare(*args: str):
    return CliRunner().invoke(cli, ["compare", *args, "--format", "json"])


def cells(r) -> dict:
    return {c["levels"][0]: c for c in json.loads(r.stdout)["comparison"]["cells"]}


def runs(*names: str) -> str:
    return ",".join(str(RUNS / f"{n}.csv") for n in names)


def same(ours: dict, theirs: dict):
    b = ours["between"]
    for k in ("ratio", "t", "df", "p"):
        assert b[k] == pytest.approx(theirs[k], rel=1e-9), k
    assert b["ratio_ci"] == pytest.approx(theirs["ratio_ci"], rel=1e-9)
    assert ours["p_holm"] == pytest.approx(theirs["p_holm"], rel=1e-9)
    assert b["rel_change"] == pytest.approx(theirs["ratio"] - 1, rel=1e-9)


def test_interleaved_campaign_is_tested_block_by_block_as_r_does():
    r = compare(str(DATA / "compare_interleaved.csv"), "--by", "variant",
                "--factors", "variant,op")
    assert r.exit_code == 0, r.output  # +8.7 % on writes: significant, within the 10 % threshold
    res = json.loads(r.stdout)
    assert res["design"] == "interleaved" and res["factors"] == ["op"]
    assert (res["base"], res["new"]) == ("variant=base", "variant=new")
    mine = cells(r)
    for rc in R["interleaved"]:
        c = mine[rc["op"]]
        assert c["decided_by"] == "blocks" and c["between"]["units_base"] == rc["blocks"]
        same(c, rc)
    assert mine["write"]["significant"] and not mine["write"]["regression"]
    assert mine["write"]["verdict"] == "changed, within the threshold"
    # block 7 lost its NEW reads: named, and left out of the pairs
    assert any("1 block(s) without both" in n for n in res["notes"])
    # a lower threshold makes the write change a regression: exit 1
    r = compare(str(DATA / "compare_interleaved.csv"), "--by", "variant", "--factors",
                "variant,op", "--threshold", "5%")
    assert r.exit_code == 1 and cells(r)["write"]["regression"]
    # BASE and NEW the other way round
    r = compare(str(DATA / "compare_interleaved.csv"), "--by", "variant", "--factors",
                "variant,op", "--base-level", "new", "--new-level", "base")
    assert cells(r)["write"]["between"]["ratio"] == pytest.approx(
        1 / R["interleaved"][1]["ratio"], rel=1e-9)


def test_several_runs_a_side_are_tested_run_by_run_as_r_does():
    r = compare(runs("base1", "base2", "base3", "base4"), runs("new1", "new2", "new3", "new4"),
                "--factors", "op")
    res = json.loads(r.stdout)
    assert res["base_runs"] == ["base1.csv", "base2.csv", "base3.csv", "base4.csv"]
    assert res["comparison"]["warning"] is None
    for rc in R["runs"]:
        c = cells(r)[rc["op"]]
        assert c["decided_by"] == "runs" and (c["between"]["units_base"],
                                              c["between"]["units_new"]) == (4, 4)
        same(c, rc)
    # 25 % slower writes against 8 % drift per run, 4 runs a side: p = 0.056 (Holm 0.11), so
    # not shown — where a per-invocation test would have said p < 1e-16
    assert r.exit_code == 0 and not cells(r)["write"]["significant"]
    assert cells(r)["write"]["within_run"]["p"] < 1e-16


def test_one_run_a_side_against_aa_runs_as_r_computes_it():
    r = compare(str(RUNS / "base1.csv"), str(RUNS / "new1.csv"), "--aa",
                runs("aa1", "aa2", "aa3"), "--factors", "op")
    assert r.exit_code == 1, r.output  # writes: +42 %, beyond the A/A drift and the threshold
    for rc in R["drift_aa"]:
        c = cells(r)[rc["op"]]
        assert c["decided_by"] == "drift" and c["between"]["drift_from"] == "aa"
        same(c, rc)
        assert c["between"]["drift_band"] == pytest.approx(rc["drift_band"], rel=1e-9)
    read = cells(r)["read"]
    lo, hi = R["drift_aa"][0]["drift_band"]
    assert read["verdict"] == f"within the A/A drift ({100 * lo:+.1f} %, {100 * hi:+.1f} %)"
    assert cells(r)["write"]["verdict"] == "REGRESSION"


def test_base_runs_give_the_drift_when_new_has_one_run_as_r_computes_it():
    r = compare(runs("base1", "base2", "base3"), str(RUNS / "new1.csv"), "--factors", "op")
    assert r.exit_code == 0, r.output
    for rc in R["drift_base"]:
        c = cells(r)[rc["op"]]
        assert c["decided_by"] == "drift" and c["between"]["drift_from"] == "base"
        same(c, rc)
        assert c["verdict"].startswith("within the BASE runs")


def test_the_maximal_t_of_the_timeline_is_r_s_student_t():
    t, j = max_t(np.array(R["timeline"]["log_medians"]))
    assert float(t[0]) == pytest.approx(R["timeline"]["max_abs_t"], rel=1e-9)
    assert int(j[0]) == R["timeline"]["split"]


def _drifted_pair(tmp_path, drift: float, seed: int = 5):
    """Two runs of one unchanged system, the second on a host 'drift' slower: what two
    identical specs run back to back gave (−24.9 %, Holm p = 0.019)."""
    rng = np.random.default_rng(seed)
    paths = []
    for i, m in enumerate((1.0, 1.0 + drift)):
        df = pd.DataFrame({"op": ["read"] * 30 + ["write"] * 30,
                           "latency_seconds": np.r_[0.02 * m * np.exp(rng.normal(0, .1, 30)),
                                                    0.03 * m * np.exp(rng.normal(0, .1, 30))]})
        paths.append(tmp_path / f"run{i}.csv")
        df.to_csv(paths[-1], index=False)
    return paths


def test_one_run_a_side_is_described_not_tested_and_the_gate_stays_open(tmp_path):
    """The issue's A/A pair: a per-invocation test calls a drift of 25 % a regression (exit 1 on
    main); one run a side cannot tell drift from change, so nothing is tested and it says so."""
    a, b = _drifted_pair(tmp_path, 0.25)
    r = compare(str(a), str(b), "--factors", "op")
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)["comparison"]
    assert res["regressions"] == 0 and res["tested"] == 0
    assert res["warning"].startswith("ONE RUN PER SIDE")
    assert "ONE RUN PER SIDE" in r.stderr
    for c in res["cells"]:
        assert c["verdict"] == "no test" and not c["significant"]
        assert c["p_holm"] is None and "ratio_ci" not in c["between"]
        assert c["mean_rel_change"] == pytest.approx(0.25, abs=0.06)  # still described
    md = CliRunner().invoke(cli, ["compare", str(a), str(b), "--factors", "op",
                                  "--format", "markdown"]).stdout
    for word in ("REGRESSION", "improvement", "significant"):
        assert word not in md.split("## Settings")[0].split("- ")[0]
    # assumed away on request, loudly, with every verdict marked
    r = compare(str(a), str(b), "--factors", "op", "--assume-no-drift")
    assert r.exit_code == 1
    res = json.loads(r.stdout)["comparison"]
    assert res["warning"].startswith("NO DRIFT ASSUMED")
    assert {c["verdict"] for c in res["cells"]} == {"REGRESSION*"}


def test_exact_differences_are_stated_without_a_test_or_a_warning(tmp_path):
    """10 × 0.25 against 10 × 0.26: main printed t = 5.4e14, p = 1e-129, 'significant', and a
    scipy RuntimeWarning."""
    base, new, same_ = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    pd.DataFrame({"c": ["x"] * 10, "latency_seconds": [0.25] * 10}).to_csv(base, index=False)
    pd.DataFrame({"c": ["x"] * 10, "latency_seconds": [0.26] * 10}).to_csv(new, index=False)
    pd.DataFrame({"c": ["x"] * 10, "latency_seconds": [0.25] * 10}).to_csv(same_, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = compare(str(base), str(new), "--factors", "c")
        assert r.exit_code == 0, r.output
        c = json.loads(r.stdout)["comparison"]["cells"][0]
        assert c["p_holm"] is None and c["decided_by"] == "exact"
        r = compare(str(base), str(new), "--factors", "c", "--assume-no-drift")
    assert r.exit_code == 0, r.output
    c = json.loads(r.stdout)["comparison"]["cells"][0]
    assert c["exact"] == "exact" and c["decided_by"] == "exact"
    assert c["within_run"]["t"] is None and c["within_run"]["p"] is None and c["p_holm"] is None
    assert c["mean_rel_change"] == pytest.approx(0.04)
    assert c["verdict"] == "exact difference, within the threshold" and not c["regression"]
    r = compare(str(base), str(new), "--factors", "c", "--threshold", "3%")
    assert r.exit_code == 1 and json.loads(r.stdout)["comparison"]["cells"][0]["verdict"] == \
        "REGRESSION (exact)"
    r = compare(str(base), str(same_), "--factors", "c")
    c = json.loads(r.stdout)["comparison"]["cells"][0]
    assert r.exit_code == 0 and c["exact"] == "constant" and c["verdict"] == \
        "no difference (constant)"
    # one side constant (0.26 is not a binary fraction), the other varying: Welch as R's, quietly
    varying = tmp_path / "d.csv"
    y = 0.3 + 0.01 * np.random.default_rng(1).standard_normal(30)
    pd.DataFrame({"c": ["x"] * 30, "latency_seconds": y}).to_csv(varying, index=False)
    pd.DataFrame({"c": ["x"] * 30, "latency_seconds": [0.26] * 30}).to_csv(new, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = compare(str(new), str(varying), "--factors", "c", "--assume-no-drift")
    w = json.loads(r.stdout)["comparison"]["cells"][0]["within_run"]
    ys = pd.read_csv(varying)["latency_seconds"].to_numpy()
    assert w["df"] == pytest.approx(29) and w["t"] == pytest.approx(
        (ys.mean() - 0.26) / (ys.std(ddof=1) / np.sqrt(30)), rel=1e-9)


def test_intervals_below_their_minimum_say_too_few(tmp_path):
    """The median difference's interval covered 0.70 at n = 2 (issue #25, 5)."""
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame({"c": ["x", "x"], "latency_seconds": [1.0, 1.1]}).to_csv(a, index=False)
    pd.DataFrame({"c": ["x", "x"], "latency_seconds": [1.5, 1.7]}).to_csv(b, index=False)
    r = compare(str(a), str(b), "--factors", "c", "--assume-no-drift")
    c = json.loads(r.stdout)["comparison"]["cells"][0]["within_run"]
    assert c["median_diff_ci"] is None and c["mean_diff_ci"] is None
    assert c["median_diff_ci_why"] == "too few (n = 2; needs ≥ 5 values per side)"
    assert c["mean_diff_ci_why"] == "too few (n = 2; needs ≥ 25 values per side)"
    table = CliRunner().invoke(cli, ["compare", str(a), str(b), "--factors", "c",
                                     "--assume-no-drift", "--format", "markdown"]).stdout
    assert "too few (n = 2; needs ≥ 5 values per side)" in table
    # no interval, no test: not decided by the within-run test either
    assert json.loads(r.stdout)["comparison"]["cells"][0]["decided_by"] is None


def test_the_unit_tests_work_on_arrays_of_replicates():
    """The coverage simulation runs replicates through the same functions: a 2-D call equals
    the 1-D calls row by row."""
    rng = np.random.default_rng(1)
    b, n, d = rng.lognormal(0, .2, (4, 5)), rng.lognormal(.1, .2, (4, 5)), rng.lognormal(0, .2, (4, 3))
    for f, args in ((bt.paired_log_t, (b, n)), (bt.welch_log_t, (b, n)),
                    (bt.drift_log_t, (b[:, :1], n[:, :1], d))):
        whole = f(*args)
        for i in range(4):
            row = f(*(a[i] for a in args))
            assert float(whole["p"][i]) == pytest.approx(float(row["p"]))
            assert float(whole["ratio_ci"][0][i]) == pytest.approx(float(row["ratio_ci"][0]))


@pytest.mark.parametrize("args, field", [
    (["a.csv", "b.csv", "--by", "variant"], "--by"),
    (["il.csv", "--by", "variant", "--aa", "a.csv,b.csv,c.csv"], "--aa"),
    (["il.csv", "--by", "variant", "--block", "nope"], "--block"),
    (["il.csv", "--by", "variant", "--new-level", "other"], "--new-level"),
    (["il.csv", "--by", "variant", "--timeline"], "--timeline"),
    (["a.csv", "b.csv", "--base-level", "x"], "--base-level"),
    (["a.csv"], "INPUT"),
])
def test_bad_input_exits_2_naming_the_option(tmp_path, args, field):
    pd.read_csv(DATA / "compare_interleaved.csv").to_csv(tmp_path / "il.csv", index=False)
    for n in ("a", "b", "c"):
        pd.read_csv(RUNS / "base1.csv").assign(variant="x").to_csv(tmp_path / f"{n}.csv",
                                                                  index=False)
    args = [str(tmp_path / a) if a.endswith(".csv") and "," not in a else
            ",".join(str(tmp_path / p) for p in a.split(",")) if a.endswith(".csv") else a
            for a in args]
    r = CliRunner().invoke(cli, ["compare", *args, "--factors", "variant,op"])
    assert r.exit_code == 2, r.output
    assert field in r.output and "Traceback" not in r.output


def _stores(tmp_path):
    """Two results stores of one small spec, the second with twice the memory, recorded
    through the campaign runner and a fake provider (seconds)."""
    sys.path.insert(0, str(TESTS / "driver"))
    from driver_fakes import InProcessFakeProvider  # noqa: E402  (tests/driver's fake)
    from faascope.driver.runner import run_campaign

    out = []
    for name, memory in (("base", 512), ("new", 1024)):
        spec = tmp_path / f"{name}.yaml"
        spec.write_text(f"""
name: specdiff-{name}
provider: {{kind: local}}
function: {{memory_mb: {memory}}}
workload: {{kind: fileio, op: write, file_size: 4KiB, io_size: 4KiB}}
factors:
  op: [read, write]
design: {{replications: 3, seed: 4}}
""")
        run_campaign(spec, tmp_path / f"{name}.db",
                     provider_factory=lambda _: InProcessFakeProvider(delay_s=0.0005),
                     progress=False)
        out.append(tmp_path / f"{name}.db")
    return out


def test_the_settings_that_differ_between_base_and_new_are_listed(tmp_path):
    base, new = _stores(tmp_path)
    r = compare(str(base), str(new))
    res = json.loads(r.stdout)
    fields = {d["field"]: (d["base"], d["new"]) for d in res["spec_diff"]["fields"]}
    assert fields["spec.function.memory_mb"] == (512, 1024)
    assert fields["spec.name"] == ("specdiff-base", "specdiff-new")
    assert not any(f.startswith("spec.workload") for f in fields)  # the same workload
    md = CliRunner().invoke(cli, ["compare", str(base), str(new), "--format", "markdown"]).stdout
    assert "| spec.function.memory_mb | 512 | 1024 |" in md


def test_the_side_with_more_runs_gives_the_drift_either_way_round():
    """One BASE run against three NEW runs is the mirror of three against one: the ratio
    inverts, t changes sign, p and df stay."""
    one_three = cells(compare(str(RUNS / "base1.csv"), runs("new1", "new2", "new3"),
                              "--factors", "op"))
    three_one = cells(compare(runs("new1", "new2", "new3"), str(RUNS / "base1.csv"),
                              "--factors", "op"))
    for op in ("read", "write"):
        a, b = one_three[op]["between"], three_one[op]["between"]
        assert (a["drift_from"], b["drift_from"]) == ("new", "base")
        assert a["ratio"] == pytest.approx(1 / b["ratio"], rel=1e-12)
        assert (a["t"], a["df"], a["p"]) == pytest.approx((-b["t"], b["df"], b["p"]), rel=1e-12)
