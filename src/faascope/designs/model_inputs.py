"""The figures of the duration model (:mod:`faascope.designs.estimate`) that describe a cloud or
a calibrated local profile, read from the calibration tables, the one source the local platform
and the stand-ins take them from (:mod:`faascope.calibration`): nothing here is a copy.

- ``platform-<profile>`` (lambda, gcf): the /tmp device limits (``tmp_read_bps``,
  ``tmp_read_iops``, ``tmp_write_bps``, ``tmp_write_iops``), the modelled cold start
  (``cold_start_fixed``, ``cold_start_fetch_rate``), the network token bucket (``net_*``) and the
  shared file system's budget (``shared_*``), the /tmp limits' memory scale
  (``tmp_limits_memory``, ``tmp_limits_memory_exponent``), the host disk's budget
  (``host_tmp_*``) and the modelled front end (``front_end_delay``); an entry a profile's table does not have is a limit
  the profile does not set (the gcf profile's /tmp is memory: no device limit);
- ``standins-aws``: the request latencies the shaped stand-ins draw (and Skyrise measured from
  Lambda, which the cloud estimate uses as well): the model takes the **mean** of the lognormal
  through the entry's median and 99th percentile, because a campaign's duration is a sum of
  requests, and a sum grows with the mean, not the median.

Every figure read is recorded under its anchor ``table@version:key`` (:meth:`Inputs.used`), so
the plan can show what it assumed and a test can compare it with the tables.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from faascope import calibration

#: the profiles with a calibration table of their own (``platform-<profile>``)
CALIBRATED_PROFILES = ("lambda", "gcf")
STANDINS_TABLE = calibration.STANDINS_TABLE
#: the profile whose table describes AWS Lambda itself (the cloud estimate's network)
LAMBDA_PROFILE = "lambda"
#: an entry's unit -> the factor to seconds, bytes or a rate per second (the tables' own)
TO_SI = calibration.TO_SI
#: the standard normal's 99th percentile: a lognormal's p99 = median · exp(Z99 · σ)
Z99 = 2.3263478740408408


def lognormal_mean(median: float, p99: float) -> float:
    """The mean of the lognormal through a median and a 99th percentile (the shaper's draw):
    median · exp(σ²/2) with σ = ln(p99 / median) / z(0.99)."""
    if median <= 0 or p99 <= median:
        return median
    sigma = math.log(p99 / median) / Z99
    return median * math.exp(sigma * sigma / 2)


@dataclass(frozen=True)
class NetBucket:
    """A profile's network token bucket (docs/platform.md): a one-time burst spent first, then a
    refilling bucket, both at the peak rate, then the refill rate."""
    one_time: float       # B
    bucket: float         # B
    peak: float           # B/s
    refill: float         # B/s


@dataclass
class Inputs:
    """Reads calibration entries and remembers each one it used (anchor -> value in SI units)."""
    used: dict[str, float] = field(default_factory=dict)

    def _read(self, table: str, key: str) -> Optional[float]:
        t = calibration.load_table(table)
        if key not in t.entries:
            return None
        e = t[key]
        value = e.value * TO_SI[e.unit]
        self.used[f"{t.name}@{t.version}:{key}"] = value
        return value

    def platform(self, profile: Optional[str], key: str) -> Optional[float]:
        """``platform-<profile>``'s entry in SI units; None for a profile without a table
        (unlimited) or a table without the entry (a limit the profile does not set)."""
        if profile not in CALIBRATED_PROFILES:
            return None
        return self._read(f"platform-{profile}", key)

    def request_s(self, service: str, write: bool) -> float:
        """Mean request latency of a shaped stand-in (or of the service from Lambda), seconds;
        ``service``: s3_standard, s3_express, efs, dynamodb."""
        what = "write" if write else "read"
        median = self._read(STANDINS_TABLE, f"{service}_{what}_median")
        p99 = self._read(STANDINS_TABLE, f"{service}_{what}_p99")
        return lognormal_mean(median, p99)

    def net_bucket(self, profile: Optional[str]) -> Optional[NetBucket]:
        vals = [self.platform(profile, k) for k in ("net_one_time_burst", "net_bucket_size",
                                                    "net_peak_rate", "net_refill_rate")]
        if any(v is None for v in vals):
            return None
        return NetBucket(*vals)

    def tmp_limits(self, profile: Optional[str], write: bool,
                   memory_mb: Optional[int] = None) -> tuple[Optional[float], Optional[float]]:
        """(bytes/s, IOPS) of the profile's /tmp device for reads or writes at ``memory_mb``;
        None: no limit. Below the table's ``tmp_limits_memory`` the limits shrink as
        (memory / tmp_limits_memory) ** tmp_limits_memory_exponent, the platform's model
        (agent/platform/tmpmemory.go; docs/platform.md): the two sides are kept equal by
        tests/designs/test_plan_calibration.py and, on a grid of memory sizes against Go's own
        values, tests/calibration/test_cpu_tiers.py."""
        what = "write" if write else "read"
        bps, iops = self.platform(profile, f"tmp_{what}_bps"), self.platform(profile, f"tmp_{what}_iops")
        f = self.tmp_memory_factor(profile, memory_mb)
        return (bps * f if bps else bps, iops * f if iops else iops)

    def tmp_memory_factor(self, profile: Optional[str], memory_mb: Optional[int]) -> float:
        """The share of the profile's /tmp limits a sandbox of ``memory_mb`` gets (1: flat)."""
        top = self.platform(profile, "tmp_limits_memory") if memory_mb else None
        if not top or memory_mb >= top:
            return 1.0
        return (memory_mb / top) ** (self.platform(profile, "tmp_limits_memory_exponent") or 0.0)

    def host_tmp_limits(self, profile: Optional[str], write: bool) -> tuple[Optional[float], Optional[float]]:
        """(bytes/s, IOPS) of the host disk all the profile's /tmp images share (hostdisk.go)."""
        what = "write" if write else "read"
        return (self.platform(profile, f"host_tmp_{what}_bps"), self.platform(profile, f"host_tmp_{what}_iops"))

    def front_end(self, profile: Optional[str]) -> float:
        """The profile's modelled front end on every invocation's reply, seconds (frontend.go)."""
        return self.platform(profile, "front_end_delay") or 0.0

    def shared_limits(self, profile: Optional[str], write: bool) -> tuple[Optional[float], Optional[float]]:
        what = "write" if write else "read"
        return (self.platform(profile, f"shared_{what}_bps"),
                self.platform(profile, f"shared_{what}_iops"))

    def cold_start(self, profile: Optional[str], package_bytes: int = 0) -> float:
        """The profile's modelled part of a cold start, seconds (fixed part + package fetch + the
        modelled overhead inside INIT, agent/platform/initcpu.go)."""
        fixed = (self.platform(profile, "cold_start_fixed") or 0.0) + \
            (self.platform(profile, "init_overhead") or 0.0)
        rate = self.platform(profile, "cold_start_fetch_rate")
        return fixed + (package_bytes / rate if rate and package_bytes > 0 else 0.0)
