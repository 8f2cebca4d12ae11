"""`faascope analyze` end to end: the JSON contract, the thesis reference data, input formats and
the exit-2 errors."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.analysis.commands import analyze_command

DATA = Path(__file__).resolve().parents[1] / "data"
#: the 2024 thesis's measurements, shipped with the examples (examples/data/thesis-2024/README.md)
THESIS = Path(__file__).resolve().parents[2] / "examples/data/thesis-2024/main_experiment.csv"


def run(*args):
    return CliRunner().invoke(analyze_command, [str(a) for a in args], catch_exceptions=False)


def run_json(*args):
    r = run(*args, "--format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


CELL_KEYS = {"levels", "n", "mean", "median", "std", "cv", "min", "max", "p90", "p95", "p99", "mean_ci", "median_ci"}
ANOVA_KEYS = {"source", "df", "sum_sq", "pct_variation", "F", "F_crit", "p_value", "significant"}
TUKEY_KEYS = {"term", "group1", "group2", "meandiff", "lower", "upper", "p_adj", "reject"}


def check_contract(res, response, factors, model="full", alpha=0.05):
    assert res["response"] == response and res["factors"] == factors
    assert res["model"] == model and res["alpha"] == alpha
    assert isinstance(res["n"], int) and res["n"] == sum(c["n"] for c in res["cells"])
    for c in res["cells"]:
        assert CELL_KEYS <= set(c)
        assert set(c["levels"]) == set(factors) and all(isinstance(v, str) for v in c["levels"].values())
        # an interval, or null and why (too few values for one that covers: faascope.analysis.intervals)
        for key in ("mean_ci", "median_ci"):
            assert (len(c[key]) == 2 and c[f"{key}_why"] is None) if c[key] else c[f"{key}_why"].startswith(("too few", "a few values dominate"))
    for r in res["anova"][:-1]:
        assert ANOVA_KEYS <= set(r) and isinstance(r["significant"], bool) and isinstance(r["df"], int)
    resid = res["anova"][-1]
    assert resid["source"] == "Residual" and {"df", "sum_sq", "pct_variation"} <= set(resid)
    for r in res["tukey"]:
        assert TUKEY_KEYS <= set(r) and isinstance(r["reject"], bool)


def test_json_contract_warpbreaks():
    res = run_json(DATA / "warpbreaks.csv", "--response", "breaks", "--factors", "wool,tension",
                   "--levels", "tension=L,M,H")
    check_contract(res, "breaks", ["wool", "tension"])
    assert [r["source"] for r in res["anova"]] == ["wool", "tension", "wool:tension", "Residual"]
    assert {r["term"] for r in res["tukey"]} == {"wool", "tension", "wool:tension"}
    assert res["ss_type"] == "II" and res["balanced"] is True
    inter = [r for r in res["tukey"] if r["term"] == "wool:tension"]
    assert (inter[0]["group1"], inter[0]["group2"]) == ("A:L", "B:L")  # R's labels and order


def test_factor_order_names_interactions():
    res = run_json(DATA / "warpbreaks.csv", "--response", "breaks", "--factors", "tension,wool",
                   "--model", "additive", "--alpha", "0.1")
    check_contract(res, "breaks", ["tension", "wool"], "additive", 0.1)
    assert [r["source"] for r in res["anova"]] == ["tension", "wool", "Residual"]


def test_markdown_and_table_formats():
    args = [DATA / "toothgrowth.csv", "--response", "len", "--factors", "supp,dose"]
    md = run(*args, "--format", "markdown")
    assert md.exit_code == 0
    for heading in ("## Per-cell statistics", "## ANOVA", "## Tukey HSD", "## Decision table",
                    "| Source | df | Sum Sq | % of variation"):
        assert heading in md.stdout
    assert "| supp:dose | 2 | 108.3 |" in md.stdout
    tb = run(*args)
    assert tb.exit_code == 0 and "Tukey HSD" in tb.stdout


def test_parquet_and_store_inputs(tmp_path):
    df = pd.read_csv(DATA / "toothgrowth.csv")  # dose read as float: 0.5, 1.0, 2.0
    df["size"] = [10000 if i % 2 else 1024000000 for i in range(len(df))]
    df.to_parquet(tmp_path / "t.parquet")
    res = run_json(tmp_path / "t.parquet", "--response", "len", "--factors", "supp,dose", "--no-robust")
    assert sorted({c["levels"]["dose"] for c in res["cells"]}) == ["0.5", "1", "2"]
    res2 = run_json(tmp_path / "t.parquet", "--response", "len", "--factors", "supp,size", "--no-robust")
    assert {c["levels"]["size"] for c in res2["cells"]} == {"10000", "1024000000"}

    db = tmp_path / "results.db"
    con = sqlite3.connect(db)
    df.to_sql("invocations", con, index=False)
    con.execute("CREATE VIEW invocations_flat AS SELECT * FROM invocations")
    con.commit()
    con.close()
    res3 = run_json(db, "--response", "len", "--factors", "supp,dose", "--no-robust")
    assert res3["n"] == 60

    bare = tmp_path / "other.sqlite"
    sqlite3.connect(bare).execute("CREATE TABLE x (a)").connection.close()
    r = run(bare, "--response", "len", "--factors", "supp")
    assert r.exit_code == 2 and "invocations_flat" in r.output


def test_filters_latest_and_order(tmp_path):
    df = pd.read_csv(DATA / "warpbreaks.csv")
    df["ts"] = [f"2024-01-{1 + i % 28:02d}T{i // 28:02d}:00:00" for i in range(len(df))]
    df.to_csv(tmp_path / "w.csv", index=False)
    res = run_json(tmp_path / "w.csv", "--response", "breaks", "--factors", "wool,tension",
                   "--latest", "5", "--order-by", "ts", "--no-robust")
    assert all(c["n"] == 5 for c in res["cells"]) and res["n"] == 30
    res = run_json(tmp_path / "w.csv", "--response", "breaks", "--factors", "tension",
                   "--filter", "wool=A", "--filter", "breaks>=20", "--no-robust")
    assert res["n"] == len(df[(df.wool == "A") & (df.breaks >= 20)])
    res = run_json(tmp_path / "w.csv", "--response", "breaks", "--factors", "tension",
                   "--filter", "tension!=H", "--no-robust")
    assert {c["levels"]["tension"] for c in res["cells"]} == {"L", "M"}
    r = run(tmp_path / "w.csv", "--response", "breaks", "--factors", "tension", "--latest", "3")
    assert r.exit_code == 2 and "--order-by" in r.output


@pytest.mark.parametrize("args, needle", [
    (["--response", "nope", "--factors", "wool"], "available columns: breaks, wool, tension"),
    (["--response", "breaks", "--factors", "wool,nope"], "'nope'"),
    (["--response", "wool", "--factors", "tension"], "non-numeric"),
    (["--response", "breaks", "--factors", "wool", "--filter", "tension=L", "--filter", "wool=A"],
     "factor 'wool' has one level"),
    (["--response", "breaks", "--factors", "wool", "--filter", "tension=X"], "no row has tension='X'"),
    (["--response", "breaks", "--factors", "wool,tension", "--compare", "zzz"], "--compare"),
    (["--response", "breaks", "--factors", "wool", "--filter", "bad filter"], "--filter"),
])
def test_bad_input_exit_2(args, needle):
    r = run(DATA / "warpbreaks.csv", *args)
    assert r.exit_code == 2, r.output
    assert needle in r.output


def test_cell_with_one_row_is_named(tmp_path):
    df = pd.read_csv(DATA / "warpbreaks.csv")
    df = pd.concat([df[~((df.wool == "B") & (df.tension == "H"))],
                    df[(df.wool == "B") & (df.tension == "H")].head(1)])
    df.to_csv(tmp_path / "w.csv", index=False)
    r = run(tmp_path / "w.csv", "--response", "breaks", "--factors", "wool,tension")
    assert r.exit_code == 2 and "cell wool=B, tension=H has 1 row" in r.output


def test_thesis_large_files_filtered_tier_is_clear_error():
    r = run(THESIS, "--response", "latency_seconds", "--factors", "system_name,resource_tier",
            "--filter", "operation_type=WRITE", "--filter", "file_size_bytes=1024000000")
    assert r.exit_code == 2
    assert "resource_tier" in r.output and "one level" in r.output and "TIER_5" in r.output


def test_thesis_large_writes_platform_by_io_size():
    res = run_json(THESIS, "--response", "latency_seconds", "--factors", "system_name,io_size_bytes",
                   "--filter", "operation_type=WRITE", "--filter", "file_size_bytes=1024000000",
                   "--latest", "150", "--bootstrap", "300")
    check_contract(res, "latency_seconds", ["system_name", "io_size_bytes"])
    assert res["n"] == 600 and res["balanced"]
    assert {c["levels"]["io_size_bytes"] for c in res["cells"]} == {"512", "128000"}
    means = [c["mean"] for c in res["cells"]]
    assert 3 < min(means) and max(means) < 10.5  # the brief: large writes took 3.6-9.8 s
    assert abs(sum(r["pct_variation"] for r in res["anova"]) - 100) < 1e-9


def test_thesis_per_operation_and_file_size():
    r = run(THESIS, "--response", "latency_seconds", "--factors", "system_name,resource_tier,io_size_bytes",
            "--scenario", "operation_type,file_size_bytes", "--latest", "150", "--bootstrap", "300",
            "--format", "json")
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert len(res["scenarios"]) == 4
    for s in res["scenarios"]:
        assert s["n"] == 600 and s["balanced"]
        kept = ["system_name", "resource_tier"] if s["scenario"]["file_size_bytes"] == "10000" \
            else ["system_name", "io_size_bytes"]
        check_contract(s, "latency_seconds", kept)
    top = {(d["scenario"]["operation_type"], d["scenario"]["file_size_bytes"]): d
           for d in res["decisions"] if "all" in d["within"].values()}
    assert len(top) == 4
    # direct 1 GB reads: GCF (in-memory /tmp) far faster than Lambda (the brief: 4.8 s vs 265 s at 512 B)
    assert top[("READ", "1024000000")]["performance"] == "GCF_DD"
    small = next(s for s in res["scenarios"] if s["scenario"] == {"operation_type": "WRITE", "file_size_bytes": "10000"})
    assert max(c["cv"] for c in small["cells"]) > 3  # small-file CVs up to ~480 %
    md = run(THESIS, "--response", "latency_seconds", "--factors", "system_name,resource_tier,io_size_bytes",
             "--scenario", "operation_type,file_size_bytes", "--latest", "150", "--bootstrap", "200",
             "--no-robust", "--format", "markdown")
    assert md.exit_code == 0
    assert md.stdout.count("### ANOVA") == 4 and "## Decision table" in md.stdout


def test_store_input_leaves_out_warmups_and_failures(tmp_path):
    df = pd.read_csv(DATA / "toothgrowth.csv")
    df["warmup"] = [1 if i < 3 else 0 for i in range(len(df))]
    df["ok"] = [0 if i in (10, 11) else 1 for i in range(len(df))]
    db = tmp_path / "results.db"
    con = sqlite3.connect(db)
    df.to_sql("invocations", con, index=False)
    con.execute("CREATE VIEW invocations_flat AS SELECT * FROM invocations")
    con.commit()
    con.close()
    res = run_json(db, "--response", "len", "--factors", "supp,dose", "--no-robust")
    assert res["n"] == 60 - 3 - 2
    assert any("5 warm-up or failed" in n for n in res["selection"]["notes"])
