"""Resuming a campaign in a file an earlier version wrote first adds what this version records
(schema 4: the deployments table and invocations.deployment), changing no row; a file of this
version is left as it is."""
from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from faascope.store.reader import ResultsFile
from faascope.store.writer import ResultsStore

DATA = Path(__file__).resolve().parent / "data"


def _dump_invocations(db: Path) -> list:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT * FROM invocations ORDER BY id").fetchall()


def test_a_version_1_file_gains_the_deployment_column_and_reads_the_same(tmp_path):
    db = tmp_path / "old.db"
    shutil.copyfile(DATA / "legacy-sequential-v1.db", db)
    before = _dump_invocations(db)
    with ResultsFile(db) as rf:
        flat_before = rf.flat()
    with ResultsStore(db) as st:
        assert st.upgrade_schema() is True
        assert st.upgrade_schema() is False  # once
        st.record({**_dump_row(db), "replication": 999, "deployment": "local"})
    after = _dump_invocations(db)
    assert [r + (None,) for r in before] == after[:len(before)]  # old rows: unchanged, no deployment
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT kind FROM events WHERE kind='schema_upgraded'").fetchall()
        assert c.execute("SELECT deployment FROM invocations WHERE replication=999").fetchone() == ("local",)
    with ResultsFile(db) as rf:
        flat = rf.flat()
    assert set(flat["deployment"]) == {"local"} and set(flat["provider_kind"]) == {"local"}
    cols = [c for c in flat_before.columns]
    flat_old = flat[flat["replication"] != 999][cols].reset_index(drop=True)
    assert flat_old.equals(flat_before[cols].reset_index(drop=True))


def _dump_row(db: Path) -> dict:
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        row = dict(c.execute("SELECT * FROM invocations ORDER BY id LIMIT 1").fetchone())
    row.pop("id")
    return row
