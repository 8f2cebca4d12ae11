import json
import sqlite3

import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.store.reader import ResultsFile, measured_only
from faascope.store.schema import HISTORY, SCHEMA_VERSION
from faascope.store.writer import DuplicateRecord, ResultsStore


def make_store(tmp_path, factors=None):
    factors = factors or [{"name": "memory", "boolean": False}, {"name": "direct", "boolean": True},
                          {"name": "status", "boolean": False}]
    st = ResultsStore(tmp_path / "r.db")
    cid = st.create_campaign(
        uid="abcd1234", name="t", spec_json={"name": "t"}, spec_text="name: t", spec_path="t.yaml",
        spec_hash="h", seed=1, replications=2, plan_json={"invocations": 2}, factors=factors,
        provider="local", version="0", cells=[{"key": "k", "index": 0, "levels": {}, "function": {},
                                              "payload": {}}],
        runs=[{"order": 0, "cell_key": "k", "replication": 0, "kind": "measure", "block": 0,
               "force_cold": False},
              {"order": 1, "cell_key": "k", "replication": 1, "kind": "measure", "block": 0,
               "force_cold": False}])
    return st, cid


def rec(cid, rep, **kw):
    r = {"campaign_id": cid, "cell_key": "k", "levels_json": json.dumps(
        {"memory": 128, "direct": True, "status": "x"}), "replication": rep, "kind": "measure",
        "warmup": 0, "order_index": rep, "block": 0, "status": "ok", "cold_forced": 0,
        "client_send_ns": 1_700_000_000_000_000_000, "client_headers_ns": 1_700_000_000_010_000_000,
        "client_end_ns": 1_700_000_000_012_000_000, "client_latency_s": 0.012,
        "client_headers_s": 0.010, "attempts": 1, "retries": 0,
        "response_json": json.dumps({"ok": True, "cold": rep == 0,
                                     "instance": {"id": "i1", "sandbox": "/s"},
                                     "timings": {"received_ns": 1, "workload_start_ns": 2,
                                                 "workload_end_ns": 3},
                                     "workload": {"kind": "fileio", "elapsed_s": 0.5 + rep,
                                                  "bytes": 10, "ops": 1,
                                                  "direct_effective": True},
                                     "error": None}),
        "started_at": "2024-04-10T12:00:00.000000Z", "ended_at": "2024-04-10T12:00:00.012000Z",
        "started_at_local": "2024-04-10T14:30:05.000000+02:00"}
    r.update(kw)
    return r


def test_wal_full_sync_and_unique_slots(tmp_path):
    st, cid = make_store(tmp_path)
    assert st.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert st.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    st.record(rec(cid, 0))
    with pytest.raises(DuplicateRecord):
        st.record(rec(cid, 0))
    assert st.count(cid) == 1
    assert [r["replication"] for r in st.pending_runs(cid)] == [1]
    with pytest.raises(Exception):
        st.create_campaign(uid="x", name="again", spec_json={}, spec_text="", spec_path="",
                           spec_hash="", seed=0, replications=1, plan_json={}, factors=[],
                           provider="local", version="0", cells=[], runs=[])
    st.close()


def test_flat_view_columns(tmp_path):
    st, cid = make_store(tmp_path)
    st.record(rec(cid, 0))
    st.record(rec(cid, 1, status="function_error", response_json=None,
                  error_type="Runtime.ExitError"))
    st.conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in st.conn.execute("SELECT * FROM invocations_flat")]
    a, b = rows
    assert a["memory"] == 128 and a["direct"] == "true"
    assert a["factor_status"] == "x" and a["status"] == "ok"  # a factor may not shadow a column
    assert a["latency_seconds"] == 0.5 and a["client_latency_seconds"] == 0.012
    assert a["cold"] == 1 and a["instance_id"] == "i1" and a["sandbox"] == "/s"
    assert a["ok"] == 1 and a["error_type"] is None and a["direct_effective"] == 1
    assert a["time_of_day"] == "14:30:05" and a["hour"] == 14 and a["day_of_week"] == "Wednesday"
    assert a["agent_workload_end_ns"] == 3
    assert b["ok"] == 0 and b["latency_seconds"] is None and b["error_type"] == "Runtime.ExitError"
    st.close()


def test_export_csv_and_parquet(tmp_path):
    st, cid = make_store(tmp_path)
    st.record(rec(cid, 0))
    st.record(rec(cid, 1, kind="warmup", warmup=1, replication=0, order_index=1))
    st.close()
    db = tmp_path / "r.db"
    r = CliRunner().invoke(cli, ["export", str(db), "--format", "csv", "--out", str(tmp_path / "o.csv")])
    assert r.exit_code == 0, r.output
    df = pd.read_csv(tmp_path / "o.csv")
    assert len(df) == 2 and {"memory", "latency_seconds", "warmup", "cold"} <= set(df.columns)
    r = CliRunner().invoke(cli, ["export", str(db), "--format", "parquet", "--out",
                                 str(tmp_path / "o.parquet"), "--no-warmups"])
    assert r.exit_code == 0, r.output
    dp = pd.read_parquet(tmp_path / "o.parquet")
    assert len(dp) == 1 and dp["latency_seconds"].iloc[0] == 0.5


def test_export_bad_inputs(tmp_path):
    r = CliRunner().invoke(cli, ["export", str(tmp_path / "none.db"), "--format", "csv", "--out",
                                 str(tmp_path / "o.csv")])
    assert r.exit_code == 2 and "RESULTS" in r.output
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite at all " * 100)
    r = CliRunner().invoke(cli, ["export", str(junk), "--format", "csv", "--out", str(tmp_path / "o.csv")])
    assert r.exit_code == 2
    r = CliRunner().invoke(cli, ["export", str(junk), "--format", "xlsx", "--out", "x"])
    assert r.exit_code == 2 and "--format" in r.output


def test_new_files_record_the_current_schema_version_and_the_history_is_complete(tmp_path):
    st, _ = make_store(tmp_path)
    version = st.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    st.close()
    assert int(version) == SCHEMA_VERSION
    # every version from 1 up to the current one says when and what changed, in order
    assert [v for v, _, _ in HISTORY] == list(range(1, SCHEMA_VERSION + 1))
    assert all(date and what for _, date, what in HISTORY)


def test_reading_never_changes_a_results_file(tmp_path):
    """The reader opens read-only: a legacy file in rollback-journal mode stays in it, and its
    bytes stay the same (the writer would have switched it to WAL)."""
    st, cid = make_store(tmp_path)
    st.record(rec(cid, 0))
    st.conn.execute("PRAGMA journal_mode=DELETE")
    st.close()
    db = tmp_path / "r.db"
    before = db.read_bytes()
    with ResultsFile(db) as rf:
        assert len(rf.flat()) == 1 and rf.campaign_meta()["planned"] == 2
        assert not rf.is_burst_campaign()
    assert db.read_bytes() == before


def test_one_policy_for_warmups_and_failures():
    df = pd.DataFrame({"warmup": [0, 0, 1, 1, 0], "ok": [1, 0, 1, 0, 1], "x": range(5)})
    kept, out = measured_only(df)
    assert list(kept["x"]) == [0, 4]
    assert (out.warmups, out.failed, out.total) == (2, 1, 3)  # a failed warm-up is a warm-up
    kept, out = measured_only(df, keep_failed=True)
    assert list(kept["x"]) == [0, 1, 4] and (out.warmups, out.failed) == (2, 0)
    # a foreign table without the columns is all measurements
    kept, out = measured_only(pd.DataFrame({"x": [1, 2]}))
    assert len(kept) == 2 and out.total == 0
