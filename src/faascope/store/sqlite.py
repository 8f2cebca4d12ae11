"""The results store: one SQLite file per campaign, in WAL mode, every record committed durably.

Tables
- ``campaign``: the spec (normalised JSON and the text as written), its hash, the seed, the plan,
  the faascope version, the machine, timestamps and a status (running, interrupted, complete).
- ``cells``: each run cell's levels, function configuration and agent payload.
- ``planned_runs``: the full run order (order index, cell, replication, kind, block, forced cold).
- ``invocations``: one row per invocation as it completes, UNIQUE(campaign_id, cell_key,
  replication, kind), so a resumed campaign can never duplicate a record.
- ``events``: campaign start, resume, interruption, completion, deployments.
- view ``invocations_flat``: one flat row per invocation with a column per factor (what
  ``faascope analyze`` and ``faascope export`` read).

Each record is written in its own transaction with ``synchronous=FULL``: once ``record()``
returns, the row survives a crash (SIGKILL, power loss) of the writer.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import socket
import sqlite3
from pathlib import Path
from typing import Any, Iterable

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS campaign (
    id INTEGER PRIMARY KEY,
    uid TEXT NOT NULL,
    name TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    spec_text TEXT,
    spec_path TEXT,
    spec_hash TEXT NOT NULL,
    seed INTEGER NOT NULL,
    replications INTEGER NOT NULL,
    plan_json TEXT NOT NULL,
    factors_json TEXT NOT NULL,
    provider TEXT NOT NULL,
    faascope_version TEXT NOT NULL,
    machine_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    started_at_unix REAL NOT NULL,
    status TEXT NOT NULL,
    completed_at TEXT
);
CREATE TABLE IF NOT EXISTS cells (
    campaign_id INTEGER NOT NULL REFERENCES campaign(id),
    cell_key TEXT NOT NULL,
    cell_index INTEGER NOT NULL,
    levels_json TEXT NOT NULL,
    function_json TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    PRIMARY KEY (campaign_id, cell_key)
);
CREATE TABLE IF NOT EXISTS planned_runs (
    campaign_id INTEGER NOT NULL REFERENCES campaign(id),
    order_index INTEGER NOT NULL,
    cell_key TEXT NOT NULL,
    replication INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('measure', 'warmup')),
    block INTEGER NOT NULL,
    force_cold INTEGER NOT NULL,
    PRIMARY KEY (campaign_id, order_index),
    UNIQUE (campaign_id, cell_key, replication, kind)
);
CREATE TABLE IF NOT EXISTS invocations (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER NOT NULL REFERENCES campaign(id),
    cell_key TEXT NOT NULL,
    levels_json TEXT NOT NULL,
    replication INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('measure', 'warmup')),
    warmup INTEGER NOT NULL,
    order_index INTEGER NOT NULL,
    block INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'agent_error', 'function_error', 'client_error')),
    function_name TEXT,
    config_json TEXT,
    cold_forced INTEGER NOT NULL,
    client_send_ns INTEGER,
    client_headers_ns INTEGER,
    client_end_ns INTEGER,
    client_latency_s REAL,
    client_headers_s REAL,
    attempts INTEGER NOT NULL,
    retries INTEGER NOT NULL,
    response_json TEXT,
    function_error TEXT,
    error_type TEXT,
    error_message TEXT,
    log_tail TEXT,
    request_id TEXT,
    platform_json TEXT,
    started_at TEXT NOT NULL,
    ended_at TEXT NOT NULL,
    started_at_local TEXT NOT NULL,
    UNIQUE (campaign_id, cell_key, replication, kind)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    campaign_id INTEGER,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail_json TEXT
);
"""

# fixed columns of the flat view (a factor with one of these names is prefixed with "factor_")
FLAT_FIXED = [
    "campaign", "invocation_id", "order_index", "cell_key", "replication", "warmup", "block",
    "latency_seconds", "client_latency_seconds", "client_headers_seconds", "cold", "cold_forced",
    "instance_id", "sandbox", "boot_id", "workload_kind", "bytes", "ops", "direct_effective",
    "started_at", "ended_at", "started_at_local", "time_of_day", "hour", "day_of_week",
    "client_send_ns", "client_headers_ns", "client_end_ns", "agent_received_ns",
    "agent_workload_start_ns", "agent_workload_end_ns", "ok", "status", "error_type",
    "error_message", "retries", "function_name", "request_id", "platform_cold",
    "platform_setup_ms", "platform_init_ms", "platform_duration_ms", "report_duration_ms",
    "billed_duration_ms", "init_duration_ms", "max_memory_used_mb", "config_memory_mb",
    "config_ephemeral_mb", "config_arch", "config_profile",
]

INVOCATION_COLUMNS = [
    "campaign_id", "cell_key", "levels_json", "replication", "kind", "warmup", "order_index",
    "block", "status", "function_name", "config_json", "cold_forced", "client_send_ns",
    "client_headers_ns", "client_end_ns", "client_latency_s", "client_headers_s", "attempts",
    "retries", "response_json", "function_error", "error_type", "error_message", "log_tail",
    "request_id", "platform_json", "started_at", "ended_at", "started_at_local",
]


class StoreError(Exception):
    pass


class DuplicateRecord(StoreError):
    """The (campaign, cell, replication, kind) slot already has a record."""


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def iso_utc_from_ns(ns: int) -> str:
    return _dt.datetime.fromtimestamp(ns / 1e9, _dt.timezone.utc).isoformat(
        timespec="microseconds").replace("+00:00", "Z")


def iso_local_from_ns(ns: int) -> str:
    return _dt.datetime.fromtimestamp(ns / 1e9).astimezone().isoformat(timespec="microseconds")


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


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _json_path(key: str) -> str:
    return '$."' + key.replace('"', '\\"') + '"'


class ResultsStore:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.conn = sqlite3.connect(str(self.path), timeout=30, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        mode = self.conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":  # pragma: no cover - e.g. a read-only medium
            raise StoreError(f"cannot put {self.path} in WAL mode (got {mode})")
        self.conn.execute("PRAGMA synchronous=FULL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.conn.execute("PRAGMA busy_timeout=30000")

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
            cur.execute("ROLLBACK")
            raise
        return ids

    def has_schema(self) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='campaign'").fetchone()
        return row is not None

    def ensure_schema(self) -> None:
        self.conn.executescript("BEGIN;" + SCHEMA + "COMMIT;")
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
                        cells: list[dict], runs: list[dict]) -> int:
        """Create the campaign with its cells, run order and flat view in one transaction."""
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
            self._create_flat_view(cur, factors)
            cur.execute("INSERT INTO events(campaign_id, at, kind, detail_json) VALUES (?,?,?,?)",
                        (cid, now, "created", json.dumps({"invocations": len(runs), "seed": seed})))
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        return cid

    def replace_plan(self, campaign_id: int, *, spec_json: dict, spec_text: str | None,
                     spec_hash: str, plan_json: dict, factors: list[dict], cells: list[dict],
                     runs: list[dict], reason: str) -> None:
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
            cur.execute("DROP VIEW IF EXISTS invocations_flat")
            self._create_flat_view(cur, factors)
            cur.execute("INSERT INTO events(campaign_id, at, kind, detail_json) VALUES (?,?,?,?)",
                        (campaign_id, utc_now(), "plan_replaced", json.dumps({"reason": reason})))
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise

    def _create_flat_view(self, cur: sqlite3.Cursor, factors: list[dict]) -> None:
        cols = []
        for f in factors:
            name = f["name"]
            col = f"factor_{name}" if name in FLAT_FIXED else name
            path = _json_path(name)
            if f.get("boolean"):
                expr = (f"CASE json_type(i.levels_json, '{path}') WHEN 'true' THEN 'true' "
                        f"WHEN 'false' THEN 'false' ELSE json_extract(i.levels_json, '{path}') END")
            else:
                expr = f"json_extract(i.levels_json, '{path}')"
            cols.append(f"{expr} AS {_q(col)}")
        factor_sql = (",\n    ".join(cols) + ",") if cols else ""
        r = "i.response_json"
        cur.execute(f"""
CREATE VIEW IF NOT EXISTS invocations_flat AS
SELECT
    c.name AS campaign,
    i.id AS invocation_id,
    i.order_index,
    i.cell_key,
    i.replication,
    i.warmup,
    i.block,
    {factor_sql}
    json_extract({r}, '$.workload.elapsed_s') AS latency_seconds,
    i.client_latency_s AS client_latency_seconds,
    i.client_headers_s AS client_headers_seconds,
    json_extract({r}, '$.cold') AS cold,
    i.cold_forced,
    json_extract({r}, '$.instance.id') AS instance_id,
    json_extract({r}, '$.instance.sandbox') AS sandbox,
    json_extract({r}, '$.instance.boot_id') AS boot_id,
    json_extract({r}, '$.workload.kind') AS workload_kind,
    json_extract({r}, '$.workload.bytes') AS bytes,
    json_extract({r}, '$.workload.ops') AS ops,
    json_extract({r}, '$.workload.direct_effective') AS direct_effective,
    i.started_at,
    i.ended_at,
    i.started_at_local,
    substr(i.started_at_local, 12, 8) AS time_of_day,
    CAST(substr(i.started_at_local, 12, 2) AS INTEGER) AS hour,
    CASE strftime('%w', substr(i.started_at_local, 1, 10))
        WHEN '0' THEN 'Sunday' WHEN '1' THEN 'Monday' WHEN '2' THEN 'Tuesday'
        WHEN '3' THEN 'Wednesday' WHEN '4' THEN 'Thursday' WHEN '5' THEN 'Friday'
        ELSE 'Saturday' END AS day_of_week,
    i.client_send_ns,
    i.client_headers_ns,
    i.client_end_ns,
    json_extract({r}, '$.timings.received_ns') AS agent_received_ns,
    json_extract({r}, '$.timings.workload_start_ns') AS agent_workload_start_ns,
    json_extract({r}, '$.timings.workload_end_ns') AS agent_workload_end_ns,
    CASE WHEN i.status = 'ok' THEN 1 ELSE 0 END AS ok,
    i.status,
    i.error_type,
    i.error_message,
    i.retries,
    i.function_name,
    i.request_id,
    json_extract(i.platform_json, '$.cold') AS platform_cold,
    CAST(json_extract(i.platform_json, '$.setup_ms') AS REAL) AS platform_setup_ms,
    CAST(json_extract(i.platform_json, '$.init_ms') AS REAL) AS platform_init_ms,
    CAST(json_extract(i.platform_json, '$.duration_ms') AS REAL) AS platform_duration_ms,
    CAST(json_extract(i.platform_json, '$.report.duration_ms') AS REAL) AS report_duration_ms,
    CAST(json_extract(i.platform_json, '$.report.billed_duration_ms') AS REAL) AS billed_duration_ms,
    CAST(json_extract(i.platform_json, '$.report.init_duration_ms') AS REAL) AS init_duration_ms,
    json_extract(i.platform_json, '$.report.max_memory_used_mb') AS max_memory_used_mb,
    json_extract(i.config_json, '$.memory_mb') AS config_memory_mb,
    json_extract(i.config_json, '$.ephemeral_mb') AS config_ephemeral_mb,
    json_extract(i.config_json, '$.arch') AS config_arch,
    json_extract(i.config_json, '$.profile') AS config_profile
FROM invocations i JOIN campaign c ON c.id = i.campaign_id
ORDER BY i.order_index""")

    def set_status(self, campaign_id: int, status: str) -> None:
        completed = utc_now() if status == "complete" else None
        self._tx([("UPDATE campaign SET status=?, completed_at=? WHERE id=?",
                   (status, completed, campaign_id))])

    def event(self, campaign_id: int | None, kind: str, detail: dict | None = None) -> None:
        self._tx([("INSERT INTO events(campaign_id, at, kind, detail_json) VALUES (?,?,?,?)",
                   (campaign_id, utc_now(), kind, json.dumps(detail or {})))])

    # ------------------------------------------------------------------ runs and records
    def planned_runs(self, campaign_id: int) -> list[dict]:
        rows = self.conn.execute(
            "SELECT order_index, cell_key, replication, kind, block, force_cold FROM planned_runs "
            "WHERE campaign_id=? ORDER BY order_index", (campaign_id,)).fetchall()
        return [dict(r) for r in rows]

    def pending_runs(self, campaign_id: int) -> list[dict]:
        rows = self.conn.execute(
            "SELECT p.order_index, p.cell_key, p.replication, p.kind, p.block, p.force_cold "
            "FROM planned_runs p LEFT JOIN invocations i ON i.campaign_id = p.campaign_id "
            "AND i.cell_key = p.cell_key AND i.replication = p.replication AND i.kind = p.kind "
            "WHERE p.campaign_id=? AND i.id IS NULL ORDER BY p.order_index",
            (campaign_id,)).fetchall()
        return [dict(r) for r in rows]

    def count(self, campaign_id: int, where: str = "1=1") -> int:
        return self.conn.execute(f"SELECT count(*) FROM invocations WHERE campaign_id=? AND {where}",
                                 (campaign_id,)).fetchone()[0]

    def status_counts(self, campaign_id: int) -> dict[str, int]:
        rows = self.conn.execute("SELECT status, count(*) FROM invocations WHERE campaign_id=? "
                                 "GROUP BY status", (campaign_id,)).fetchall()
        return {r[0]: r[1] for r in rows}

    def record(self, rec: dict[str, Any]) -> int:
        """Insert one invocation record durably (its own transaction, fsynced)."""
        values = tuple(rec.get(c) for c in INVOCATION_COLUMNS)
        sql = (f"INSERT INTO invocations({', '.join(INVOCATION_COLUMNS)}) "
               f"VALUES ({', '.join('?' * len(INVOCATION_COLUMNS))})")
        try:
            return self._tx([(sql, values)])[0]
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" in str(exc):
                raise DuplicateRecord(
                    f"{rec.get('cell_key')} replication {rec.get('replication')} "
                    f"({rec.get('kind')}) is already recorded") from None
            raise

    def cells(self, campaign_id: int) -> list[dict]:
        rows = self.conn.execute("SELECT * FROM cells WHERE campaign_id=? ORDER BY cell_index",
                                 (campaign_id,)).fetchall()
        return [dict(r) for r in rows]


def open_existing(path: str | Path) -> ResultsStore:
    """Open a results file for reading; error if it is not a faascope results store."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(str(p))
    store = ResultsStore(p)
    if not store.has_schema():
        store.close()
        raise StoreError(f"{p} is not a faascope results file (no campaign table)")
    return store
