"""The 2024 study's decisions (issue #26: "the thesis's decisions 8/8"). The thesis-decisions
table holds, per cell, the 95 % interval of Lambda's over GCF's median latency, recomputed here
from the thesis's shipped rows; two of its 10 KB write cells hold 1 (Lambda/GCF 0.978
[0.918, 1.071] at 128 MB, 0.959 [0.924, 1.009] at 2048 MB): the study's answer there is "no
winner", and the local answer is the same when its interval overlaps the study's (a ratio the
study's data allow), different when the two are disjoint."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from faascope import calibration
from faascope.designs.plan import build_plan
from faascope.fidelity import battery, compare
from faascope.fidelity.metrics import THESIS_CELLS
from faascope.fidelity.ratio import ratio_interval
from faascope.specs.loader import parse_spec
from machine_drift import slow_stretch

THESIS_CSV = Path(__file__).resolve().parents[2] / "examples/data/thesis-2024/main_experiment.csv"


def thesis_samples():
    df = pd.read_csv(THESIS_CSV)
    df = df[df["status"] == "SUCCESS"]
    out = {}
    for (system, exp, tier, f, cmd), g in df.groupby(
            ["system_name", "experiment_name", "resource_tier", "file_size_bytes", "command"]):
        bs = {"512": 512, "128k": 131072}[re.search(r"bs=(\w+)", cmd).group(1)]
        mem = {"TIER_1": 128, "TIER_5": 2048}[tier]
        out.setdefault((exp.lower(), mem, int(f), bs), {})[system] = g["latency_seconds"].to_numpy()
    return out


def test_the_table_is_the_theses_own_intervals():
    samples = thesis_samples()
    t = calibration.load_table(compare.DECISIONS_TABLE)
    assert len(samples) == len(THESIS_CELLS) == len(t.entries) // 2
    for c in THESIS_CELLS:
        s = samples[(c.op, c.memory_mb, c.file_size, c.io_size)]
        _, (lo, hi) = ratio_interval(s["LAMBDA_DD"], s["GCF_DD"])
        assert compare.published_interval(c) == pytest.approx((lo, hi), abs=1e-6)


def test_two_write_cells_are_not_decided_by_the_study():
    undecided = [c for c in THESIS_CELLS
                 if compare.winner(1, 1, compare.published_interval(c)) == "none"]
    assert {(c.op, c.memory_mb, c.file_size) for c in undecided} == {
        ("urandom_write", 128, 10_000), ("urandom_write", 2048, 10_000)}


def test_a_local_side_wins_only_where_its_interval_excludes_1():
    cell = next(c for c in THESIS_CELLS if c.op == "urandom_write" and c.large and c.io_size == 512)
    ci = compare.published_interval(cell)
    rng = np.random.default_rng(3)
    same = rng.lognormal(0, 0.3, 20), rng.lognormal(0, 0.3, 20)
    d = compare.decide(cell, 0.8, 1.0, float(np.median(same[0])), float(np.median(same[1])), same, ci)
    assert d.published_winner == "lambda" and d.local_winner == "none" and d.agree is False
    faster = rng.lognormal(np.log(0.5), 0.1, 20), rng.lognormal(0, 0.1, 20)
    d = compare.decide(cell, 0.8, 1.0, 0.5, 1.0, faster, ci)
    assert d.local_winner == "lambda" and d.agree is True and d.local_ci[1] < 1


def test_a_no_winner_cell_without_a_local_interval_is_not_judged():
    cell = next(c for c in THESIS_CELLS if c.op == "urandom_write" and c.memory_mb == 128)
    d = compare.decide(cell, 0.978, 1.0, 3.0, 1.0, (), compare.published_interval(cell))
    assert d.published_winner == "none" and not d.study_has_winner
    assert d.agree is None and not d.counted


def test_a_no_winner_cell_agrees_when_the_intervals_overlap_and_not_when_disjoint():
    """Before, a cell the study's data do not decide was never judged (agree None), so a local
    platform twice as slow there passed unseen; now disjoint intervals are a disagreement."""
    cell = next(c for c in THESIS_CELLS if c.op == "urandom_write" and c.memory_mb == 2048
                and not c.large)
    ci = compare.published_interval(cell)           # 0.959 [0.924, 1.009]
    rng = np.random.default_rng(7)
    same = rng.lognormal(np.log(0.96), 0.05, 20), rng.lognormal(0, 0.05, 20)
    d = compare.decide(cell, 0.959, 1.0, float(np.median(same[0])), float(np.median(same[1])),
                       same, ci, same)
    assert d.local_winner == "none" and d.agree is True and d.counted
    slow = rng.lognormal(np.log(2.0), 0.05, 20), rng.lognormal(0, 0.05, 20)
    d = compare.decide(cell, 0.959, 1.0, float(np.median(slow[0])), float(np.median(slow[1])),
                       slow, ci, slow)
    assert d.local_winner == "gcf" and d.agree is False and d.local_ci[0] > ci[1]
    # a local winner inside the study's interval is a ratio the study allows: the same answer
    near = rng.lognormal(np.log(0.94), 0.01, 20), rng.lognormal(0, 0.01, 20)
    d = compare.decide(cell, 0.959, 1.0, float(np.median(near[0])), float(np.median(near[1])),
                       near, ci, near)
    assert d.local_winner == "lambda" and d.agree is True


@pytest.mark.parametrize("memory", [128, 2048])
def test_no_winner_rule_on_the_theses_own_rows(memory):
    """The rule's error rates, from the thesis's own rows: 20 blocks a side drawn from its Lambda
    and GCF 10 KB 512 B write latencies (a local platform exactly like the clouds) agree in at
    least 95 % of campaigns; with the lambda side x1.5 slower (off by the fidelity bar) they
    disagree in most. Measured (these 200 draws): the same answer in 100 % (128 MB) and 98.5 %
    (2048 MB); x1.5 off still "the same" in 6.5 % and 0.5 %."""
    s = thesis_samples()[("urandom_write", memory, 10_000, 512)]
    cell = next(c for c in THESIS_CELLS if c.op == "urandom_write" and c.memory_mb == memory
                and not c.large)
    ci = compare.published_interval(cell)
    rng = np.random.default_rng(memory)
    same, off = [], []
    for _ in range(200):
        lam, gcf = rng.choice(s["LAMBDA_DD"], 20), rng.choice(s["GCF_DD"], 20)
        med = float(np.median(lam)), float(np.median(gcf))
        same.append(compare.decide(cell, 1, 1, *med, (lam, gcf), ci, (lam, gcf)).agree)
        lam = lam * 1.5
        off.append(compare.decide(cell, 1, 1, float(np.median(lam)), med[1], (lam, gcf), ci,
                                  (lam, gcf)).agree)
    assert np.mean(same) >= 0.95
    assert np.mean(off) <= 0.2


def test_a_quick_cell_with_too_few_values_decides_by_its_point_ratio():
    """A --quick battery's cell has a value or two a side (the crash the CI run found: scipy's
    bootstrap needs two): no interval, the point ratio decides, nothing raises."""
    cell = next(c for c in THESIS_CELLS if c.op == "direct_read" and c.memory_mb == 128)
    d = compare.decide(cell, 97.0, 1.0, 2e-5, 1e-6, ((2e-5,), (1e-6,)), compare.published_interval(cell))
    assert d.local_ci is None and d.local_winner == "gcf" and d.agree is True


# ------------------------------------------------------------------ decisions paired by block
# At c670b1f the lambda 1 GB 128 KiB write cell (the thesis: Lambda x0.889) was compared unpaired,
# 10 invocations a side, while this machine's calls slowed x1.29 during the battery: local
# [0.743, 1.022] around x0.85, undecided, where the findings' campaign, paired by block over 20
# blocks, showed x0.880 [0.860, 0.946]. The battery's tmp campaign now runs in blocks and the
# decisions pair lambda and gcf by block.

def _large_write_cell():
    return next(c for c in THESIS_CELLS if c.op == "urandom_write" and c.large and c.io_size == 131072)


def test_decisions_pair_the_profiles_by_block():
    cell = _large_write_cell()
    ci = compare.published_interval(cell)
    assert compare.winner(1, 1, ci) == "lambda"          # the thesis decides it: x0.889
    rng = np.random.default_rng(26)
    paired, unpaired, false = [], [], []
    for _ in range(300):
        lam, gcf = slow_stretch(rng, 20, 0.889)
        med = float(np.median(lam)), float(np.median(gcf))
        d = compare.decide(cell, 0.889, 1.0, *med, (lam, gcf), ci, (lam, gcf))
        assert d.local_method == "paired"
        paired.append(d.agree)
        unpaired.append(compare.decide(cell, 0.889, 1.0, *med, (lam, gcf), ci).agree)
        same = slow_stretch(rng, 20, 1.0)
        d0 = compare.decide(cell, 0.889, 1.0, float(np.median(same[0])), float(np.median(same[1])),
                            same, ci, same)
        false.append(d0.local_winner != "none")
    # measured (these 300 draws): paired 86 %, unpaired 60 %; with no difference a side wins in
    # 3.3 % (the order-statistic interval's two tails, each at most 2.5 %)
    assert np.mean(paired) >= 0.80
    assert np.mean(paired) >= np.mean(unpaired) + 0.15
    assert np.mean(false) <= 0.06


def test_a_decision_with_too_few_blocks_falls_back_to_the_unpaired_interval():
    cell = _large_write_cell()
    rng = np.random.default_rng(5)
    lam, gcf = rng.lognormal(np.log(0.5), 0.05, 5), rng.lognormal(0, 0.05, 5)
    d = compare.decide(cell, 0.889, 1.0, float(np.median(lam)), float(np.median(gcf)),
                       (lam, gcf), compare.published_interval(cell), (lam, gcf))
    # 5 blocks: the order-statistic interval needs 6; 5 a side is the bootstrap's minimum
    assert d.local_method == "unpaired" and d.local_ci[1] < 1 and d.local_winner == "lambda"


@pytest.mark.parametrize("blocks", [([1.0] * 8, [1.2] * 7), ([1.0] * 8,), ([1.0] * 8, [1.2] * 8, [1.1] * 8)])
def test_block_arrays_that_do_not_line_up_are_an_error_not_an_unpaired_decision(blocks):
    """Review of 2106476: blocks of unequal length (or not one array a side) fell back silently
    to the unpaired interval; a caller's mistake now says so."""
    cell = _large_write_cell()
    with pytest.raises(ValueError, match="blocks"):
        compare.decide(cell, 0.889, 1.0, 1.0, 1.2, (), compare.published_interval(cell), blocks)


@pytest.mark.parametrize("quick", [True, False])
def test_the_battery_runs_every_thesis_cell_once_per_block(tmp_path, quick):
    cfg = battery.BatteryConfig(profiles=("lambda", "gcf"), quick=quick, workdir=tmp_path)
    spec = battery.specs(cfg, "http://127.0.0.1:1")["tmp"]
    reps = spec["design"]["replications"]
    assert spec["design"]["blocking"]["blocks"] == reps
    if not quick:
        assert reps >= 20                     # the paired cells' power above
    plan = build_plan(parse_spec(spec, "tmp"), seed=1)
    per_block = Counter((r.block, r.cell_key) for r in plan.runs)
    assert set(per_block.values()) == {1} and len(per_block) == reps * len(plan.cells)
    # replication i is block i: read_tmp indexes by replication
    assert all(r.replication == r.block for r in plan.runs)


def test_read_tmp_gives_each_cell_its_values_by_block(tmp_path, monkeypatch):
    cfg = battery.BatteryConfig(profiles=("lambda", "gcf"), quick=False, workdir=tmp_path)
    cell = _large_write_cell()
    size = battery.local_file_size(cell, cfg)
    rows = []
    for rep in range(8):
        for profile in ("lambda", "gcf"):
            if profile == "gcf" and rep == 3:          # one failed invocation: no row
                continue
            rows.append({"profile": profile, "memory": cell.memory_mb, "file_size": size,
                         "io_size": cell.io_size, "op": "write", "replication": rep,
                         "latency_seconds": (rep + 1) * (1.0 if profile == "lambda" else 2.0),
                         "ops": 1, "direct_effective": None})
    df = pd.DataFrame(rows).sample(frac=1, random_state=2)        # rows in any order
    monkeypatch.setattr(battery, "_measured", lambda db: df)
    local = battery.read_tmp("unused", cfg)
    key = f"/tmp/{cell.op}/m{cell.memory_mb}/f{cell.file_size}/io{cell.io_size}"
    lam, gcf = local["lambda" + key], local["gcf" + key]
    assert list(lam.blocks) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert np.isnan(gcf.blocks[3]) and [gcf.blocks[i] for i in (0, 1, 2, 4)] == [2, 4, 6, 10]
    d = compare.decide(cell, 0.889, 1.0, lam.value, gcf.value, (lam.samples, gcf.samples),
                       compare.published_interval(cell), (lam.blocks, gcf.blocks))
    assert d.local_method == "paired" and d.local_ratio == pytest.approx(0.5)
    assert d.local_ci == pytest.approx((0.5, 0.5)) and d.agree is True
