"""Issue #25 item 1: every response carries its direction and unit from one place, the measures
table of the results schema (faascope.store.measures); a foreign column named like a rate must
say which way is better."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.store.measures import FIXED_MEASURES, MEASURES, describe, measure
from faascope.store.schema import FLAT_FIXED

ROOT = Path(__file__).resolve().parents[2]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_every_measure_has_a_unit_a_direction_and_a_noun():
    for m in MEASURES + FIXED_MEASURES:
        assert m.better in ("lower", "higher", None), m.name
        assert m.unit in ("s", "ms", "B", "B/s", "1/s", "MB", ""), m.name
        assert m.noun and m.meaning, m.name
    # rates are higher-is-better, durations lower-is-better: the two the issue found confused
    assert measure("throughput_bytes_per_s").better == "higher" and measure("throughput_bytes_per_s").unit == "B/s"
    assert measure("latency_seconds").better == "lower" and measure("latency_seconds").unit == "s"
    # every fixed response column is a column of the flat view
    assert {m.name for m in FIXED_MEASURES} <= set(FLAT_FIXED)


def test_the_answer_words_follow_the_direction():
    assert describe("latency_seconds").best_word == "Fastest"
    assert describe("throughput_bytes_per_s").best_word == "Highest throughput"
    assert describe("request_retries").best_word == "Lowest retries"


def _rates(tmp_path: Path) -> Path:
    rng = np.random.default_rng(3)
    rows = [{"memory": m, "throughput_mbps": rng.normal(10 * m / 128, 1)} for m in (128, 1024) for _ in range(20)]
    path = tmp_path / "rates.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_a_foreign_rate_column_must_say_which_way_is_better(tmp_path):
    path = _rates(tmp_path)
    r = run("analyze", path, "--response", "throughput_mbps", "--factors", "memory")
    assert r.exit_code == 2 and "--higher-is-better" in r.output and "rate" in r.output
    r = run("report", path, "--response", "throughput_mbps", "--factors", "memory", "--out", tmp_path / "o")
    assert r.exit_code == 2 and "--higher-is-better" in r.output
    r = run("analyze", path, "--response", "throughput_mbps", "--factors", "memory", "--higher-is-better",
            "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["measure"]["better"] == "higher"


def test_a_foreign_column_named_like_a_duration_is_assumed_lower_and_says_so():
    m = describe("occurred_ms")
    assert m.better == "lower" and m.unit == "ms" and not m.known
    assert "assumed" in m.direction_text


def test_staggering_compares_by_each_metrics_direction():
    from faascope.analysis.improvement import improvement
    from faascope.stagger.commands import OBJECTIVE_METRICS

    # suggest keeps the lowest scores: every metric it offers is lower-is-better in the table
    assert all(describe(m).better == "lower" and describe(m).known for m in OBJECTIVE_METRICS)
    rng = np.random.default_rng(0)
    slow, fast = rng.normal(10, 0.5, 8), rng.normal(5, 0.5, 8)
    lower = improvement(fast, slow)                      # half the time: +50 %
    higher = improvement(slow, fast, higher_is_better=True)  # twice the rate: +100 %
    assert 40 < lower["improvement_pct"] < 60 and lower["ci_low"] > 0 and lower["p_value"] < 0.01
    assert 70 < higher["improvement_pct"] < 150 and higher["ci_low"] > 0 and higher["p_value"] < 0.01
    worse = improvement(fast, slow, higher_is_better=True)
    assert worse["improvement_pct"] < 0 and worse["ci_high"] < 0 and worse["p_value"] > 0.99


STORE = ROOT / "tests" / "report" / "data" / "storage-object.db"   # memory 256 vs 1769 MB, object I/O


def test_throughput_ranks_the_highest_first_in_analyze_and_the_report(tmp_path):
    # issue #25 item 1: "Fastest: 128 MB, 109 Ms" for the slowest size, "timed mean 112 Ms"
    r = run("analyze", STORE, "--response", "throughput_bytes_per_s", "--format", "json")
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)["decisions"][0]
    assert row["higher_is_better"] and row["mean"]["1769"] > row["mean"]["256"]
    assert row["performance"] == "1769" and row["performance_order"].startswith("1769 > 256")
    r = run("report", STORE, "--response", "throughput_bytes_per_s", "--out", tmp_path / "rep", "--formats", "none")
    assert r.exit_code == 0, r.output
    md = (tmp_path / "rep" / "summary.md").read_text()
    answer = md[md.index("## Answer"):md.index("## Campaign overview")]
    assert "**Highest throughput:** **1769 MB**, 1769 MB: 95.7 MB/s" in answer
    assert "Fastest" not in answer and " Ms" not in md and "higher is better" in md
    # the cost table's timed column is the agent's timed workload in seconds, not the rate
    cost_rows = [line for line in md.splitlines() if line.startswith("| 256 MB · 1 KiB · get |")]
    assert cost_rows and " ms" in cost_rows[0] and "B/s" not in cost_rows[0]


def test_compare_takes_the_direction_from_the_measures_table(tmp_path):
    rng = np.random.default_rng(5)
    for name, scale in (("a", 1.0), ("b", 1.3)):   # NEW moves 30 % more bytes per second
        rows = [{"memory": "512", "block": b, "variant": v, "throughput_bytes_per_s": x}
                for b in range(8) for v in ("base", "new")
                for x in rng.normal(100e6 * (scale if v == "new" else 1.0), 2e6, 5)]
        pd.DataFrame(rows).to_csv(tmp_path / f"{name}.csv", index=False)
    r = run("compare", tmp_path / "b.csv", "--by", "variant", "--factors", "memory,variant",
            "--response", "throughput_bytes_per_s", "--format", "json")
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["measure"]["better"] == "higher" and res["comparison"]["higher_is_better"]
    (cell,) = res["comparison"]["cells"]
    assert cell["verdict"].lower().startswith("improvement"), cell["verdict"]
    r = run("compare", tmp_path / "b.csv", "--by", "variant", "--factors", "memory,variant",
            "--response", "throughput_bytes_per_s", "--lower-is-better", "--format", "json")
    assert r.exit_code == 1   # told lower is better, the 30 % rise is a regression: the gate fails
