"""The one reader of results files: what analysis, reports, export, the burst statistics and
staggering read, and the one rule for which invocations are measurements.

Files are opened read-only (``mode=ro``): reading never changes a results file (not even its
journal mode), so a campaign that is still running, or a file on a read-only medium, can be read.
Every file of a version in :data:`faascope.store.schema.HISTORY` reads the same way; tables a
version did not have (the burst tables of a sequential campaign) read as absent.
"""
from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import click
import pandas as pd

from faascope.errors import BadInput, Failure
from faascope.store.schema import BURST_VIEW as BURST_VIEW_SQL
from faascope.store.measures import MEASURE_NAMES
from faascope.store.schema import SCHEMA_VERSION, flat_view_sql

#: file name endings of results files (anything else is a table: CSV or Parquet)
STORE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
FLAT_VIEW = "invocations_flat"
BURST_VIEW = "burst_invocations"


def is_results_path(path: str | Path) -> bool:
    """Whether a path names a results file (by its ending; the content is checked on opening)."""
    return Path(path).suffix.lower() in STORE_SUFFIXES


# ------------------------------------------------------------------------- which rows measure
@dataclass
class LeftOut:
    """How many rows :func:`measured_only` left out, and why."""

    warmups: int = 0
    failed: int = 0

    @property
    def total(self) -> int:
        return self.warmups + self.failed


def measured_only(df: pd.DataFrame, *, keep_failed: bool = False) -> tuple[pd.DataFrame, LeftOut]:
    """The rows that are measurements: warm-ups are never part of a campaign's statistics, and
    failed invocations (status other than ok) have no latency to compare, so both are left out
    (failed ones kept with ``keep_failed``, for statistics that count failures, such as a
    burst's). Failed warm-ups count as warm-ups."""
    out = LeftOut()
    keep = pd.Series(True, index=df.index)
    if "warmup" in df.columns:
        warm = pd.to_numeric(df["warmup"], errors="coerce").fillna(0).astype(bool)
        out.warmups = int(warm.sum())
        keep &= ~warm
    if "ok" in df.columns and not keep_failed:
        failed = ~pd.to_numeric(df["ok"], errors="coerce").fillna(0).astype(bool) & keep
        out.failed = int(failed.sum())
        keep &= ~failed
    return df[keep], out


# ------------------------------------------------------------------------------- damaged files
class DamagedResultsFile(BadInput):
    """A results file SQLite reports as damaged (corrupt pages, a table that is missing): exit 2
    naming the file, what is still readable, and how to recover it."""

    def __init__(self, path: Path, detail: str, field: str, readable: str = ""):
        super().__init__(
            f"{path} is damaged ({detail}).{readable} Nothing was written to it. To recover "
            f"what SQLite can still read: `sqlite3 {path} .recover | sqlite3 "
            f"{_recovered(path)}` (a sqlite3 built with .recover), or save each readable table "
            f"with `sqlite3 {path} '.dump TABLE'`; then use the recovered file", field=field)
        self.detail = detail


def _recovered(path: Path) -> Path:
    return path.with_name(f"{path.stem}-recovered{path.suffix or '.db'}")


#: the tables every faascope results file has had since version 1
CORE_TABLE_NAMES = ("campaign", "cells", "planned_runs", "invocations", "events")


def is_damage(exc: BaseException) -> bool:
    """Whether a database error means the file is damaged (not locked, not full, not a bug)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    if getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return True
    msg = str(exc).lower()
    return any(m in msg for m in ("malformed", "no such table", "no such column",
                                  "not a database", "corrupt"))


def table_health(conn: sqlite3.Connection) -> str:
    """" Readable: campaign (1 row), …; unreadable: invocations." — each table counted, so a
    damaged file says what can still be read; empty when even the schema is unreadable."""
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' ORDER BY rootpage")]
    except sqlite3.DatabaseError:
        return ""
    ok, bad = [], []
    for n in names:
        try:
            # every row read, not count(*): that would read an index, not the table's pages
            k = sum(1 for _ in conn.execute(f'SELECT * FROM "{n}"'))
            ok.append(f"{n} ({k} row{'s' if k != 1 else ''})")
        except sqlite3.DatabaseError:
            bad.append(n)
    missing = [n for n in CORE_TABLE_NAMES if n not in names]
    out = f" Readable: {', '.join(ok) or 'nothing'}"
    if bad:
        out += f"; unreadable: {', '.join(bad)}"
    if missing:
        out += f"; missing: {', '.join(missing)}"
    return out + "."


def _cause(exc: BaseException) -> BaseException:
    """The sqlite3 error behind pandas' DatabaseError (read_sql_query wraps it)."""
    while not isinstance(exc, sqlite3.DatabaseError) and exc.__cause__ is not None:
        exc = exc.__cause__
    return exc


def with_measure(df: pd.DataFrame, response: str) -> tuple[pd.DataFrame, int]:
    """The rows that have a value of ``response`` when it is one of the workload kinds' measures
    (:data:`faascope.store.schema.MEASURES`), and how many were left out: a measure exists
    only where the workload produces it (write_s of a put, not of a get), so rows without it are
    not part of its analysis. Any other column is returned whole (a missing value there is an
    error for the analysis to name)."""
    if response not in MEASURE_NAMES or response not in df.columns:
        return df, 0
    has = pd.to_numeric(df[response], errors="coerce").notna()
    return df[has], int((~has).sum())


def without_measure_note(response: str, n: int) -> str:
    """What analyze and report say about the rows :func:`with_measure` left out."""
    return (f"{n:,} invocation(s) have no {response} (their workload does not measure it, e.g. "
            "a read has no write time) and are left out.")


# ------------------------------------------------------------------------------------ reading
class NotAResultsFile(BadInput):
    """The path is a file, but not a database faascope can read; ``reason`` says why."""

    def __init__(self, path: Path, reason: str, field: str):
        super().__init__(f"{path} is not a faascope results file ({reason})", field=field)
        self.reason = reason


class ResultsFileUnreadable(BadInput):
    """SQLite could not open the file at all (no read permission, a broken path): exit 2
    naming the argument and the file; ``detail`` is SQLite's own message. The store's error, so
    that no layer above it needs to know SQLite's error types (only ``store/`` touches the
    file)."""

    def __init__(self, path: Path, detail: str, field: str):
        super().__init__(f"cannot read {path}: {detail}", field=field)
        self.detail = detail


class NewerResultsFile(BadInput):
    """A results file a newer faascope wrote (its ``meta.schema_version`` is above
    :data:`~faascope.store.schema.SCHEMA_VERSION`): never written to (this version cannot know
    what the newer one's rows mean, nor keep them consistent); read only where this version's
    views still read it."""

    def __init__(self, path: Path, version: int, field: str, what: str):
        super().__init__(
            f"{path} was written by a newer faascope (results schema version {version}; this "
            f"faascope knows versions up to {SCHEMA_VERSION}), {what}. Upgrade faascope "
            "(pip install -U faascope) to use it", field=field)
        self.version = version


class DamagedCampaignRow(BadInput):
    """The campaign row's JSON (factors, plan, spec) does not parse, or is not the shape
    faascope wrote: the row was changed outside faascope. Exit 2 naming the file and the
    column, never a JSONDecodeError."""

    def __init__(self, path: Path, column: str, detail: str, field: str):
        super().__init__(
            f"{path} is damaged: the campaign's {column} is not the JSON faascope wrote "
            f"({detail}); nothing was written to it. Restore the file from a copy, or repair "
            f"the column (`sqlite3 {path} \"SELECT {column} FROM campaign\"`)", field=field)
        self.column = column


#: the campaign row's JSON columns every command relies on, and the JSON type each holds
#: (machine_json is informational: unreadable, it reads as absent; see campaign_meta)
CAMPAIGN_JSON = {"factors_json": list, "plan_json": dict, "spec_json": dict}


def check_campaign_json(camp: dict, path: Path, field: str) -> None:
    """DamagedCampaignRow unless each of :data:`CAMPAIGN_JSON` parses to its type (factors: a
    list of objects with a name)."""
    for col, kind in CAMPAIGN_JSON.items():
        text = camp.get(col)
        if text is None:
            continue
        try:
            value = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise DamagedCampaignRow(path, col, str(exc), field) from None
        if not isinstance(value, kind):
            raise DamagedCampaignRow(path, col, f"a JSON {type(value).__name__}, not "
                                                f"{'an array' if kind is list else 'an object'}",
                                     field) from None
        if col == "factors_json" and not all(isinstance(f, dict) and isinstance(f.get("name"), str)
                                             for f in value):
            raise DamagedCampaignRow(path, col, "a factor without a name", field)


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection that can read ``path`` also on a read-only file system.

    A WAL-mode file (every results file) is read through its ``-shm`` index, which SQLite
    creates beside the file; in a read-only directory it cannot, and the first read fails
    (SQLITE_CANTOPEN). With no write-ahead log to read (no ``-wal`` file, or an empty one: the
    last writer checkpointed it), the main file alone holds every committed row, and
    ``immutable=1`` reads it without the index or locks. A non-empty ``-wal`` that cannot be
    indexed is refused (reading past it would miss committed rows)."""
    uri = f"file:{path}?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.DatabaseError as exc:
        conn.close()
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF  # extended codes: primary in the low byte
        if code not in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY) or \
                not _is_sqlite_file(path):
            return sqlite3.connect(uri, uri=True)  # the caller's checks name the problem
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and wal.stat().st_size > 0:
            raise ResultsFileUnreadable(
                path, f"{exc}: its write-ahead log {wal} holds rows that SQLite can read only "
                f"with an index file ({path.name}-shm) it cannot create in {path.parent} (a "
                "read-only file system?); copy the file with its -wal file to a writable "
                "directory and read the copy", "") from None
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)


#: the files of a newer schema this process has said so of (once each)
_NOTED_NEWER: set[Path] = set()


class ResultsFile:
    """A results file opened read-only. ``field`` names the command-line argument that gave the
    path, for the errors (exit status 2) that say what is wrong with it."""

    def __init__(self, path: str | Path, *, field: str = "RESULTS"):
        self.path = Path(path)
        self.field = field
        if not self.path.exists():
            raise BadInput(f"no such results file: {self.path}", field=field)
        if self.path.is_dir():
            raise BadInput(f"{self.path} is a directory; give a results file", field=field)
        try:
            self.conn = _connect_read_only(self.path)
        except ResultsFileUnreadable as exc:
            raise ResultsFileUnreadable(self.path, exc.detail, field) from None
        except sqlite3.Error as exc:
            raise ResultsFileUnreadable(self.path, str(exc), field) from exc
        self.conn.row_factory = sqlite3.Row
        #: the version that created the file (meta.schema_version; None where unreadable)
        self.schema_version: Optional[int] = None
        try:
            self.names = {r[0] for r in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
            if "meta" in self.names:
                row = self.conn.execute(
                    "SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                try:
                    self.schema_version = int(row[0]) if row else None
                except (TypeError, ValueError):
                    self.schema_version = None
            if "campaign" in self.names:
                # faascope's file: a core table missing is damage, not "no such table" later
                missing = [n for n in CORE_TABLE_NAMES if n not in self.names]
                if missing and not self.is_newer():
                    raise sqlite3.DatabaseError(f"no such table: {', '.join(missing)}")
                check_campaign_json(self.campaign() or {}, self.path, field)
            self._define_current_views()
        except sqlite3.DatabaseError as exc:
            if self.is_newer():
                err: BaseException = self.newer(exc)
            elif is_damage(exc) and _is_sqlite_file(self.path):
                err = self.damaged(exc)
            else:
                err = NotAResultsFile(self.path, str(exc), field)
            self.conn.close()
            raise err from None
        except click.ClickException:
            self.conn.close()
            raise
        if self.is_newer() and self.path not in _NOTED_NEWER:
            _NOTED_NEWER.add(self.path)
            click.echo(f"note: {self.path} was written by a newer faascope (results schema "
                       f"version {self.schema_version}; this one knows up to {SCHEMA_VERSION}): "
                       "reading it read-only, with this version's columns; upgrade faascope to "
                       "see what the newer version recorded", err=True)

    def is_newer(self) -> bool:
        """Whether a newer faascope wrote the file (its schema version is above this one's)."""
        return self.schema_version is not None and self.schema_version > SCHEMA_VERSION

    def newer(self, exc: BaseException) -> NewerResultsFile:
        """The error for a file of a newer schema that this version's reader cannot read."""
        return NewerResultsFile(self.path, self.schema_version or 0, self.field,
                                f"which this version cannot read ({_cause(exc)})")

    def damaged(self, exc: BaseException) -> BaseException:
        """The error to raise for a database error met while reading: DamagedResultsFile
        (exit 2) for damage, else a Failure (exit 1) that names the file; never a traceback."""
        cause = _cause(exc)
        if self.is_newer() and isinstance(cause, sqlite3.DatabaseError):
            return self.newer(cause)
        if is_damage(cause):
            return DamagedResultsFile(self.path, str(cause), self.field, table_health(self.conn))
        return Failure(f"cannot read {self.path}: {cause}")

    def _sql(self, sql: str, params: tuple = ()) -> list[sqlite3.Row]:
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self.damaged(exc) from None

    def _frame(self, sql: str) -> pd.DataFrame:
        try:
            return pd.read_sql_query(sql, self.conn)
        except (sqlite3.DatabaseError, pd.errors.DatabaseError) as exc:
            raise self.damaged(exc) from None

    def _define_current_views(self) -> None:
        """This version's views, in the connection's temporary schema (which SQLite searches
        first, and which a read-only file allows): a file written by any earlier version reads
        with today's columns, and the file itself is not touched."""
        if not {"campaign", "invocations"} <= self.names:
            return
        factors = json.loads((self.campaign() or {}).get("factors_json") or "[]")
        columns = {r[1] for r in self.conn.execute("PRAGMA table_info(invocations)")}
        with_deployments = "deployments" in self.names and "deployment" in columns
        self.conn.execute(flat_view_sql(factors, with_deployments).replace(
            "CREATE VIEW IF NOT EXISTS invocations_flat", "CREATE TEMP VIEW invocations_flat", 1))
        self.names.add(FLAT_VIEW)
        if "burst_members" in self.names:
            self.conn.execute(BURST_VIEW_SQL.replace(
                "CREATE VIEW IF NOT EXISTS burst_invocations", "CREATE TEMP VIEW burst_invocations", 1))
            self.names.add(BURST_VIEW)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "ResultsFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -------------------------------------------------------------- the campaign
    def campaign(self) -> Optional[dict]:
        """The campaign row as stored (JSON columns as text), or None."""
        if "campaign" not in self.names:
            return None
        rows = self._sql("SELECT * FROM campaign ORDER BY id LIMIT 1")
        return dict(rows[0]) if rows else None

    def require_campaign(self) -> dict:
        if "campaign" not in self.names:
            raise NotAResultsFile(self.path, "no campaign table", self.field)
        camp = self.campaign()
        if camp is None:
            raise BadInput(f"{self.path} holds no campaign", field=self.field)
        return camp

    def campaign_meta(self) -> dict[str, Any]:
        """The campaign with its JSON columns parsed (``plan``, ``factors``, ``machine``,
        ``spec``; None where unreadable), its events and the number of planned runs."""
        camp = dict(self.require_campaign())
        for k in ("plan_json", "factors_json", "machine_json", "spec_json"):
            if camp.get(k):
                try:
                    camp[k[:-5]] = json.loads(camp[k])
                except ValueError:
                    camp[k[:-5]] = None
        events = [dict(r) for r in self._sql("SELECT at, kind, detail_json FROM events ORDER BY id")]
        planned = self._sql("SELECT count(*) FROM planned_runs")[0][0]
        return {"campaign": camp, "events": events, "planned": planned}

    def progress(self) -> dict[str, Any]:
        """How far the campaign is: status, planned and recorded invocations by status, and a
        periodic campaign's slots (done, running, missed, the last one seen)."""
        camp = self.require_campaign()
        planned = self._sql("SELECT count(*) FROM planned_runs")[0][0]
        statuses = {r[0]: r[1] for r in self._sql(
            "SELECT status, count(*) FROM invocations GROUP BY status")}
        out: dict[str, Any] = {"campaign": camp["name"], "status": camp["status"],
                               "created_at": camp["created_at"],
                               "completed_at": camp["completed_at"], "planned": planned,
                               "recorded": sum(statuses.values()), "statuses": statuses}
        if "schedule_slots" in self.names:
            counts = {r[0]: r[1] for r in self._sql(
                "SELECT status, count(*) FROM schedule_slots GROUP BY status")}
            last = self._sql("SELECT max(slot) FROM schedule_slots")[0][0]
            missed_runs = self._sql(
                "SELECT count(*) FROM planned_runs p JOIN schedule_slots s ON s.slot = p.block "
                "AND s.campaign_id = p.campaign_id AND s.status = 'missed' LEFT JOIN "
                "invocations i ON i.campaign_id = p.campaign_id AND i.cell_key = p.cell_key AND "
                "i.replication = p.replication AND i.kind = p.kind WHERE i.id IS NULL")[0][0]
            out["slots"] = {"done": counts.get("done", 0), "running": counts.get("running", 0),
                            "missed": counts.get("missed", 0), "missed_invocations": missed_runs,
                            "last_slot": last}
        else:
            out["slots"] = {"done": 0, "running": 0, "missed": 0, "missed_invocations": 0,
                            "last_slot": None}
        return out

    def slots(self) -> pd.DataFrame:
        """A periodic campaign's slots (``schedule_slots``; empty for other campaigns)."""
        if "schedule_slots" not in self.names:
            return pd.DataFrame(columns=["campaign_id", "slot", "due_unix", "status",
                                         "started_unix", "ended_unix", "late_s", "reason",
                                         "detail_json"])
        return self._frame("SELECT * FROM schedule_slots ORDER BY slot")

    def factor_names(self) -> list[str]:
        camp = self.campaign() or {}
        return [f["name"] for f in json.loads(camp.get("factors_json") or "[]")]

    # -------------------------------------------------------------- invocations
    def flat(self, *, include_warmups: bool = True) -> pd.DataFrame:
        """The ``invocations_flat`` view: one row per invocation, a column per factor."""
        if FLAT_VIEW not in self.names:
            raise BadInput(
                f"{self.path.name} has no table or view {FLAT_VIEW!r} (found: "
                f"{', '.join(sorted(self.names)) or 'none'}); export the results with `faascope "
                "export RESULTS --format csv` and analyse the CSV", field=self.field)
        sql = f"SELECT * FROM {FLAT_VIEW}" + ("" if include_warmups else " WHERE warmup = 0")
        return self._frame(sql)

    def cells_without_success(self) -> list[tuple[str, int, str]]:
        """(cell, measured invocations, error types) of every cell with measured invocations
        none of which succeeded."""
        rows = self._sql(
            "SELECT cell_key, count(*), sum(status = 'ok'), "
            "group_concat(DISTINCT COALESCE(error_type, status)) FROM invocations "
            "WHERE kind = 'measure' GROUP BY cell_key")
        return [(k, n, errs or "") for k, n, ok, errs in rows if n and not ok]

    # -------------------------------------------------------------- series inside a response
    def hops(self) -> pd.DataFrame:
        """One row per hop of every transfer invocation (``invocation_id`` joins the flat
        view): the hop's index, instance, cold, its timestamps in ns (start, received, invoke of
        the next hop, its return, end), payload bytes, read/write/transfer seconds."""
        cols = ["hop", "instance_id", "cold", "start_ns", "received_ns", "invoke_ns", "return_ns",
                "end_ns", "payload_bytes", "read_s", "write_s", "transfer_s"]
        sel = ", ".join(f"json_extract(h.value, '$.{c}') AS {c}" for c in cols)
        return self._frame(
            f"SELECT i.id AS invocation_id, {sel} FROM invocations i, "
            "json_each(i.response_json, '$.workload.hops') h ORDER BY i.id, h.key")

    def network_samples(self) -> pd.DataFrame:
        """One row per sample of every network invocation's series: ``invocation_id``,
        ``direction`` (in: received by the function; out: by the sink), ``sample`` (index),
        ``interval_s`` and ``bytes`` received in that interval (the token-bucket fit's input)."""
        parts = []
        for direction in ("in", "out"):
            parts.append(
                f"SELECT i.id AS invocation_id, '{direction}' AS direction, "
                "CAST(s.key AS INTEGER) AS sample, "
                "json_extract(i.response_json, '$.workload.interval_ms') / 1000.0 AS interval_s, "
                "s.value AS bytes FROM invocations i, "
                f"json_each(i.response_json, '$.workload.{direction}.samples') s "
                "WHERE json_extract(i.response_json, '$.workload.kind') = 'network'")
        return self._frame(" UNION ALL ".join(parts) + " ORDER BY invocation_id, direction, "
                           "sample")

    def request_samples(self) -> pd.DataFrame:
        """One row per raw request latency an object or kv invocation kept (the agent's
        ``latency_samples``: a systematic sample by request index, at most the response
        schema's ``values_s.maxItems`` an invocation): ``invocation_id`` (joins the flat view),
        ``sample`` (index), ``stride`` (every stride-th request was kept) and ``latency_s``.
        Empty for invocations of files written before the agent kept them (schema version 7
        files of earlier faascope versions too: the field is inside response_json)."""
        return self._frame(
            "SELECT i.id AS invocation_id, CAST(s.key AS INTEGER) AS sample, "
            "json_extract(i.response_json, '$.workload.latency_samples.stride') AS stride, "
            "s.value AS latency_s FROM invocations i, "
            "json_each(i.response_json, '$.workload.latency_samples.values_s') s "
            "WHERE json_extract(i.response_json, '$.workload.kind') IN ('object', 'kv') "
            "ORDER BY i.id, sample")

    # -------------------------------------------------------------- bursts
    def is_burst_campaign(self) -> bool:
        return BURST_VIEW in self.names

    def burst_frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(members, bursts) of a burst campaign: ``burst_invocations`` (one row per member,
        warm-ups included, with every column of the flat view) and the ``bursts`` table (one row
        per burst attempt)."""
        if not self.is_burst_campaign():
            raise BadInput(f"{self.path} is not the results store of a burst campaign (no "
                           f"{BURST_VIEW} view; run a spec with a load section)", field=self.field)
        members = self._frame(f"SELECT * FROM {BURST_VIEW}")
        bursts = self._frame("SELECT * FROM bursts")
        return members, bursts


def _is_sqlite_file(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def is_burst_results(path: str | Path) -> bool:
    """Whether a path is a results file of a burst campaign (False for anything unreadable)."""
    p = Path(path)
    if not is_results_path(p) or not p.is_file():
        return False
    try:
        with ResultsFile(p) as rf:
            return rf.is_burst_campaign()
    except (click.ClickException, sqlite3.DatabaseError):
        return False


def read_flat(path: str | Path, *, include_warmups: bool = True,
              field: str = "RESULTS") -> pd.DataFrame:
    """The flat view of a results file that holds a campaign."""
    with ResultsFile(path, field=field) as rf:
        rf.require_campaign()
        return rf.flat(include_warmups=include_warmups)
