"""The measures table: every response a results file holds, with its meaning, its unit and which
direction is better. One source: the flat view's SQL (:mod:`faascope.store.schema`), the docs'
table of columns (``scripts/workloads_doc.py``), and every command that ranks levels (analyze,
report, compare, tune, stagger) read it, so that a throughput is never ranked like a latency.

- ``unit``: ``s`` (seconds), ``ms`` (milliseconds), ``B`` (bytes), ``B/s`` (bytes per second),
  ``1/s`` (operations per second), ``MB`` (Lambda's MB = MiB of memory) or ``""`` (a count or
  text);
- ``better``: ``"lower"``, ``"higher"``, or ``None`` where neither is better (how many bytes a
  workload moved is a setting, not a merit); ranking such a response needs the user to say which
  way (``--higher-is-better`` / ``--lower-is-better``);
- ``noun``: what the answer calls it ("highest throughput", "fewest retries").

A column that is not in the table (a foreign CSV's) is described by :func:`describe`, from its
name and the user's ``--higher-is-better`` / ``--lower-is-better``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from faascope.errors import BadInput

#: the directions a measure can have (None: neither is better)
DIRECTIONS = ("lower", "higher")
#: units that are durations, and their factor to seconds
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


@dataclass(frozen=True)
class Measure:
    name: str
    meaning: str
    unit: str
    better: Optional[str]
    noun: str
    #: SQL over the invocations row ``i`` for the workload measures (None: a fixed column)
    sql: Optional[str] = None
    #: False when the direction was assumed (a foreign column named like a duration)
    known: bool = True

    @property
    def higher_is_better(self) -> bool:
        return self.better == "higher"

    @property
    def is_time(self) -> bool:
        return self.unit in TIME_UNITS

    @property
    def seconds_per_unit(self) -> Optional[float]:
        return TIME_UNITS.get(self.unit)

    @property
    def best_word(self) -> str:
        """The answer's word for the best level: "Fastest" for a duration where lower is better,
        "Highest throughput", "Lowest retries", or "Lowest … / highest …" without a direction."""
        if self.is_time and self.better == "lower":
            return "Fastest"
        if self.better == "higher":
            return f"Highest {self.noun}"
        if self.better == "lower":
            return f"Lowest {self.noun}"
        return f"Lowest {self.noun}"

    @property
    def direction_text(self) -> str:
        """"lower is better", "higher is better" or "no direction: ordered from lowest to highest"."""
        if self.better is None:
            return "neither direction is better: ordered from lowest to highest"
        return f"{self.better} is better" + ("" if self.known else " (assumed from its name)")


# ------------------------------------------------------------------------------ the workload measures
# Each workload kind's measures, pulled out of the agent's response (src/faascope/schemas/
# agent-response.schema.json) by SQL over the invocations row ``i``.
_W = "json_extract(i.response_json, '$.workload.{}')"
_OP = _W.format("op")
_ELAPSED = _W.format("elapsed_s")
_READ = (f"COALESCE({_W.format('read_s')}, CASE WHEN {_OP} IN ('read', 'get') "
         f"THEN {_ELAPSED} END)")
_WRITE = (f"COALESCE({_W.format('write_s')}, CASE WHEN {_OP} IN ('write', 'put') "
          f"THEN {_ELAPSED} END)")
_HOPS = "json_each(i.response_json, '$.workload.hops')"


def _m(name, sql, meaning, unit, better, noun) -> Measure:
    return Measure(name, meaning, unit, better, noun, sql)


MEASURES: list[Measure] = [
    _m("workload_op", _OP, "the operation the workload ran (read, write, get, put)", "", None,
       "operation"),
    _m("read_s", _READ,
       "seconds of reading: an app's read phase, or elapsed_s of a read/get (fileio, sharedfs, "
       "object, kv)", "s", "lower", "read time"),
    _m("write_s", _WRITE,
       "seconds of writing: an app's write phase, or elapsed_s of a write/put", "s", "lower",
       "write time"),
    _m("compute_s", f"COALESCE({_W.format('compute_s')}, CASE WHEN {_W.format('kind')} = 'spin' "
                    f"THEN {_ELAPSED} END)",
       "seconds of computing: an app's compute phase, or elapsed_s of spin", "s", "lower",
       "compute time"),
    _m("io_s", f"CASE WHEN {_READ} IS NULL AND {_WRITE} IS NULL THEN NULL "
               f"ELSE COALESCE({_READ}, 0) + COALESCE({_WRITE}, 0) END",
       "read_s + write_s", "s", "lower", "I/O time"),
    _m("cpu_s", _W.format("cpu_s"), "spin: CPU time the process used", "s", "lower", "CPU time"),
    _m("throughput_bytes_per_s", _W.format("throughput_bytes_per_s"),
       "bytes moved per second of the timed I/O (fileio, sharedfs, object, kv)", "B/s", "higher",
       "throughput"),
    _m("iops", _W.format("iops"), "requests per second (object, kv)", "1/s", "higher", "IOPS"),
    _m("request_count", _W.format("latency.count"),
       "requests (or I/O calls) behind the latency percentiles", "", None, "request count"),
    _m("request_mean_s", _W.format("latency.mean_s"), "mean latency of one request or I/O call",
       "s", "lower", "request latency"),
    _m("request_p50_s", _W.format("latency.p50_s"), "median latency of one request or I/O call",
       "s", "lower", "median request latency"),
    _m("request_p90_s", _W.format("latency.p90_s"), "90th percentile of the same", "s", "lower",
       "p90 request latency"),
    _m("request_p99_s", _W.format("latency.p99_s"), "99th percentile of the same", "s", "lower",
       "p99 request latency"),
    _m("request_p999_s", _W.format("latency.p999_s"), "99.9th percentile of the same", "s",
       "lower", "p99.9 request latency"),
    _m("request_max_s", _W.format("latency.max_s"), "slowest request or I/O call", "s", "lower",
       "slowest request"),
    _m("ttfb_p50_s", _W.format("ttfb.p50_s"), "object GET: median time to the first byte", "s",
       "lower", "median time to first byte"),
    _m("ttfb_p99_s", _W.format("ttfb.p99_s"), "object GET: 99th percentile time to first byte",
       "s", "lower", "p99 time to first byte"),
    _m("requests_ok", _W.format("requests.ok"), "storage requests that succeeded (object, kv)",
       "", None, "successful requests"),
    _m("requests_failed", _W.format("requests.failed"), "storage requests that failed", "",
       "lower", "failed requests"),
    _m("request_attempts", _W.format("requests.attempts"),
       "storage request attempts, retries included", "", "lower", "request attempts"),
    _m("request_retries", _W.format("requests.retries"), "storage requests retried by the SDK", "",
       "lower", "retries"),
    _m("request_throttles", _W.format("requests.throttles"),
       "throttled storage attempts (S3 SlowDown, DynamoDB throughput exceeded)", "", "lower",
       "throttles"),
    _m("net_in_bytes", _W.format("in.bytes"), "network: bytes received by the function", "B",
       None, "bytes received"),
    _m("net_in_bytes_per_s", _W.format("in.throughput_bytes_per_s"),
       "network: mean receive rate", "B/s", "higher", "receive rate"),
    _m("net_out_bytes", _W.format("out.bytes"), "network: bytes sent by the function", "B", None,
       "bytes sent"),
    _m("net_out_bytes_per_s", _W.format("out.throughput_bytes_per_s"), "network: mean send rate",
       "B/s", "higher", "send rate"),
    _m("chain_length", _W.format("chain_length"), "transfer: invocations in the chain", "", None,
       "chain length"),
    _m("chain_s", f"(SELECT (max(json_extract(value, '$.end_ns')) - "
                  f"min(json_extract(value, '$.start_ns'))) / 1e9 FROM {_HOPS})",
       "transfer: first hop's start to last hop's end (one clock on the local platform)", "s",
       "lower", "chain time"),
    _m("transfer_s", f"(SELECT sum(json_extract(value, '$.transfer_s')) FROM {_HOPS})",
       "transfer: time the payload spent between hops, summed over the chain", "s", "lower",
       "transfer time"),
]

#: the flat view's fixed columns that are responses (the view's other fixed columns are ids,
#: levels and timestamps)
FIXED_MEASURES: list[Measure] = [
    Measure("latency_seconds", "the agent's timed workload, elapsed_s; for a user's own function "
            "the platform's duration (REPORT Duration)", "s", "lower", "latency"),
    Measure("client_latency_seconds", "the client's round trip of the invocation", "s", "lower",
            "round trip"),
    Measure("client_headers_seconds", "the client's time to the reply's headers", "s", "lower",
            "time to headers"),
    Measure("platform_setup_ms", "the local platform's sandbox set-up of a cold start", "ms",
            "lower", "set-up time"),
    Measure("platform_init_ms", "the platform's runtime initialisation of a cold start", "ms",
            "lower", "init time"),
    Measure("platform_duration_ms", "the platform's duration of the invocation", "ms", "lower",
            "duration"),
    Measure("report_duration_ms", "the REPORT line's Duration", "ms", "lower", "duration"),
    Measure("billed_duration_ms", "the REPORT line's Billed Duration", "ms", "lower",
            "billed duration"),
    Measure("init_duration_ms", "the REPORT line's Init Duration (cold starts)", "ms", "lower",
            "init duration"),
    Measure("max_memory_used_mb", "the REPORT line's Max Memory Used", "MB", "lower",
            "memory used"),
    Measure("bytes", "bytes the workload moved", "B", None, "bytes"),
    Measure("ops", "operations the workload made", "", None, "operations"),
]

#: the per-member times of a burst (the burst_invocations view, docs/concurrency.md), which the
#: burst statistics and staggering compare
BURST_MEASURES: list[Measure] = [
    Measure("delay_s", "the burst's start to this member's send", "s", "lower", "send delay"),
    Measure("wait_s", "send to the agent's receipt (queueing, cold start, network)", "s", "lower",
            "wait time"),
    Measure("start_s", "the burst's start to the agent's receipt", "s", "lower", "start time"),
    Measure("run_s", "the agent's receipt to the workload's end", "s", "lower", "run time"),
    Measure("service_s", "send to the workload's end (wait + run)", "s", "lower", "service time"),
    Measure("completion_s", "the burst's start to the workload's end", "s", "lower",
            "completion time"),
    Measure("round_trip_s", "the client's send to its receipt of the reply", "s", "lower",
            "round trip"),
    Measure("send_lag_s", "the member's planned send instant to its actual send", "s", "lower",
            "send lag"),
]

_TABLE = {m.name: m for m in FIXED_MEASURES + MEASURES + BURST_MEASURES}
#: the names of the workload measures (the flat view's columns computed from the response)
MEASURE_NAMES = frozenset(m.name for m in MEASURES)


def measure(name: str) -> Optional[Measure]:
    """The table's entry for a results-file column; None for any other column."""
    return _TABLE.get(name)


# a foreign column's name: rates (higher is better for most users, but not always: never assumed)
_RATE = re.compile(r"(throughput|bandwidth|per_s(ec)?$|_ps$|/s$|iops|mbps|gbps|kbps|bps$|"
                   r"ops_per|rate|speed|goodput|requests_per)", re.I)
_TIME_SUFFIX = (("_seconds", "s"), ("_sec", "s"), ("_secs", "s"), ("_s", "s"), ("_ms", "ms"),
                ("_millis", "ms"), ("_us", "us"), ("_micros", "us"), ("_ns", "ns"))
_TIME_NAMES = {"latency": "s", "seconds": "s", "duration": "s", "time": "s", "elapsed": "s"}


def _foreign_unit(name: str) -> str:
    low = name.lower()
    for suffix, unit in _TIME_SUFFIX:
        if low.endswith(suffix):
            return unit
    if low in _TIME_NAMES:
        return _TIME_NAMES[low]
    if low.endswith("_bytes"):
        return "B"
    if low.endswith(("_bytes_per_s", "_bytes_per_sec", "_bps")):
        return "B/s"
    return ""


def describe(name: str, higher_is_better: Optional[bool] = None,
             option: str = "--higher-is-better") -> Measure:
    """What a response column is: the table's entry, with the direction the user gave (an
    explicit choice always wins); a foreign column from its name.

    A foreign column named like a rate (throughput, bandwidth, …_per_s, iops, mbps) has no
    assumed direction: ranking it without ``--higher-is-better`` or ``--lower-is-better`` is
    refused (exit 2), since lower-is-better would name the slowest level best. Any other
    foreign column is taken as lower-is-better, and the answer says it was assumed."""
    m = measure(name)
    better = None if higher_is_better is None else ("higher" if higher_is_better else "lower")
    if m is not None:
        if better is not None and better != m.better:   # the user's word wins
            return Measure(m.name, m.meaning, m.unit, better, m.noun, m.sql, known=True)
        return m
    unit = _foreign_unit(name)
    if unit == "B" and re.search(r"per_?s", name, re.I):
        unit = "B/s"
    if better is None:
        if _RATE.search(name) and unit not in TIME_UNITS:
            raise BadInput(f"{name!r} looks like a rate (a throughput or bandwidth), where higher "
                           "is usually better; say which way is better with --higher-is-better or "
                           "--lower-is-better, so that no level is named best by mistake",
                           field=option)
        return Measure(name, "", unit, "lower", name, known=False)
    return Measure(name, "", unit, better, name, known=True)
