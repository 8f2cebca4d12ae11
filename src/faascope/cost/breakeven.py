"""Break-even intervals: the five-minute rule for pay-per-use storage tiers.

Gray and Putzolu's rule (J. Gray, F. Putzolu, "The 5 minute rule for trading memory for disc
accesses and the 10 byte rule for trading memory for CPU time", SIGMOD 1987; revisited by Gray
and Graefe, SIGMOD Record 26(4), 1997): keep an item in the faster, dearer tier when it is
accessed more often than once per break-even interval

    T = (what one access to the slower tier costs) / (what holding the item in the faster tier costs per second)

(in 1997: 128 pages per MB of RAM / 64 accesses per second per disk × $2000 per disk / $15 per MB
of RAM = 267 s, "five minutes"). Bodner et al. apply it to serverless tiers, where both sides are
list prices ("An Empirical Evaluation of Serverless Cloud Infrastructure for Large-Scale Data
Processing", arXiv:2501.07771, the Skyrise evaluation platform): an access to object storage
costs its request fee, and every tier's access also costs the function's billed time while it
waits; holding an item costs the GB-s price of the tier it is held in (function memory, or
ephemeral storage above its free size).
"""
from __future__ import annotations

import math


def break_even_interval(access_cost: float, hold_cost_per_second: float) -> float:
    """T = access_cost / hold_cost_per_second (seconds when the hold cost is per second); inf when
    holding is free."""
    if hold_cost_per_second <= 0:
        return math.inf
    return access_cost / hold_cost_per_second


def ram_break_even_s(item_bytes: int, access_s: float, memory_mb: float, gb_second: float,
                     request_fee: float = 0.0, mb_per_gb: float = 1024.0) -> float:
    """Seconds between accesses below which holding an item of `item_bytes` in the function's
    memory is cheaper than fetching it again from the tier the access was measured on: one
    access costs the request fee plus `access_s` of the function's billed time (memory_mb at
    `gb_second`); holding costs the item's GB (bytes / 1024³, Lambda's GB) at `gb_second`."""
    gb_item = item_bytes / (mb_per_gb * 1024 * 1024)
    access = request_fee + access_s * memory_mb / mb_per_gb * gb_second
    return break_even_interval(access, gb_item * gb_second)
