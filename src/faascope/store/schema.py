"""The results file's schema, one source for every table and view, with its version history.

A results file is one SQLite database per campaign (``docs/specs.md``, "Results store"):

- ``meta``: ``schema_version`` (the version that created the file, see :data:`HISTORY`).
- ``campaign``: the spec (normalised JSON and the text as written), its hash, the seed, the plan,
  the faascope version, the machine, timestamps and a status (running, interrupted, complete).
- ``cells``: each run cell's levels, function configuration and agent payload.
- ``planned_runs``: the full run order (order index, cell, replication, kind, block, forced cold).
- ``invocations``: one row per invocation as it completes, UNIQUE(campaign_id, cell_key,
  replication, kind), so a resumed campaign can never duplicate a record.
- ``events``: campaign start, resume, interruption, completion, deployments; a ``provenance``
  event at the start and the end of every run of the driver (what could explain drift: machine
  load, CPU, kernel, versions, region, architecture, price tables, calibration; see
  :data:`PROVENANCE_EVENT`), a ``slot_missed`` event for every slot of a periodic campaign
  that did not run (``schedule_slots``), a ``round_added`` event for every round of
  replications appended, and ``adaptive_plan`` events where the replications were chosen
  adaptively (``run --target-ci``: :data:`ADAPTIVE_PLAN_EVENT`); ``may_have_run_stop`` where a
  run stopped at a call that may have run, and ``may_have_run_rerun`` with the record of every
  such planned run rerun on request (holding the record it replaced: :data:`MAY_HAVE_RUN_RERUN_EVENT`).
- ``deployments``: where the campaign runs: one row per deployment (a spec's ``deployments``,
  else one row named after the provider kind), with its provider kind, region and the price
  table that prices it; ``invocations.deployment`` names each invocation's.
- view ``invocations_flat``: one flat row per invocation with a column per factor (what
  ``faascope analyze``, ``report`` and ``export`` read).

A campaign whose planned runs are bursts (a spec with a ``load`` section) adds:

- ``burst_members``: one row per invocation slot that was sent in a burst: which burst, attempt,
  member index, stagger batch, planned offset, function copy. Written in the same transaction
  as the invocation's record, so the two never disagree.
- ``bursts``: one row per burst attempt: planned and sent members, the schedule, the timing of
  the dispatch, statuses, throttles, error budget, and how it ended.
- view ``burst_invocations``: ``invocations_flat`` joined with ``burst_members``, plus the
  derived per-invocation times (wait, run, service; ``docs/concurrency.md``).

A periodic campaign (``design.schedule``, docs/schedules.md) adds:

- ``schedule_slots``: one row per slot that started or was missed: its due time, when it
  started and ended, how late it started, and ``status`` (running, done, missed). A missed
  slot's row and its ``slot_missed`` event are written in one transaction.

Only :mod:`faascope.store.writer` creates or changes these; everything that reads them goes
through :mod:`faascope.store.reader`.
"""
from __future__ import annotations

import json

# Each workload kind's measures (column, SQL over the invocations row ``i``, meaning, unit,
# direction) live in the measures table: one list feeds the view below, the docs' table of
# columns (docs/workloads.md; a test keeps the two equal) and every command that ranks levels.
from faascope.store.measures import MEASURES
from faascope.store.bucket_state import BUCKET_COLUMNS, bucket_view_sql

#: the version this faascope writes; files of every version in HISTORY stay readable
SCHEMA_VERSION = 9

#: (version, date, what changed): a file says in ``meta.schema_version`` which version created it
HISTORY = [
    (1, "2026-11-01", "campaign, cells, planned_runs, invocations, events, meta; view "
                      "invocations_flat. Burst campaigns added burst_members, bursts and view "
                      "burst_invocations without changing the version number."),
    (2, "2026-11-22", "version 2 names what version 1 files of burst campaigns already held: "
                      "the burst tables and view are part of the schema (created with the first "
                      "burst of a campaign; absent from sequential campaigns). No column "
                      "changed: a version 1 file reads as version 2."),
    (3, "2026-11-22", "invocations_flat gains each workload kind's measures as columns "
                      "(MEASURES: read/write/compute/io time, throughput, per-request latency "
                      "percentiles, request counts, retries, throttles, network bytes and rates, "
                      "transfer chain times). No table changed. The reader defines the current "
                      "views in a temporary schema for every file it opens, so files of versions "
                      "1 and 2 read with the new columns too."),
    (4, "2026-11-23", "periodic campaigns: table schedule_slots (created with a scheduled "
                      "campaign's first slot; absent from other campaigns) and the event kinds "
                      "slot_missed and provenance. No existing table or view changed: a file of "
                      "versions 1 to 3 reads as before (no slots, no provenance events)."),
    (5, "2026-11-23", "deployments: a campaign may run on several providers (a spec's "
                      "deployments). New table deployments (name, provider kind, region, price "
                      "table); invocations gains the column deployment; invocations_flat gains "
                      "deployment, provider_kind, region and price_platform. Files of versions "
                      "1-4 read with deployment = their provider kind; resuming one adds the "
                      "column and the table (ALTER TABLE ADD COLUMN: no row changes)."),
    (6, "2026-11-26", "adaptive replication is recorded as a design: run --target-ci and tune "
                      "--spec write an adaptive_plan event (procedure, pilot size, target, "
                      "statistic, per cell the pilot's estimate and the planned n) and their "
                      "round_added events carry a stage (pilot, stage 2). No table or view "
                      "changed: files of versions 1-5 read as before; their --target-ci rounds "
                      "(round_added with a reason 'target CI ±…' and no adaptive_plan event) "
                      "are recognised as the earlier stop-when-narrow rule."),
    (7, "2026-11-27", "invocations_flat gains each network direction's token bucket as the "
                      "invocation began (net_{in,out}_bucket_bytes, _capacity_bytes, _state: "
                      "fresh, partial, drained; faascope.store.bucket_state), read from the "
                      "local platform's reply headers in platform_json. No table changed: files "
                      "of versions 1-6 read with the columns null (no bucket recorded). Local "
                      "campaigns record the event kinds host_capacity (a probe of what the host "
                      "delivers per stand-in and device, at the start) and host_bound (the cells "
                      "whose aggregate demand reached the probed capacity, at the end). invocations_flat "
                      "also gains platform_front_end_ms (the local platform's modelled front end, "
                      "part of client_latency_seconds; null in older files). Object and kv responses "
                      "(response_json) carry latency_samples: the raw latencies of a systematic "
                      "sample of the requests (bounded by the response schema; "
                      "ResultsFile.request_samples); files written before have none, and the "
                      "fidelity comparison falls back to quantiles without a KS distance."),
    (8, "2026-11-27", "invocations_flat gains instance_cpu_quota (the vCPU the instance's CPU "
                      "quota gives, as the agent read it from its cgroup) and instance_num_cpu "
                      "(the CPUs the instance could see: the host's), read from response_json; "
                      "null where the agent did not report them. The host_bound event's cells "
                      "gain cpu: the most vCPU promised at once to the cell's running instances "
                      "against the host's CPUs. No table changed."),
    (9, "2026-11-27", "a user's own function (spec function.code, workload kind invoke): its "
                      "response_json is {returned: what the function returned, cold: the "
                      "platform's word on the start}, and invocations_flat's latency_seconds is "
                      "then the platform's duration (the REPORT line's Duration, in seconds), "
                      "as faascope tune's; cold is filled from the platform. No table changed: "
                      "files of versions 1-8 (agent responses only) read as before."),
]

#: the event kind of a run's provenance record (detail: ``phase`` start or end, and the facts)
PROVENANCE_EVENT = "provenance"
#: the event kind of a slot of a periodic campaign that did not run
SLOT_MISSED_EVENT = "slot_missed"
#: the event kind of adaptive replication's plans (faascope.driver.adaptive; detail: procedure,
#: pilot_n, target_rel_half_width, stat, alpha, response, warm_only, and per cell the plan)
ADAPTIVE_PLAN_EVENT = "adaptive_plan"
#: the event kind of a round of replications appended to a campaign (faascope.designs.topup)
ROUND_ADDED_EVENT = "round_added"
#: the event kind of a local campaign's host capacity probe (faascope.standins.capacity; detail:
#: per stand-in and device the aggregate bytes/s this host delivered)
HOST_CAPACITY_EVENT = "host_capacity"
#: the event kind of the cells where the host, not the modelled cloud, was the bottleneck
#: (faascope.analysis.host_bound; written at the end of every run of a local campaign)
HOST_BOUND_EVENT = "host_bound"
#: the event kind that names the local platform serving a campaign (faascope.standins.wiring;
#: detail: phase start with endpoint, data_dir, pid, how (started, running, dedicated, given)
#: and owner (this run, run, user); phase end with action: stopped, left, in use, gone)
PLATFORM_EVENT = "platform"
#: the event kind of a run stopped at its first record of a call that may have run (a client
#: error ``MayHaveRun.*``; faascope.driver.campaign; detail: function(s), order indexes, error)
MAY_HAVE_RUN_STOP_EVENT = "may_have_run_stop"
#: the event kind written with the record of a planned run rerun by ``run --resume
#: --rerun-may-have-run``, in the same transaction (detail: ``invocation_id`` of the new record,
#: cell_key, replication, kind, and ``superseded``: the replaced invocations row whole, with
#: ``superseded_member``, its burst member row, in a burst campaign)
MAY_HAVE_RUN_RERUN_EVENT = "may_have_run_rerun"
#: the event kind that says which local servers stood in for cloud storage and how each profile
#: was shaped (faascope.standins.wiring, ``Wired.event_detail``: servers, platform, shaping …)
STANDINS_EVENT = "standins"


def event_detail(event: dict) -> dict:
    """An ``events`` row's ``detail_json`` decoded; {} when absent, unreadable or not an object."""
    try:
        d = json.loads(event.get("detail_json") or "{}")
    except ValueError:
        return {}
    return d if isinstance(d, dict) else {}


def latest_event_detail(events: list[dict], kind: str) -> dict | None:
    """The detail of the last event of ``kind`` (a resumed campaign's latest); None without one."""
    found = [e for e in events if e.get("kind") == kind]
    return event_detail(found[-1]) if found else None


#: the states of a slot of a periodic campaign
SLOT_STATES = ("running", "done", "missed")

#: what version 5 added to files of earlier versions, when a campaign in one is resumed
DEPLOYMENT_COLUMN = "deployment"

CORE_TABLES = """
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
    deployment TEXT,
    UNIQUE (campaign_id, cell_key, replication, kind)
);
CREATE TABLE IF NOT EXISTS deployments (
    campaign_id INTEGER NOT NULL REFERENCES campaign(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    region TEXT,
    price_platform TEXT,
    detail_json TEXT,
    PRIMARY KEY (campaign_id, name)
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
] + [m.name for m in MEASURES] + ["deployment", "provider_kind", "region", "price_platform",
                                  "platform_front_end_ms"] + BUCKET_COLUMNS + [
    "instance_cpu_quota", "instance_num_cpu"]
#: the factor whose column is the fixed ``deployment`` column (the same value)
DEPLOYMENT_FACTOR_FIELD = "deployment.deployment"

INVOCATION_COLUMNS = [
    "campaign_id", "cell_key", "levels_json", "replication", "kind", "warmup", "order_index",
    "block", "status", "function_name", "config_json", "cold_forced", "client_send_ns",
    "client_headers_ns", "client_end_ns", "client_latency_s", "client_headers_s", "attempts",
    "retries", "response_json", "function_error", "error_type", "error_message", "log_tail",
    "request_id", "platform_json", "started_at", "ended_at", "started_at_local", "deployment",
]

MEMBER_COLUMNS = ["campaign_id", "cell_key", "replication", "kind", "burst", "attempt", "member",
                  "batch", "planned_offset_s", "scheduled_ns", "function_copy"]

BURST_TABLES = """
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

SCHEDULE_TABLES = f"""
CREATE TABLE IF NOT EXISTS schedule_slots (
    campaign_id INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    due_unix REAL NOT NULL,
    status TEXT NOT NULL CHECK (status IN ({", ".join(repr(x) for x in SLOT_STATES)})),
    started_unix REAL,
    ended_unix REAL,
    late_s REAL,
    reason TEXT,
    detail_json TEXT,
    PRIMARY KEY (campaign_id, slot)
);
"""

BURST_VIEW = """
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


def quote_name(name: str) -> str:
    """An SQL identifier for any column name (factor names are the user's)."""
    return '"' + name.replace('"', '""') + '"'


def _json_path(key: str) -> str:
    return '$."' + key.replace('"', '\\"') + '"'


def flat_view_sql(factors: list[dict], deployments: bool = True) -> str:
    """``CREATE VIEW invocations_flat``: one flat row per invocation, a column per factor
    (named ``factor_NAME`` where NAME is one of :data:`FLAT_FIXED`) and the agent's and the
    platform's measures pulled out of their JSON. ``deployments``: the file has version 4's
    deployments table and column (without them, a file of an earlier version, every invocation
    ran on the campaign's provider)."""
    cols = []
    for f in factors:
        if f.get("field") == DEPLOYMENT_FACTOR_FIELD:
            continue  # the fixed deployment column holds its level
        name = f["name"]
        col = f"factor_{name}" if name in FLAT_FIXED else name
        path = _json_path(name)
        if f.get("boolean"):
            expr = (f"CASE json_type(i.levels_json, '{path}') WHEN 'true' THEN 'true' "
                    f"WHEN 'false' THEN 'false' ELSE json_extract(i.levels_json, '{path}') END")
        else:
            expr = f"json_extract(i.levels_json, '{path}')"
        cols.append(f"{expr} AS {quote_name(col)}")
    factor_sql = (",\n    ".join(cols) + ",") if cols else ""
    r = "i.response_json"
    measure_sql = ",\n    ".join(f"{m.sql} AS {m.name}" for m in MEASURES)
    if deployments:
        deployment_sql = ("COALESCE(i.deployment, c.provider) AS deployment,\n    "
                          "COALESCE(d.kind, c.provider) AS provider_kind,\n    "
                          "d.region AS region,\n    d.price_platform AS price_platform")
        deployment_join = ("\nLEFT JOIN deployments d ON d.campaign_id = i.campaign_id "
                           "AND d.name = COALESCE(i.deployment, c.provider)")
    else:
        deployment_sql = ("c.provider AS deployment,\n    c.provider AS provider_kind,\n    "
                          "NULL AS region,\n    NULL AS price_platform")
        deployment_join = ""
    return f"""
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
    -- the agent's own time; a user's function (a configuration with code) has the platform's
    COALESCE(json_extract({r}, '$.workload.elapsed_s'),
             CASE WHEN json_extract(i.config_json, '$.code') IS NOT NULL
                  THEN CAST(json_extract(i.platform_json, '$.report.duration_ms') AS REAL) / 1000.0
             END) AS latency_seconds,
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
    json_extract(i.config_json, '$.profile') AS config_profile,
    {measure_sql},
    {deployment_sql},
    -- the local platform's modelled front end, part of client_latency_seconds (docs/platform.md)
    CAST(json_extract(i.platform_json, '$.front_end_ms') AS REAL) AS platform_front_end_ms,
    {bucket_view_sql()},
    -- what the instance's CPU quota promised and the CPUs it could see (analysis/host_bound.py)
    CAST(json_extract({r}, '$.instance.cpu_quota') AS REAL) AS instance_cpu_quota,
    json_extract({r}, '$.instance.num_cpu') AS instance_num_cpu
FROM invocations i JOIN campaign c ON c.id = i.campaign_id{deployment_join}
ORDER BY i.order_index"""
