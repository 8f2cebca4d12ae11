"""A damaged results file (pages overwritten, a table dropped) is named as damaged by every
command that reads or writes it: exit 2, what is still readable, how to recover, no traceback
(it was a raw sqlite3/pandas traceback from run, export, analyze and report)."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from faascope.cli import cli

DATA = Path(__file__).resolve().parent / "data"
NAME = "legacy-sequential-v1"


def damaged_copy(tmp_path: Path, how: str) -> Path:
    db = tmp_path / "damaged.db"
    shutil.copyfile(DATA / f"{NAME}.db", db)
    if how == "pages":
        # the file has 21 pages of 4096 bytes; 18 and 19 hold invocation rows
        with open(db, "r+b") as fh:
            for page in (18, 19):
                fh.seek((page - 1) * 4096)
                fh.write(b"\xa5" * 4096)
    else:
        with sqlite3.connect(db) as c:
            c.execute(f"DROP TABLE {how}")
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


def commands(db: Path, spec: Path, out: Path) -> dict[str, list[str]]:
    return {
        "export": ["export", str(db), "--format", "csv", "--out", str(out / "x.csv")],
        "analyze": ["analyze", str(db), "--response", "latency_seconds", "--factors", "memory"],
        "report": ["report", str(db), "--out", str(out / "report")],
        "run": ["run", str(spec), "--results", str(db), "--resume", "--no-progress"],
    }


@pytest.mark.parametrize("how", ["pages", "invocations", "planned_runs", "events"])
@pytest.mark.parametrize("command", ["export", "analyze", "report", "run"])
def test_a_damaged_results_file_is_exit_2_naming_it(tmp_path, how, command):
    db = damaged_copy(tmp_path, how)
    spec = tmp_path / "spec.yaml"
    shutil.copyfile(DATA / f"{NAME}.spec.yaml", spec)
    before = db.read_bytes()
    r = CliRunner().invoke(cli, commands(db, spec, tmp_path)[command])
    assert r.exit_code == 2, (r.output, r.exception)
    assert isinstance(r.exception, SystemExit), repr(r.exception)  # a message, not a traceback
    assert "Traceback" not in r.output
    assert f"{db} is damaged" in r.output, r.output
    assert ".recover" in r.output
    if how == "pages":
        assert "unreadable: invocations" in r.output and "campaign (1 row)" in r.output
    else:
        assert f"missing: {how}" in r.output
    assert db.read_bytes() == before  # nothing was written into it
