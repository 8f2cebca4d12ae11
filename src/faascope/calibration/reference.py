"""Published raw distributions (small committed subsets, ``distributions/``) that the fidelity
check compares whole local distributions with: Skyrise's per-request storage latencies and
lambda-perf's daily cold-start init durations. Their attribution and licenses are beside them
(``distributions/README.md``, ``LICENSE-*.txt``); scripts/make_reference_distributions.py made
them from the repositories' raw data.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

DISTRIBUTIONS_DIR = "distributions"
#: file name (without .json) -> what it holds
FILES = ("skyrise-request-latency", "lambda-perf-init")
#: seconds per unit of a reference file
TO_SECONDS = {"ms": 1e-3, "s": 1.0}


@dataclass(frozen=True)
class Reference:
    """One published distribution: its values in seconds, where it comes from, and the full
    data's nearest-rank quantiles (the subset's are close to them, not equal)."""
    key: str                      # file:set, e.g. skyrise-request-latency:dynamodb_read
    values_s: np.ndarray
    source: str
    repository: str
    commit: str
    license: str
    what: str
    full_quantiles_s: dict        # p50, p90, p99 of the whole published data, seconds
    full_n: int


@lru_cache(maxsize=None)
def _file(name: str) -> dict:
    root = resources.files("faascope.calibration").joinpath(DISTRIBUTIONS_DIR)
    return json.loads(root.joinpath(f"{name}.json").read_text())


def reference(name: str, set_name: str) -> Reference:
    doc = _file(name)
    s = doc["sets"][set_name]
    k = TO_SECONDS[doc["unit"]]
    return Reference(key=f"{name}:{set_name}", values_s=np.asarray(s["values"], float) * k,
                     source=doc["source"], repository=doc["repository"], commit=doc["commit"],
                     license=doc["license"], what=doc["what"],
                     full_quantiles_s={q: s["full"][q] * k for q in ("p50", "p90", "p99")},
                     full_n=int(s["full"]["n"]))


def sets(name: str) -> list[str]:
    return list(_file(name)["sets"])
