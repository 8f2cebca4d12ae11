"""The one writer of a results file (its schema is :mod:`faascope.store.schema`).

Every record is written in its own transaction with ``synchronous=FULL``: once ``record()``
returns, the row survives a crash (SIGKILL, power loss) of the writer. A burst campaign hands its
records to :class:`RecordWriter`, a thread with its own connection that commits whatever has
queued up in one transaction (group commit): the event loop never waits for an fsync, and a
record is durable at most one commit after its reply arrived.
"""
from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import platform
import queue
import shutil
import socket
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable, Optional

from faascope.errors import BadInput, Failure
from faascope.store.reader import DamagedResultsFile, NewerResultsFile, is_damage, table_health
from faascope.store.schema import (
    BURST_TABLES,
    BURST_VIEW,
    CORE_TABLES,
    DEPLOYMENT_COLUMN,
    INVOCATION_COLUMNS,
    MAY_HAVE_RUN_RERUN_EVENT,
    MEMBER_COLUMNS,
    ROUND_ADDED_EVENT,
    SCHEDULE_TABLES,
    SCHEMA_VERSION,
    SLOT_MISSED_EVENT,
    flat_view_sql,
)
from faascope.store.timestamps import utc_now


class StoreError(Exception):
    pass


class ResultsDiskFull(Failure):
    """The file system holding the results file is full (exit 1): every record committed before
    is kept; the one being written is not, and ``--resume`` runs it again."""

    def __init__(self, path: Path):
        try:
            free = f"{shutil.disk_usage(path.parent).free:,} bytes free"
        except OSError:
            free = "no space left"
        super().__init__(f"the disk holding the results file {path} is full ({free}); every "
                         "record written before is kept, the invocation being recorded is not "
                         "(it runs again on resume). Free some space, or move the file with its "
                         "-wal and -shm files")
        self.path = path


class ResultsNotWritable(BadInput):
    """SQLite cannot create or write the results file (a read-only file system or directory, no
    permission): exit 2 naming the file and SQLite's reason, never a traceback."""

    def __init__(self, path: Path, detail: str):
        super().__init__(f"cannot write the results file {path} ({detail}); is its file system "
                         "or directory read-only? Give a --results file in a place faascope may "
                         "write (records already in the file are kept)", field="--results")
        self.detail = detail


#: SQLite's (primary) result codes that mean the file cannot be created or written
_NOT_WRITABLE = (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM)


def _is_not_writable(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _NOT_WRITABLE  # extended codes keep the primary in the low byte
    msg = str(exc).lower()
    return "readonly database" in msg or "unable to open database file" in msg


def _is_disk_full(exc: BaseException) -> bool:
    return (getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
            or "disk is full" in str(exc).lower())


def _rollback(conn: sqlite3.Connection) -> None:
    """Roll back what is still open. SQLite may already have rolled back itself (on a full disk
    it does), and a ROLLBACK then fails with "no transaction is active": that second error must
    not replace the first."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def _guarded(cls):
    """Turn the database errors of every public method of ``cls`` into errors that say what
    happened to which file (disk full, exit 1; damaged, exit 2) instead of a traceback. The
    UNIQUE violation of a duplicate record is already turned into DuplicateRecord inside."""
    def wrap(fn):
        @functools.wraps(fn)
        def method(self, *args, **kw):
            try:
                return fn(self, *args, **kw)
            except sqlite3.DatabaseError as exc:
                raise store_error(self.path, exc) from None
        return method

    for name, fn in list(vars(cls).items()):
        if callable(fn) and (not name.startswith("_") or name == "__init__") and name != "close":
            setattr(cls, name, wrap(fn))
    return cls


def store_error(path: Path, exc: BaseException) -> BaseException:
    """The error to raise for a database error met while writing ``path``."""
    if _is_disk_full(exc):
        return ResultsDiskFull(path)
    if is_damage(exc):
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                health = table_health(conn)
            finally:
                conn.close()
        except sqlite3.Error:
            health = ""
        return DamagedResultsFile(path, str(exc), "--results", health)
    if _is_not_writable(exc):
        return ResultsNotWritable(path, str(exc))
    return exc


class DuplicateRecord(StoreError):
    """The (campaign, cell, replication, kind) slot already has a record."""


_INV_SQL = (f"INSERT INTO invocations({', '.join(INVOCATION_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(INVOCATION_COLUMNS))})")
_MEM_SQL = (f"INSERT INTO burst_members({', '.join(MEMBER_COLUMNS)}) "
            f"VALUES ({', '.join('?' * len(MEMBER_COLUMNS))})")


def machine_info() -> dict[str, Any]:
    u = platform.uname()
    info = {"hostname": socket.gethostname(), "system": u.system, "release": u.release,
            "machine": u.machine, "python": platform.python_version(), "cpus": os.cpu_count(),
            "timezone": _dt.datetime.now().astimezone().tzname()}
    try:
        import boto3
        import botocore
        info["boto3"] = boto3.__version__
        info["botocore"] = botocore.__version__
    except Exception:  # pragma: no cover
        pass
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu_model"] = line.split(":", 1)[1].strip()
                    break
    except OSError:  # pragma: no cover
        pass
    return info


@_guarded
class ResultsStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.conn = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        try:
            self._refuse_newer()
            mode = self.conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":  # e.g. a file SQLite could open read-only only
                raise ResultsNotWritable(self.path, f"SQLite cannot put it in WAL mode: {mode}")
        except BaseException:
            self.conn.close()
            raise
        self.conn.execute("PRAGMA synchronous=FULL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.conn.execute("PRAGMA busy_timeout=30000")

    def _refuse_newer(self) -> None:
        """NewerResultsFile when a newer faascope wrote the file (meta.schema_version above
        SCHEMA_VERSION), before anything is written: this version cannot know what the newer
        one's rows mean, nor keep them consistent."""
        if self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                             "name='meta'").fetchone() is None:
            return
        row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        try:
            version = int(row[0]) if row else None
        except (TypeError, ValueError):
            return
        if version is not None and version > SCHEMA_VERSION:
            raise NewerResultsFile(
                self.path, version, "--results",
                "so this one does not write to it (nothing was written); report, export, "
                "analyze and status still read it, read-only, as far as this version's columns "
                "go")

    # ------------------------------------------------------------------ basics
    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:  # pragma: no cover
            pass

    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _tx(self, statements: Iterable[tuple[str, tuple | dict]]) -> list[int]:
        ids = []
        cur = self.conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            for sql, params in statements:
                cur.execute(sql, params)
                ids.append(cur.lastrowid)
            cur.execute("COMMIT")
        except BaseException:
            _rollback(self.conn)
            raise
        return ids

    def check_intact(self) -> None:
        """DamagedResultsFile unless SQLite's ``quick_check`` finds the file intact: nothing is
        written into a damaged file (that could cost the records still readable)."""
        problems = [r[0] for r in self.conn.execute("PRAGMA quick_check(5)").fetchall()]
        if problems != ["ok"]:
            raise sqlite3.DatabaseError(f"database disk image is malformed: "
                                        f"{'; '.join(problems)[:300]}")

    def has_schema(self) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='campaign'").fetchone()
        return row is not None

    def ensure_schema(self) -> None:
        self.conn.executescript("BEGIN;" + CORE_TABLES + "COMMIT;")
        self.conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                          (str(SCHEMA_VERSION),))

    # ------------------------------------------------------------------ campaign
    def campaign(self) -> dict | None:
        if not self.has_schema():
            return None
        row = self.conn.execute("SELECT * FROM campaign ORDER BY id LIMIT 1").fetchone()
        return dict(row) if row else None

    def create_campaign(self, *, uid: str, name: str, spec_json: dict, spec_text: str | None,
                        spec_path: str | None, spec_hash: str, seed: int, replications: int,
                        plan_json: dict, factors: list[dict], provider: str, version: str,
                        cells: list[dict], runs: list[dict],
                        deployments: Optional[list[dict]] = None) -> int:
        """Create the campaign with its cells, run order, deployments (``{name, kind, region,
        price_platform, detail}``; default: one named after ``provider``) and flat view in one
        transaction."""
        self.ensure_schema()
        if self.campaign() is not None:
            raise StoreError(f"{self.path} already holds a campaign")
        now = utc_now()
        cur = self.conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            cur.execute(
                "INSERT INTO campaign(uid, name, spec_json, spec_text, spec_path, spec_hash, seed, "
                "replications, plan_json, factors_json, provider, faascope_version, machine_json, "
                "created_at, started_at_unix, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (uid, name, json.dumps(spec_json, sort_keys=True), spec_text, spec_path, spec_hash,
                 seed, replications, json.dumps(plan_json), json.dumps(factors), provider, version,
                 json.dumps(machine_info()), now,
                 _dt.datetime.now(_dt.timezone.utc).timestamp(), "running"))
            cid = cur.lastrowid
            cur.executemany(
                "INSERT INTO cells(campaign_id, cell_key, cell_index, levels_json, function_json, "
                "payload_json) VALUES (?,?,?,?,?,?)",
                [(cid, c["key"], c["index"], json.dumps(c["levels"]), json.dumps(c["function"]),
                  json.dumps(c["payload"])) for c in cells])
            cur.executemany(
                "INSERT INTO planned_runs(campaign_id, order_index, cell_key, replication, kind, "
                "block, force_cold) VALUES (?,?,?,?,?,?,?)",
                [(cid, r["order"], r["cell_key"], r["replication"], r["kind"], r["block"],
                  int(r["force_cold"])) for r in runs])
            cur.executemany(
                "INSERT INTO deployments(campaign_id, name, kind, region, price_platform, "
                "detail_json) VALUES (?,?,?,?,?,?)",
                [(cid, d["name"], d["kind"], d.get("region"), d.get("price_platform"),
                  json.dumps(d.get("detail") or {}, sort_keys=True))
                 for d in (deployments or [{"name": provider, "kind": provider}])])
            cur.execute(flat_view_sql(factors))
            cur.execute("INSERT INTO events(campaign_id, at, kind, detail_json) VALUES (?,?,?,?)",
                        (cid, now, "created", json.dumps({"invocations": len(runs), "seed": seed})))
            cur.execute("COMMIT")
        except BaseException:
            _rollback(self.conn)
            raise
        return cid

    def replace_plan(self, campaign_id: int, *, spec_json: dict, spec_text: str | None,
                     spec_hash: str, plan_json: dict, factors: list[dict], cells: list[dict],
                     runs: list[dict], reason: str,
                     deployments: Optional[list[dict]] = None) -> None:
        """Forced resume with a changed spec: the recorded invocations stay, the plan is replaced."""
        cur = self.conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            cur.execute("UPDATE campaign SET spec_json=?, spec_text=?, spec_hash=?, plan_json=?, "
                        "factors_json=? WHERE id=?",
                        (json.dumps(spec_json, sort_keys=True), spec_text, spec_hash,
                         json.dumps(plan_json), json.dumps(factors), campaign_id))
            cur.execute("DELETE FROM cells WHERE campaign_id=?", (campaign_id,))
            cur.execute("DELETE FROM planned_runs WHERE campaign_id=?", (campaign_id,))
            cur.executemany(
                "INSERT INTO cells(campaign_id, cell_key, cell_index, levels_json, function_json, "
                "payload_json) VALUES (?,?,?,?,?,?)",
                [(campaign_id, c["key"], c["index"], json.dumps(c["levels"]),
                  json.dumps(c["function"]), json.dumps(c["payload"])) for c in cells])
            cur.executemany(
                "INSERT INTO planned_runs(campaign_id, order_index, cell_key, replication, kind, "
                "block, force_cold) VALUES (?,?,?,?,?,?,?)",
                [(campaign_id, r["order"], r["cell_key"], r["replication"], r["kind"], r["block"],
                  int(r["force_cold"])) for r in runs])
            if deployments is not None:  # the new spec's (rows of earlier ones stay: they
                # name where recorded invocations ran)
                cur.executemany(
                    "INSERT OR REPLACE INTO deployments(campaign_id, name, kind, region, "
                    "price_platform, detail_json) VALUES (?,?,?,?,?,?)",
                    [(campaign_id, d["name"], d["kind"], d.get("region"), d.get("price_platform"),
                      json.dumps(d.get("detail") or {}, sort_keys=True)) for d in deployments])
            cur.execute("DROP VIEW IF EXISTS invocations_flat")
            cur.execute(flat_view_sql(factors))
            cur.execute("INSERT INTO events(campaign_id, at, kind, detail_json) VALUES (?,?,?,?)",
                        (campaign_id, utc_now(), "plan_replaced", json.dumps({"reason": reason})))
            cur.execute("COMMIT")
        except BaseException:
            _rollback(self.conn)
            raise

    def upgrade_schema(self) -> bool:
        """Bring a file an earlier version wrote up to this version's tables before a resumed
        campaign writes to it (HISTORY in store/schema.py): version 5's deployments table and
        ``invocations.deployment`` column. No row changes; True when something was added."""
        cols = {r[1] for r in self.conn.execute("PRAGMA table_info(invocations)")}
        if DEPLOYMENT_COLUMN in cols:
            return False
        camp = self.campaign() or {}
        factors = json.loads(camp.get("factors_json") or "[]")
        self.conn.executescript(
            "BEGIN;" + CORE_TABLES +
            f"ALTER TABLE invocations ADD COLUMN {DEPLOYMENT_COLUMN} TEXT;"
            "DROP VIEW IF EXISTS invocations_flat;" + flat_view_sql(factors) + ";COMMIT;")
        if camp:
            self.event(camp["id"], "schema_upgraded", {"added": ["deployments",
                                                                 f"invocations.{DEPLOYMENT_COLUMN}"]})
        return True

    def append_runs(self, campaign_id: int, runs: list[dict], *, replications: int,
                    event: dict) -> None:
        """A round of replications (:mod:`faascope.designs.topup`): its planned runs, the
        campaign's new replication count and a ``round_added`` event in one transaction, so a
        kill leaves the whole round or none of it."""
        self._tx([("INSERT INTO planned_runs(campaign_id, order_index, cell_key, replication, "
                   "kind, block, force_cold) VALUES (?,?,?,?,?,?,?)",
                   (campaign_id, r["order"], r["cell_key"], r["replication"], r["kind"],
                    r["block"], int(r["force_cold"]))) for r in runs]
                 + [("UPDATE campaign SET replications=?, status='running', completed_at=NULL "
                     "WHERE id=?", (replications, campaign_id)),
                    ("INSERT INTO events(campaign_id, at, kind, detail_json) VALUES (?,?,?,?)",
                     (campaign_id, utc_now(), ROUND_ADDED_EVENT, json.dumps(event)))])

    def set_status(self, campaign_id: int, status: str) -> None:
        completed = utc_now() if status == "complete" else None
        self._tx([("UPDATE campaign SET status=?, completed_at=? WHERE id=?",
                   (status, completed, campaign_id))])

    def event(self, campaign_id: int | None, kind: str, detail: dict | None = None) -> None:
        self._tx([("INSERT INTO events(campaign_id, at, kind, detail_json) VALUES (?,?,?,?)",
                   (campaign_id, utc_now(), kind, json.dumps(detail or {})))])

    def events(self, campaign_id: int, kinds: Iterable[str]) -> list[tuple[str, dict]]:
        """The campaign's events of these kinds, oldest first: (kind, detail)."""
        kinds = list(kinds)
        rows = self.conn.execute(
            f"SELECT kind, detail_json FROM events WHERE campaign_id=? AND kind IN "
            f"({', '.join('?' * len(kinds))}) ORDER BY id", (campaign_id, *kinds)).fetchall()
        out = []
        for kind, detail in rows:
            try:
                out.append((kind, json.loads(detail or "{}")))
            except ValueError:
                out.append((kind, {}))
        return out

    # ------------------------------------------------------------------ runs and records
    def planned_runs(self, campaign_id: int) -> list[dict]:
        rows = self.conn.execute(
            "SELECT order_index, cell_key, replication, kind, block, force_cold FROM planned_runs "
            "WHERE campaign_id=? ORDER BY order_index", (campaign_id,)).fetchall()
        return [dict(r) for r in rows]

    def pending_runs(self, campaign_id: int, rerun_error_prefix: Optional[str] = None) -> list[dict]:
        """The planned runs without a record, in run order; with ``rerun_error_prefix`` (``run
        --resume --rerun-may-have-run``) also those whose record is a client_error whose error
        type starts with it: they run again and their new record supersedes the old one
        (:meth:`record` with ``supersede``)."""
        cond, params = "i.id IS NULL", [campaign_id]
        if rerun_error_prefix:
            cond = ("(i.id IS NULL OR (i.status = 'client_error' AND "
                    "substr(i.error_type, 1, ?) = ?))")
            params += [len(rerun_error_prefix), rerun_error_prefix]
        rows = self.conn.execute(
            "SELECT p.order_index, p.cell_key, p.replication, p.kind, p.block, p.force_cold "
            "FROM planned_runs p LEFT JOIN invocations i ON i.campaign_id = p.campaign_id "
            "AND i.cell_key = p.cell_key AND i.replication = p.replication AND i.kind = p.kind "
            f"WHERE p.campaign_id=? AND {cond} ORDER BY p.order_index", params).fetchall()
        return [dict(r) for r in rows]

    def count(self, campaign_id: int, where: str = "1=1") -> int:
        return self.conn.execute(f"SELECT count(*) FROM invocations WHERE campaign_id=? AND {where}",
                                 (campaign_id,)).fetchone()[0]

    def status_counts(self, campaign_id: int) -> dict[str, int]:
        rows = self.conn.execute("SELECT status, count(*) FROM invocations WHERE campaign_id=? "
                                 "GROUP BY status", (campaign_id,)).fetchall()
        return {r[0]: r[1] for r in rows}

    def record(self, rec: dict[str, Any], supersede: Optional[str] = None) -> int:
        """Insert one invocation record durably (its own transaction, fsynced). ``supersede``:
        an error-type prefix (``MayHaveRun.``); a record of the same planned run that is a
        client_error of that prefix is replaced (see :meth:`_insert_records`)."""
        return self._records([(rec, None)], supersede)[0]

    def record_burst_members(self, batch: list[tuple[dict, dict]],
                             supersede: Optional[str] = None) -> None:
        """Insert (invocation record, burst member row) pairs in one transaction: a member and
        its record are never one without the other."""
        self._records(batch, supersede)

    def _records(self, batch: list[tuple[dict, Optional[dict]]],
                 supersede: Optional[str]) -> list[int]:
        cur = self.conn.cursor()
        cur.execute("BEGIN IMMEDIATE")
        try:
            ids = [self._insert_record(cur, rec, mem, supersede) for rec, mem in batch]
            cur.execute("COMMIT")
        except BaseException as exc:
            _rollback(self.conn)
            if isinstance(exc, sqlite3.IntegrityError) and "UNIQUE" in str(exc):
                r = batch[0][0]
                raise DuplicateRecord(
                    f"{r.get('cell_key')} replication {r.get('replication')} ({r.get('kind')}) "
                    f"is already recorded" if len(batch) == 1 else
                    f"a record of this group is already stored (e.g. {r.get('cell_key')} "
                    f"replication {r.get('replication')})") from None
            raise
        return ids

    def _insert_record(self, cur: sqlite3.Cursor, rec: dict, mem: Optional[dict],
                       supersede: Optional[str]) -> int:
        """Insert one record (and its burst member row) in the open transaction. With
        ``supersede``, a record of the same planned run whose status is client_error and whose
        error type starts with it (a call that may have run, rerun on request) leaves the
        invocations table in the same transaction: the old row (and its burst member row) go
        whole into a ``may_have_run_rerun`` event that names the new record's id, so the store
        keeps one record per planned run, the old one stays readable, and a kill at any moment
        leaves either the old record or the new one with its event, never both, never
        neither."""
        key = (rec.get("campaign_id"), rec.get("cell_key"), rec.get("replication"),
               rec.get("kind"))
        old = old_member = None
        if supersede:
            row = cur.execute("SELECT * FROM invocations WHERE campaign_id=? AND cell_key=? "
                              "AND replication=? AND kind=?", key).fetchone()
            if row is not None and row["status"] == "client_error" and \
                    str(row["error_type"] or "").startswith(supersede):
                old = dict(row)
                if self._has_table(cur, "burst_members"):
                    m = cur.execute("SELECT * FROM burst_members WHERE campaign_id=? AND "
                                    "cell_key=? AND replication=? AND kind=?", key).fetchone()
                    if m is not None:
                        old_member = dict(m)
                        cur.execute("DELETE FROM burst_members WHERE campaign_id=? AND "
                                    "cell_key=? AND replication=? AND kind=?", key)
                cur.execute("DELETE FROM invocations WHERE id=?", (old["id"],))
        cur.execute(_INV_SQL, tuple(rec.get(c) for c in INVOCATION_COLUMNS))
        new_id = int(cur.lastrowid)
        if mem is not None:
            cur.execute(_MEM_SQL, tuple(mem.get(c) for c in MEMBER_COLUMNS))
        if old is not None:
            detail = {"invocation_id": new_id, "cell_key": key[1], "replication": key[2],
                      "kind": key[3], "superseded": old}
            if old_member is not None:
                detail["superseded_member"] = old_member
            cur.execute("INSERT INTO events(campaign_id, at, kind, detail_json) VALUES (?,?,?,?)",
                        (key[0], utc_now(), MAY_HAVE_RUN_RERUN_EVENT, json.dumps(detail)))
        return new_id

    @staticmethod
    def _has_table(cur: sqlite3.Cursor, name: str) -> bool:
        return cur.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                           (name,)).fetchone() is not None

    def cells(self, campaign_id: int) -> list[dict]:
        rows = self.conn.execute("SELECT * FROM cells WHERE campaign_id=? ORDER BY cell_index",
                                 (campaign_id,)).fetchall()
        return [dict(r) for r in rows]

    # ------------------------------------------------------------------ bursts
    def add_burst_tables(self) -> None:
        """The burst tables and view (schema version 2), created with a campaign's first burst."""
        self.conn.executescript("BEGIN;" + BURST_TABLES + BURST_VIEW + ";COMMIT;")

    def bursts_of_cell(self, campaign_id: int, cell_key: str) -> set[int]:
        """The burst numbers of a cell that have at least one member recorded."""
        rows = self.conn.execute("SELECT DISTINCT burst FROM burst_members WHERE campaign_id=? "
                                 "AND cell_key=?", (campaign_id, cell_key)).fetchall()
        return {r[0] for r in rows}

    def next_burst_attempt(self, campaign_id: int, cell_key: str, burst: int, kind: str) -> int:
        row = self.conn.execute("SELECT max(attempt) FROM bursts WHERE campaign_id=? AND "
                                "cell_key=? AND burst=? AND kind=?",
                                (campaign_id, cell_key, burst, kind)).fetchone()
        return (row[0] or 0) + 1

    def begin_burst(self, campaign_id: int, cell_key: str, burst: int, kind: str, attempt: int,
                    planned: int, start_ns: int, schedule: dict) -> None:
        self._tx([("INSERT INTO bursts(campaign_id, cell_key, burst, kind, attempt, planned, "
                   "status, start_ns, schedule_json, started_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                   (campaign_id, cell_key, burst, kind, attempt, planned, "running", start_ns,
                    json.dumps(schedule), utc_now()))])

    def close_running_bursts(self, campaign_id: int) -> int:
        """Mark the bursts a killed run left ``running`` as ``interrupted`` (a resumed campaign
        finishes their missing members as a new attempt); returns how many."""
        if self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                             "name='bursts'").fetchone() is None:
            return 0
        n = self.conn.execute("SELECT count(*) FROM bursts WHERE campaign_id=? AND "
                              "status='running'", (campaign_id,)).fetchone()[0]
        if n:
            self._tx([("UPDATE bursts SET status='interrupted', ended_at=? WHERE campaign_id=? "
                       "AND status='running'", (utc_now(), campaign_id))])
        return n

    def end_burst(self, campaign_id: int, cell_key: str, burst: int, kind: str, attempt: int, *,
                  status: str, sent: int, recorded: int, first_send_ns: Optional[int],
                  last_send_ns: Optional[int], detail: dict) -> None:
        spread = ((last_send_ns - first_send_ns) / 1e9
                  if first_send_ns is not None and last_send_ns is not None else None)
        self._tx([("UPDATE bursts SET status=?, sent=?, recorded=?, first_send_ns=?, "
                   "last_send_ns=?, send_spread_s=?, detail_json=?, ended_at=? WHERE "
                   "campaign_id=? AND cell_key=? AND burst=? AND kind=? AND attempt=?",
                   (status, sent, recorded, first_send_ns, last_send_ns, spread,
                    json.dumps(detail), utc_now(), campaign_id, cell_key, burst, kind, attempt))])


    # ------------------------------------------------------------------ periodic slots
    def add_schedule_tables(self) -> None:
        """The slots table (schema version 4), created with a scheduled campaign's first run."""
        self.conn.executescript("BEGIN;" + SCHEDULE_TABLES + "COMMIT;")

    def has_schedule_tables(self) -> bool:
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                                 "name='schedule_slots'").fetchone() is not None

    def slots(self, campaign_id: int) -> dict[int, dict]:
        """The campaign's slots that started or were missed, by slot number."""
        if not self.has_schedule_tables():
            return {}
        rows = self.conn.execute("SELECT * FROM schedule_slots WHERE campaign_id=? ORDER BY slot",
                                 (campaign_id,)).fetchall()
        return {r["slot"]: dict(r) for r in rows}

    def missed_slots(self, campaign_id: int) -> set[int]:
        if not self.has_schedule_tables():
            return set()
        return {r[0] for r in self.conn.execute(
            "SELECT slot FROM schedule_slots WHERE campaign_id=? AND status='missed'",
            (campaign_id,))}

    def set_schedule(self, campaign_id: int, schedule: dict) -> None:
        """Replace a periodic campaign's schedule in the recorded plan (its anchor moved to when
        the first slot could run), the one place a resumed campaign reads it from."""
        self._tx([("UPDATE campaign SET plan_json=json_set(plan_json, '$.schedule', json(?)) "
                   "WHERE id=?", (json.dumps(schedule), campaign_id))])

    def begin_slot(self, campaign_id: int, slot: int, due_unix: float,
                   started_unix: float) -> None:
        """A slot starts (durably, before its first invocation); a slot a killed run left
        running starts again with its new time."""
        self._tx([("INSERT INTO schedule_slots(campaign_id, slot, due_unix, status, "
                   "started_unix, late_s) VALUES (?,?,?,?,?,?) ON CONFLICT(campaign_id, slot) DO "
                   "UPDATE SET status='running', started_unix=excluded.started_unix, "
                   "late_s=excluded.late_s",
                   (campaign_id, slot, due_unix, "running", started_unix,
                    started_unix - due_unix))])

    def end_slot(self, campaign_id: int, slot: int, ended_unix: float) -> None:
        self._tx([("UPDATE schedule_slots SET status='done', ended_unix=? WHERE campaign_id=? "
                   "AND slot=?", (ended_unix, campaign_id, slot))])

    def miss_slots(self, campaign_id: int, missed: list[dict]) -> None:
        """Record slots as missed, each row with its ``slot_missed`` event, in one transaction
        (``missed``: dicts with slot, due_unix, reason and detail)."""
        now = utc_now()
        stmts: list[tuple[str, tuple]] = []
        for m in missed:
            detail = dict(m.get("detail") or {})
            stmts.append(("INSERT INTO schedule_slots(campaign_id, slot, due_unix, status, "
                          "reason, detail_json) VALUES (?,?,?,?,?,?) ON CONFLICT(campaign_id, "
                          "slot) DO UPDATE SET status='missed', reason=excluded.reason, "
                          "detail_json=excluded.detail_json",
                          (campaign_id, m["slot"], m["due_unix"], "missed", m["reason"],
                           json.dumps(detail))))
            stmts.append(("INSERT INTO events(campaign_id, at, kind, detail_json) "
                          "VALUES (?,?,?,?)",
                          (campaign_id, now, SLOT_MISSED_EVENT,
                           json.dumps({"slot": m["slot"], "due": m.get("due"),
                                       "reason": m["reason"], **detail}))))
        if stmts:
            self._tx(stmts)


class RecordWriter:
    """A thread that writes (invocation record, member row) pairs in group commits."""

    def __init__(self, path: Path, max_batch: int = 512, supersede: Optional[str] = None):
        self.path = Path(path)
        #: an error-type prefix whose records new ones replace (ResultsStore.record)
        self.supersede = supersede
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
        try:
            store = ResultsStore(self.path)
        except BaseException as exc:  # surfaced to the producer (flush would wait forever)
            self._error = exc
            with self._cv:
                self._cv.notify_all()
            return
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
                    store.record_burst_members(batch, self.supersede)
                except BaseException as exc:  # surfaced to the producer
                    self._error = exc
                with self._cv:
                    self.written += len(batch)
                    self._cv.notify_all()
                if stop:
                    return
        finally:
            store.close()

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
