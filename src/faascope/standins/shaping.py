"""Stand-ins with the cloud's shape: which sandbox profile gets which shaping, and the
configuration of the shaping proxy (``faascope-shaper``, agent/shaper) that puts it in front of
the local S3 (VersityGW) and DynamoDB (moto) servers (docs/storage.md, "Shaped like the cloud").

The shaper draws each request's latency from the lognormal through the calibrated median and
99th percentile of its class (S3: PUT/POST/DELETE write, GET/HEAD read; DynamoDB by operation)
and answers S3 requests over their prefix's rate with ``503 SlowDown``. Every figure comes from
a calibration table (:mod:`faascope.calibration`, ``standins-aws``); this module only maps
entries to the shaper's routes, so the table stays the one source.

Profiles (:data:`faascope.providers.local_platform.PROFILES`):

- ``lambda``: shaped with ``standins-aws`` (published: Skyrise's measurements from Lambda,
  AWS's documented prefix rates);
- ``gcf``: shaped with the same figures, marked ``assumed``: Google's Cloud Storage and
  Firestore request latencies are not in faascope's sources, and S3's keep a cloud object
  store's shape (tens of ms, flat under concurrency) where the host's disk would not;
- ``unlimited``: unshaped, the servers as they are.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Optional, Union

from faascope import calibration
from faascope.errors import BadInput
from faascope.providers.local_platform import PROFILES

#: the calibration table the shaped profiles use
TABLE = calibration.STANDINS_TABLE
#: stand-in kind -> the table's entry prefix of its latencies
LATENCY_ENTRIES = calibration.STANDIN_LATENCY_ENTRIES
#: the stand-ins a shaper sits in front of
SHAPED_KINDS = tuple(LATENCY_ENTRIES)


@dataclass(frozen=True)
class Shaping:
    profile: str
    table: str
    role: str  # "published" or "assumed", as calibration entries have it
    reason: str


PROFILE_SHAPING: dict[str, Optional[Shaping]] = {
    "lambda": Shaping("lambda", TABLE, "published",
                      "AWS Lambda's own storage services as measured from Lambda (Skyrise) and "
                      "S3's documented per-prefix request rates"),
    "gcf": Shaping("gcf", TABLE, "assumed",
                   "no Cloud Storage or Firestore request latencies are in faascope's sources; "
                   "S3's figures keep a cloud object store's shape (tens of ms, flat under "
                   "concurrency) where the host's disk would not"),
    "unlimited": None,
}


def shaping_for(profile: str, field: str = "--shape") -> Optional[Shaping]:
    """The shaping of a sandbox profile (None: unshaped)."""
    if profile not in PROFILE_SHAPING:
        raise BadInput(f"unknown profile {profile!r} (one of {', '.join(PROFILES)})", field=field)
    return PROFILE_SHAPING[profile]


def load(shaping: Shaping, override: Optional[Union[str, Path]] = None) -> calibration.CalibrationTable:
    """The shaping's table, or a user file that extends it (``extends: standins-aws``)."""
    if override is None:
        return calibration.load_table(shaping.table)
    table = calibration.load_override(override)
    if table.name != shaping.table:
        raise BadInput(f"a shaping file extends {shaping.table}, not {table.name}",
                       field="calibration.extends")
    return table


def route(kind: str, listen_port: int, backend: str, table: calibration.CalibrationTable) -> dict:
    """One shaper route (agent/shaper Route) in front of a stand-in, from the table."""
    if kind not in LATENCY_ENTRIES:
        raise BadInput(f"no shaping for stand-in {kind!r} (only {', '.join(SHAPED_KINDS)})", field="kind")
    e = LATENCY_ENTRIES[kind]
    r = {"listen": f"127.0.0.1:{listen_port}", "backend": backend, "service": kind,
         "write": {"median_ms": table.value(f"{e}_write_median"), "p99_ms": table.value(f"{e}_write_p99")},
         "read": {"median_ms": table.value(f"{e}_read_median"), "p99_ms": table.value(f"{e}_read_p99")}}
    if kind == "s3":
        r["write_rate"] = {"per_s": table.value("s3_prefix_write_rate"),
                           "burst": table.value("s3_prefix_write_burst")}
        r["read_rate"] = {"per_s": table.value("s3_prefix_read_rate"),
                          "burst": table.value("s3_prefix_read_burst")}
    return r


def config(routes: list[dict], seed: int = 0) -> dict:
    """The shaper's configuration file (seed 0: a random one per start)."""
    return {"seed": int(seed), "routes": routes}


def describe(shaping: Shaping, table: calibration.CalibrationTable,
             endpoints: Mapping[str, str]) -> dict:
    """What a campaign's ``standins`` event records of a profile's shaping."""
    d = {"profile": shaping.profile, "table": f"{table.name}@{table.version}", "role": shaping.role,
         "reason": shaping.reason, "endpoints": dict(endpoints)}
    if table.overridden:
        d["overridden"] = dict(table.overridden)
    return d
