"""What a burst campaign adds to the results store (same SQLite file, same campaign).

- ``burst_members``: one row per invocation slot that was sent in a burst: which burst, attempt,
  member index, stagger batch, planned offset, function copy. Written in the **same
  transaction** as the invocation's record, so the two never disagree.
- ``bursts``: one row per burst attempt: planned and sent members, the schedule, timing of the
  dispatch (first/last send, spread, lag behind the schedule), statuses, throttles, error
  budget, and whether it completed, was interrupted or stopped.
- view ``burst_invocations``: ``invocations_flat`` joined with ``burst_members``, plus the
  derived per-invocation times (wait, run, service; docs/concurrency.md).

Records are handed to a writer thread (its own SQLite connection) that commits whatever has
queued up in one transaction (group commit, ``synchronous=FULL``): the event loop never waits
for an fsync, and a record is durable at most one commit after its reply arrived.
"""
from __future__ import annotations

import json
import queue
import sqlite3
import threading
from pathlib import Path
from typing import Any, Optional

from faascope.store.sqlite import INVOCATION_COLUMNS, DuplicateRecord, ResultsStore, utc_now

SCHEMA = """
CREATE TABLE IF NOT EXISTS burst_members (
    campaign_id INTEGER NOT NULL,
    cell_key TEXT NOT NULL,
    replication INTEGER NOT NULL,
    kind TEXT NOT NULL,
    burst INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    member INTEGER NOT NULL,
    batch INTEGER NOT NULL,
    planned_offset_s REAL NOT NULL,
    scheduled_ns INTEGER NOT NULL,
    function_copy INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, cell_key, replication, kind)
);
CREATE TABLE IF NOT EXISTS bursts (
    campaign_id INTEGER NOT NULL,
    cell_key TEXT NOT NULL,
    burst INTEGER NOT NULL,
    kind TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    planned INTEGER NOT NULL,
    sent INTEGER,
    recorded INTEGER,
    status TEXT NOT NULL,
    start_ns INTEGER,
    first_send_ns INTEGER,
    last_send_ns INTEGER,
    send_spread_s REAL,
    schedule_json TEXT,
    detail_json TEXT,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    PRIMARY KEY (campaign_id, cell_key, burst, kind, attempt)
);
"""

VIEW = """
CREATE VIEW IF NOT EXISTS burst_invocations AS
SELECT f.*,
    m.burst, m.attempt, m.member, m.batch, m.planned_offset_s, m.scheduled_ns, m.function_copy,
    (f.client_send_ns - m.scheduled_ns) / 1e9 AS send_lag_s,
    (f.agent_received_ns - f.client_send_ns) / 1e9 AS wait_s,
    (f.agent_workload_end_ns - f.agent_received_ns) / 1e9 AS run_s,
    (f.agent_workload_end_ns - f.client_send_ns) / 1e9 AS service_s,
    (f.client_end_ns - f.client_send_ns) / 1e9 AS round_trip_s
FROM burst_members m
JOIN invocations i ON i.campaign_id = m.campaign_id AND i.cell_key = m.cell_key
    AND i.replication = m.replication AND i.kind = m.kind
JOIN invocations_flat f ON f.invocation_id = i.id
"""

MEMBER_COLUMNS = ["campaign_id", "cell_key", "replication", "kind", "burst", "attempt", "member",
                  "batch", "planned_offset_s", "scheduled_ns", "function_copy"]

_INV_SQL = (f"INSERT INTO invocations({', '.join(INVOCATION_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(INVOCATION_COLUMNS))})")
_MEM_SQL = (f"INSERT INTO burst_members({', '.join(MEMBER_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(MEMBER_COLUMNS))})")


def ensure_schema(store: ResultsStore) -> None:
    store.conn.executescript("BEGIN;" + SCHEMA + VIEW + ";COMMIT;")


def has_burst_tables(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE name='burst_members'").fetchone() is not None


def next_attempt(store: ResultsStore, cid: int, cell_key: str, burst: int, kind: str) -> int:
    row = store.conn.execute("SELECT max(attempt) FROM bursts WHERE campaign_id=? AND cell_key=? "
                             "AND burst=? AND kind=?", (cid, cell_key, burst, kind)).fetchone()
    return (row[0] or 0) + 1


def begin_burst(store: ResultsStore, cid: int, cell_key: str, burst: int, kind: str, attempt: int,
                planned: int, start_ns: int, schedule: dict) -> None:
    store._tx([("INSERT INTO bursts(campaign_id, cell_key, burst, kind, attempt, planned, status, "
                "start_ns, schedule_json, started_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (cid, cell_key, burst, kind, attempt, planned, "running", start_ns,
                 json.dumps(schedule), utc_now()))])


def end_burst(store: ResultsStore, cid: int, cell_key: str, burst: int, kind: str, attempt: int,
              *, status: str, sent: int, recorded: int, first_send_ns: Optional[int],
              last_send_ns: Optional[int], detail: dict) -> None:
    spread = ((last_send_ns - first_send_ns) / 1e9
              if first_send_ns is not None and last_send_ns is not None else None)
    store._tx([("UPDATE bursts SET status=?, sent=?, recorded=?, first_send_ns=?, last_send_ns=?, "
                "send_spread_s=?, detail_json=?, ended_at=? WHERE campaign_id=? AND cell_key=? AND "
                "burst=? AND kind=? AND attempt=?",
                (status, sent, recorded, first_send_ns, last_send_ns, spread, json.dumps(detail),
                 utc_now(), cid, cell_key, burst, kind, attempt))])


class RecordWriter:
    """A thread that writes (invocation record, member row) pairs in group commits."""

    def __init__(self, path: Path, max_batch: int = 512):
        self.path = Path(path)
        self.max_batch = max_batch
        self._q: "queue.Queue[Any]" = queue.Queue()
        self._error: Optional[BaseException] = None
        self.written = 0
        self._cv = threading.Condition()
        self._enqueued = 0
        self._thread = threading.Thread(target=self._run, name="faascope-record-writer", daemon=True)
        self._thread.start()

    def put(self, rec: dict, member: dict) -> None:
        if self._error is not None:
            raise self._error
        with self._cv:
            self._enqueued += 1
        self._q.put((rec, member))

    def _run(self) -> None:
        store = ResultsStore(self.path)
        try:
            while True:
                item = self._q.get()
                if item is None:
                    return
                batch = [item]
                stop = False
                while len(batch) < self.max_batch:
                    try:
                        nxt = self._q.get_nowait()
                    except queue.Empty:
                        break
                    if nxt is None:
                        stop = True
                        break
                    batch.append(nxt)
                try:
                    self._write(store, batch)
                except BaseException as exc:  # surfaced to the producer
                    self._error = exc
                with self._cv:
                    self.written += len(batch)
                    self._cv.notify_all()
                if stop:
                    return
        finally:
            store.close()

    @staticmethod
    def _write(store: ResultsStore, batch: list) -> None:
        stmts = []
        for rec, mem in batch:
            stmts.append((_INV_SQL, tuple(rec.get(c) for c in INVOCATION_COLUMNS)))
            stmts.append((_MEM_SQL, tuple(mem.get(c) for c in MEMBER_COLUMNS)))
        try:
            store._tx(stmts)
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" in str(exc):
                r = batch[0][0]
                raise DuplicateRecord(f"a record of this group is already stored (e.g. "
                                      f"{r.get('cell_key')} replication {r.get('replication')})") from None
            raise

    def flush(self, timeout: Optional[float] = None) -> None:
        """Wait until everything put so far is committed (or raise the writer's error)."""
        with self._cv:
            self._cv.wait_for(lambda: self.written >= self._enqueued or self._error is not None,
                              timeout=timeout)
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        self._q.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error
