"""Results files faascope cannot write, or whose campaign row was changed outside it (issue #29):

- a new ``--results`` file on a read-only file system ended in a sqlite3 traceback;
- an existing results file on a read-only file system was called "not a faascope results file"
  (SQLite cannot create the ``-shm`` index of a WAL file there);
- damaged JSON in the campaign row raised JSONDecodeError from export, report, status and run.

Each is now exit 2 naming the file (reading a read-only file works). The read-only file system
is a real one: a tmpfs remounted read-only (a chmod'ed directory is no obstacle to root, whom the
tests run as), unmounted when the test ends.
"""
from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from faascope.cli import cli

DATA = Path(__file__).resolve().parent / "data"
NAME = "legacy-sequential-v1"


def _invoke(args: list[str]):
    r = CliRunner().invoke(cli, args)
    assert "Traceback" not in r.output, r.output
    if r.exit_code:
        assert isinstance(r.exception, SystemExit), repr(r.exception)  # a message, no traceback
    return r


@pytest.fixture
def read_only_dir(tmp_path):
    """(directory, seal): a tmpfs mounted at ``directory``; ``seal()`` remounts it read-only."""
    d = tmp_path / "ro"
    d.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a read-only file system needs root and mount(8)")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0755", "tmpfs", str(d)],
                       capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")

    def seal():
        subprocess.run(["mount", "-o", "remount,ro", str(d)], check=True, capture_output=True)
        with pytest.raises(OSError) as exc:  # read-only for root too: the test means something
            (d / "probe").write_text("x")
        assert exc.value.errno == errno.EROFS

    try:
        yield d, seal
    finally:
        subprocess.run(["umount", "-l", str(d)], capture_output=True)


@pytest.fixture
def spec(tmp_path) -> Path:
    s = tmp_path / "spec.yaml"
    shutil.copyfile(DATA / f"{NAME}.spec.yaml", s)
    return s


# ------------------------------------------------------------------- read-only file systems
@pytest.mark.parametrize("where", ["file", "subdirectory"])
def test_a_new_results_file_on_a_read_only_file_system_is_exit_2(read_only_dir, spec, where):
    d, seal = read_only_dir
    seal()
    db = d / "new.db" if where == "file" else d / "sub" / "new.db"
    r = _invoke(["run", str(spec), "--results", str(db), "--no-progress"])
    assert r.exit_code == 2, r.output
    assert "--results" in r.output and str(db) in r.output, r.output
    assert "Read-only file system" in r.output or "read-only" in r.output, r.output


def test_an_existing_results_file_on_a_read_only_file_system_reads(read_only_dir, spec, tmp_path):
    d, seal = read_only_dir
    db = d / "r.db"
    shutil.copyfile(DATA / f"{NAME}.db", db)
    c = sqlite3.connect(db)  # in WAL mode, as faascope writes every results file
    assert c.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    c.close()
    assert not Path(f"{db}-wal").exists() and not Path(f"{db}-shm").exists()
    seal()
    # reading: export, analyze, status, report all read it as they read a writable copy
    want = _invoke(["export", str(DATA / f"{NAME}.db"), "--format", "csv",
                    "--out", str(tmp_path / "want.csv")])
    assert want.exit_code == 0, want.output
    r = _invoke(["export", str(db), "--format", "csv", "--out", str(tmp_path / "got.csv")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "got.csv").read_text() == (tmp_path / "want.csv").read_text()
    r = _invoke(["analyze", str(db), "--response", "latency_seconds", "--factors", "memory"])
    assert r.exit_code == 0, r.output
    r = _invoke(["status", str(db)])
    assert "not a faascope results file" not in r.output, r.output
    assert "legacy-sequential" in r.output, r.output
    # writing (a resumed campaign): refused, naming the file, before anything is sent
    r = _invoke(["run", str(spec), "--results", str(db), "--resume", "--no-progress"])
    assert r.exit_code == 2, r.output
    assert "--results" in r.output and str(db) in r.output and "read-only" in r.output, r.output


def test_a_wal_that_cannot_be_indexed_is_refused_not_skipped(read_only_dir, tmp_path):
    # rows still in the write-ahead log: reading the main file alone would miss them, so a
    # read-only file system that keeps SQLite from indexing the log is named, not read past
    d, seal = read_only_dir
    src = tmp_path / "w.db"
    shutil.copyfile(DATA / f"{NAME}.db", src)
    keep = sqlite3.connect(src)  # held open: the log is not checkpointed away at close
    keep.execute("PRAGMA wal_autocheckpoint=0")
    keep.execute("UPDATE campaign SET name='changed-in-the-wal'")
    keep.commit()
    for suffix in ("", "-wal"):
        shutil.copyfile(f"{src}{suffix}", d / f"w.db{suffix}")
    keep.close()
    assert (d / "w.db-wal").stat().st_size > 0
    seal()
    r = _invoke(["export", str(d / "w.db"), "--format", "csv", "--out", str(tmp_path / "x.csv")])
    assert r.exit_code == 2, r.output
    assert "w.db-wal" in r.output and "read-only" in r.output, r.output


# --------------------------------------------------------------- damaged JSON in the campaign
@pytest.mark.parametrize("column,value", [
    ("factors_json", '[{"name": "memory", "field": "function.me'),
    ("factors_json", '{"memory": 1}'),
    ("plan_json", "{not json"),
    ("spec_json", ""),
    ("spec_json", "[1, 2]"),
])
@pytest.mark.parametrize("command", ["export", "report", "status", "run", "analyze"])
def test_damaged_json_in_the_campaign_row_is_exit_2(tmp_path, spec, column, value, command):
    db = tmp_path / "r.db"
    shutil.copyfile(DATA / f"{NAME}.db", db)
    c = sqlite3.connect(db)
    with c:
        c.execute(f"UPDATE campaign SET {column}=?", (value,))
    c.close()
    args = {
        "export": ["export", str(db), "--format", "csv", "--out", str(tmp_path / "x.csv")],
        "report": ["report", str(db), "--out", str(tmp_path / "report")],
        "status": ["status", str(db)],
        "run": ["run", str(spec), "--results", str(db), "--resume", "--no-progress"],
        "analyze": ["analyze", str(db), "--response", "latency_seconds", "--factors", "memory"],
    }[command]
    before = db.read_bytes()
    r = _invoke(args)
    assert r.exit_code == 2, r.output
    assert f"{db} is damaged" in r.output and column in r.output, r.output
    assert db.read_bytes() == before  # nothing was written into it
