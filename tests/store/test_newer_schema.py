"""A results file written by a newer faascope (``meta.schema_version`` above this version's
SCHEMA_VERSION) is never written to: a resumed campaign in it is refused with exit 2 naming
both versions, before anything is written (issue #29: it was resumed and written to). Reading
goes on, read-only, as far as this version's columns go; where they do not, the refusal says
why instead of calling the file damaged."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.store.reader import NewerResultsFile
from faascope.store.schema import SCHEMA_VERSION
from faascope.store.writer import RecordWriter, ResultsStore

DATA = Path(__file__).resolve().parent / "data"
NAME = "legacy-sequential-v1"
NEWER = SCHEMA_VERSION + 1


def newer_copy(tmp_path: Path, name: str = "newer.db") -> Path:
    db = tmp_path / name
    shutil.copyfile(DATA / f"{NAME}.db", db)
    _sql(db, "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", str(NEWER))
    return db


def _sql(db: Path, sql: str, *params) -> None:
    c = sqlite3.connect(db)
    with c:
        c.execute(sql, params)
    c.close()  # the last connection: its write-ahead log is checkpointed and removed


def _files(db: Path) -> dict[str, bytes]:
    """The file and any rows in its write-ahead log (a reader may leave an empty -wal and the
    -shm index behind: SQLite's, not a write)."""
    return {p.name: p.read_bytes() for p in db.parent.glob(db.name + "*")
            if not p.name.endswith("-shm") and p.stat().st_size}


def test_a_newer_file_is_not_resumed(tmp_path):
    db = newer_copy(tmp_path)
    spec = tmp_path / "spec.yaml"
    shutil.copyfile(DATA / f"{NAME}.spec.yaml", spec)
    before = _files(db)
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(db), "--resume",
                                 "--no-progress"])
    assert r.exit_code == 2, (r.output, r.exception)
    assert isinstance(r.exception, SystemExit) and "Traceback" not in r.output
    assert "--results" in r.output and str(db) in r.output
    assert f"schema version {NEWER}" in r.output and f"up to {SCHEMA_VERSION}" in r.output, r.output
    assert _files(db) == before  # not a byte written (no schema upgrade, no event)


def test_no_writer_opens_a_newer_file(tmp_path):
    # every writer (the campaign's store, the burst record writer) opens a ResultsStore
    db = newer_copy(tmp_path)
    with pytest.raises(NewerResultsFile) as exc:
        ResultsStore(db)
    assert exc.value.exit_code == 2 and exc.value.version == NEWER
    # the burst campaigns' record writer (a thread with its own store) reports it, never hangs
    writer = RecordWriter(db)
    with pytest.raises(NewerResultsFile):
        writer.put({}, {})
        writer.flush(timeout=10)
    # a file this version wrote opens as before
    with ResultsStore(tmp_path / "fresh.db") as st:
        st.ensure_schema()


def test_a_newer_file_reads_read_only(tmp_path):
    db = newer_copy(tmp_path)
    before = _files(db)
    old = tmp_path / "same.db"
    shutil.copyfile(DATA / f"{NAME}.db", old)
    want = CliRunner().invoke(cli, ["export", str(old), "--format", "csv", "--out",
                                    str(tmp_path / "want.csv")])
    r = CliRunner().invoke(cli, ["export", str(db), "--format", "csv", "--out",
                                 str(tmp_path / "got.csv")])
    assert want.exit_code == 0 and r.exit_code == 0, (r.output, r.exception)
    assert (tmp_path / "got.csv").read_text() == (tmp_path / "want.csv").read_text()
    assert f"newer faascope (results schema version {NEWER}" in r.output
    assert _files(db) == before


def test_a_newer_file_this_version_cannot_read_is_named_so(tmp_path):
    db = newer_copy(tmp_path)
    # a newer version renamed a column the flat view reads
    _sql(db, "ALTER TABLE invocations RENAME COLUMN client_latency_s TO client_latency_ns")
    r = CliRunner().invoke(cli, ["export", str(db), "--format", "csv", "--out",
                                 str(tmp_path / "x.csv")])
    assert r.exit_code == 2, (r.output, r.exception)
    assert "Traceback" not in r.output
    assert f"schema version {NEWER}" in r.output and f"up to {SCHEMA_VERSION}" in r.output
    assert "cannot read" in r.output and "is damaged" not in r.output, r.output
