"""Only ``store/`` touches a results file: no module outside it imports sqlite3 (read from the
source with ``ast``, as tests/test_structure.py reads imports), and the store raises its own
errors, which the layers above catch instead of SQLite's."""
from __future__ import annotations

import ast
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from own_sources import python_sources

import faascope.store.reader as reader
from faascope.analysis.io import load_table
from faascope.cli import cli
from faascope.errors import BadInput
from faascope.driver.report_lines import cells_without_success, failed_cells_message

SRC = Path(__file__).resolve().parents[2] / "src" / "faascope"
DATA = Path(__file__).resolve().parent / "data"


def _sqlite_imports(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            lines += [node.lineno for a in node.names if a.name.split(".")[0] == "sqlite3"]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            if (node.module or "").split(".")[0] == "sqlite3":
                lines.append(node.lineno)
    return lines


def test_no_module_outside_store_imports_sqlite3():
    bad = [f"{p.relative_to(SRC.parent)}:{line}" for p in python_sources()
           if p.relative_to(SRC).parts[0] != "store" for line in _sqlite_imports(p)]
    assert not bad, ("only faascope.store touches a results file (store.reader.ResultsFile, "
                     "store.writer); these import sqlite3:\n" + "\n".join(bad))


def test_the_check_sees_an_import_of_sqlite3(tmp_path):
    # the check would pass vacuously if it missed the ways of importing
    f = tmp_path / "m.py"
    f.write_text("import os, sqlite3 as s\nfrom sqlite3 import Error\ndef f():\n    import sqlite3\n")
    assert _sqlite_imports(f) == [1, 2, 4]


def test_cells_without_success_go_through_the_store(tmp_path):
    db = tmp_path / "r.db"
    shutil.copyfile(DATA / "legacy-sequential-v1.db", db)
    got = sorted(cells_without_success(db))
    # the fixture's two 3e9-iteration cells timed out in every measured invocation
    assert [(k, n) for k, n, _ in got] == [("memory=128|iterations=3000000000", 3),
                                           ("memory=256|iterations=3000000000", 3)]
    assert all(errs for _, _, errs in got)
    assert "2 cell(s) had no successful invocation" in failed_cells_message(db)


def test_cells_without_success_of_an_unreadable_file_are_none(tmp_path):
    # a closing remark of `run`: a file that cannot be read gives no remark, never an error
    assert cells_without_success(tmp_path / "missing.db") == []
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 100)
    assert cells_without_success(tmp_path / "junk.db") == []
    db = tmp_path / "no-invocations.db"
    shutil.copyfile(DATA / "legacy-sequential-v1.db", db)
    with sqlite3.connect(db) as c:
        c.execute("DROP TABLE invocations")
    assert cells_without_success(db) == []
    assert failed_cells_message(db) is None


def test_a_file_sqlite_cannot_open_is_the_stores_error(tmp_path, monkeypatch):
    db = tmp_path / "r.db"
    shutil.copyfile(DATA / "legacy-sequential-v1.db", db)

    def refuse(*a, **k):
        raise sqlite3.OperationalError("unable to open database file")
    monkeypatch.setattr(reader.sqlite3, "connect", refuse)
    with pytest.raises(reader.ResultsFileUnreadable) as exc:
        reader.ResultsFile(db)
    assert exc.value.detail == "unable to open database file"
    assert isinstance(exc.value, BadInput) and exc.value.exit_code == 2
    # load_table's message is the one it made of sqlite3's own error before the store had one
    with pytest.raises(BadInput) as exc:
        load_table(db)
    assert str(exc.value) == f"INPUT: cannot read {db}: unable to open database file"
    # and analyze (which opens the file itself, and used to show sqlite3's traceback) names it
    r = CliRunner().invoke(cli, ["analyze", str(db), "--response", "latency_seconds",
                                 "--factors", "memory"])
    assert r.exit_code == 2, (r.output, r.exception)
    assert isinstance(r.exception, SystemExit), repr(r.exception)  # a message, not a traceback
    assert f"INPUT: cannot read {db}: unable to open database file" in r.output
