"""`analyze` and `report` over several inputs: one table with a ``source`` column naming each row's
input, refused (exit 2, naming the factor) when the inputs' factors do not mean the same thing.
The results stores are made by the real campaign runner with the in-process fake provider."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from driver.driver_fakes import InProcessFakeProvider
from faascope.cli import cli
from faascope.driver.runner import run_campaign

SPEC = """
name: many-{name}
provider: {{kind: local}}
function: {{memory_mb: 128}}
workload: {{kind: spin, iterations: 1000}}
factors:
  memory: [128, 256]
{extra}
design: {{replications: 4, seed: {seed}}}
"""


def store(tmp_path: Path, name: str, seed: int, extra: str = "") -> Path:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(SPEC.format(name=name, seed=seed, extra=extra))
    db = tmp_path / f"{name}.db"
    run_campaign(spec, db, provider_factory=lambda _: InProcessFakeProvider(seed=seed),
                 progress=False)
    return db


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_two_stores_analyse_as_one_table_with_a_source_factor_with_in_process_fake_provider(tmp_path):
    a, b = store(tmp_path, "a", 1), store(tmp_path, "b", 2)
    r = run("analyze", str(a), str(b), "--response", "latency_seconds", "--factors",
            "source,memory", "--format", "json")
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    cells = {(c["levels"]["source"], c["levels"]["memory"]): c["n"] for c in res["cells"]}
    assert cells == {("a.db", "128"): 4, ("a.db", "256"): 4, ("b.db", "128"): 4, ("b.db", "256"): 4}
    assert res["selection"]["input"] == [str(a), str(b)]
    assert any(t["source"] == "source" for t in res["anova"])

    out = tmp_path / "report"
    r = run("report", str(a), str(b), "--out", str(out), "--formats", "none")
    assert r.exit_code == 0, r.output
    stacked = pd.read_csv(out / "inputs.csv")
    assert stacked.groupby("source").size().to_dict() == {"a.db": 8, "b.db": 8}
    summary = (out / "summary.md").read_text()
    assert "a.db" in summary and "b.db" in summary and "source" in summary


def test_stores_with_different_factors_are_refused_naming_the_factor_with_in_process_fake_provider(tmp_path):
    a = store(tmp_path, "a", 1)
    c = store(tmp_path, "c", 3, extra="  iterations: [1000, 2000]")
    r = run("analyze", str(a), str(c), "--response", "latency_seconds", "--factors", "memory")
    assert r.exit_code == 2, r.output
    assert "factor iterations" in r.output and "c.db" in r.output and "a.db" in r.output


def test_a_factor_in_another_unit_is_refused(tmp_path):
    rows = [{"size": s, "y": y} for s in (1000, 2000) for y in (1.0, 1.1, 1.2)]
    pd.DataFrame(rows).to_csv(tmp_path / "bytes.csv", index=False)
    pd.DataFrame([{**r, "size": f"{r['size'] // 1000}KB"} for r in rows]).to_csv(
        tmp_path / "text.csv", index=False)
    r = run("analyze", str(tmp_path / "bytes.csv"), str(tmp_path / "text.csv"), "--response", "y",
            "--factors", "source,size")
    assert r.exit_code == 2, r.output
    assert "factor size" in r.output and "1KB" in r.output
    # the same unit in both: one table, the source a factor like any other
    pd.DataFrame(rows).to_csv(tmp_path / "again.csv", index=False)
    r = run("analyze", str(tmp_path / "bytes.csv"), str(tmp_path / "again.csv"), "--response", "y",
            "--factors", "source,size", "--format", "json")
    assert r.exit_code == 0, r.output
    assert {c["levels"]["source"] for c in json.loads(r.stdout)["cells"]} == {"bytes.csv", "again.csv"}


def test_an_input_that_has_a_source_column_is_refused(tmp_path):
    pd.DataFrame({"source": ["x", "y"] * 3, "y": range(6)}).to_csv(tmp_path / "s.csv", index=False)
    pd.DataFrame({"source": ["x", "y"] * 3, "y": range(6)}).to_csv(tmp_path / "t.csv", index=False)
    r = run("analyze", str(tmp_path / "s.csv"), str(tmp_path / "t.csv"), "--response", "y",
            "--factors", "source")
    assert r.exit_code == 2 and "already has a column 'source'" in r.output
