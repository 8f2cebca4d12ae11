"""Issue #25 item 10: the numbers a user reads are readable: values in their unit, auto-scaled
(µs/ms/s, MB/s), never "1.421e-05" or "± 1.1e+02"; sizes as labelled levels (10 KB), not raw
bytes; at 80 columns no value is broken across lines."""
from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner
from rich.console import Console

from faascope.analysis.dataset import load_dataset
from faascope.analysis.render import fit_section, print_tables, sections, to_markdown
from faascope.analysis.scenarios import Options, analyse, to_json
from faascope.cli import cli

ROOT = Path(__file__).resolve().parents[2]
THESIS = ROOT / "examples" / "data" / "thesis-2024" / "main_experiment.csv"
STORE = ROOT / "tests" / "report" / "data" / "storage-object.db"
SCIENTIFIC = re.compile(r"\d\.?\d*e[+-]\d\d")


def _thesis():
    ds = load_dataset(THESIS, response="latency_seconds",
                      factors=["system_name", "resource_tier", "io_size_bytes"],
                      scenario=["operation_type", "file_size_bytes"], latest=30)
    opts = Options(n_boot=200, robust=False)
    return ds, to_json(ds, analyse(ds, opts), opts)


def test_decision_table_means_are_in_auto_scaled_units_with_labelled_levels():
    ds, res = _thesis()
    md = to_markdown(res, ds.info)
    table = md.split("## Decision table")[1].split("\n## ")[0]
    assert not SCIENTIFIC.search(table), table
    assert "µs" in table and " s;" in table or " s |" in table
    assert "| 10 KB |" in table and "| 1024 MB |" in table and "| 512 B |" in table
    assert "10000" not in table and "1024000000" not in table


def test_half_widths_and_relative_widths_are_never_in_scientific_notation():
    r = CliRunner().invoke(cli, ["analyze", str(STORE)], env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    cells = r.output.split("Per-cell statistics")[1].split("ANOVA")[0]
    assert not SCIENTIFIC.search(cells), cells
    # 2 values a cell: no interval, and why (issue #25 item 5), where "± 1e+03" was printed
    assert "900 ms, no CI: too few (n = 2" in cells


def test_at_80_columns_no_value_is_broken_across_lines():
    ds, res = _thesis()
    console = Console(width=80, record=True, file=open("/dev/null", "w"))
    print_tables(res, console=console, info=ds.info)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    flat = text.replace("\n", " ")
    for sec in sections(res, wide=False, info=ds.info):
        sec, _ = fit_section(sec, 80)  # what is printed: optional columns may be left out (and said)
        for row in sec.rows:
            for value in row:
                v = str(value)
                if v and v not in ("–",):
                    # every printed value appears whole on one line of the output; prose longer
                    # than a line (a reason) may wrap, but only between its words
                    parts = [v] if len(v) < 60 else v.split()
                    for part in parts:
                        assert any(part in line for line in text.splitlines()), (sec.title, part)
    assert "2000000 00" not in flat


def test_analyze_json_says_the_measure_and_its_unit():
    r = CliRunner().invoke(cli, ["analyze", str(STORE), "--response", "throughput_bytes_per_s",
                                 "--format", "json"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["measure"]["unit"] == "B/s" and res["measure"]["better"] == "higher"
