"""The state of a sandbox's network token bucket when an invocation began: fresh, partial or
drained (the local platform's ``X-Faascope-Net-{In,Out}-Bucket-{Bytes,Capacity-Bytes}`` reply
headers, recorded in ``invocations.platform_json``; agent/platform/netbucket.go).

A sandbox's buckets outlive its invocations, as Lambda's (Firecracker's) do: a warm invocation
starts with what the previous transfers left, and the one-time burst is spent once per
execution environment. A burst/baseline fit to invocations that started from different budgets
describes no bucket (Skyrise's 300 MiB bucket, warm-replicated, fitted as 140 MiB), so the
analysis fits each state apart (:mod:`faascope.analysis.network`).

- ``fresh``: every token there, one-time burst included (a new sandbox, or one whose bucket
  refilled and never spent its one-time burst).
- ``drained``: less than :data:`DRAINED_FRACTION` of the capacity left.
- ``partial``: anything between (refilled in part, or fully but without its one-time burst).

Why 5 %: what is left in a drained bucket must be too little to show as a burst. With the
calibrated Lambda bucket (300 MiB with its one-time burst, 1.2 GiB/s peak, 75 MiB/s refill) 5 %
is 15 MiB, spent in 13 ms: less than one 20 ms sample of the network workload (its default
interval), so a drained invocation's series is the baseline from its first sample.
``tests/store/test_bucket_state.py`` recomputes this from the calibration table, and shows on
simulated series that drained invocations fit as no burst at the baseline rate.
"""
from __future__ import annotations

FRESH, PARTIAL, DRAINED = "fresh", "partial", "drained"
#: the states, from the most budget to the least
BUCKET_STATES = (FRESH, PARTIAL, DRAINED)
#: below this fraction of its capacity a bucket counts as drained (see the module's docstring)
DRAINED_FRACTION = 0.05
#: the directions with a bucket each (the network workload's ``in`` and ``out``)
DIRECTIONS = ("in", "out")


def bucket_state(available: int | None, capacity: int | None) -> str | None:
    """The state of a bucket holding ``available`` of ``capacity`` bytes; None when unknown
    (no bucket: an unshaped network, a cloud provider, a file of an earlier version)."""
    if available is None or capacity is None or capacity <= 0:
        return None
    if available >= capacity:
        return FRESH
    if available < DRAINED_FRACTION * capacity:
        return DRAINED
    return PARTIAL


def bucket_columns(direction: str) -> tuple[str, str, str]:
    """The flat view's columns of a direction's bucket: bytes available at the invocation's
    start, capacity, state."""
    return (f"net_{direction}_bucket_bytes", f"net_{direction}_bucket_capacity_bytes",
            f"net_{direction}_bucket_state")


def bucket_view_sql(platform_json: str = "i.platform_json") -> str:
    """The flat view's bucket columns (:func:`bucket_columns`, each direction), in SQL over the
    invocation's platform JSON; the state's SQL is :func:`bucket_state`'s rule."""
    parts = []
    for d in DIRECTIONS:
        avail, cap, state = bucket_columns(d)
        a = f"CAST(json_extract({platform_json}, '$.net_{d}_bucket_bytes') AS INTEGER)"
        c = f"CAST(json_extract({platform_json}, '$.net_{d}_bucket_capacity_bytes') AS INTEGER)"
        parts += [f"{a} AS {avail}", f"{c} AS {cap}",
                  f"CASE WHEN {a} IS NULL OR {c} IS NULL OR {c} <= 0 THEN NULL "
                  f"WHEN {a} >= {c} THEN '{FRESH}' "
                  f"WHEN {a} < {DRAINED_FRACTION!r} * {c} THEN '{DRAINED}' "
                  f"ELSE '{PARTIAL}' END AS {state}"]
    return ",\n    ".join(parts)


#: every bucket column of the flat view, in order
BUCKET_COLUMNS = [c for d in DIRECTIONS for c in bucket_columns(d)]
