"""What could explain drift between campaigns, recorded at the start and the end of every run of
the driver (a ``provenance`` event, :data:`faascope.store.schema.PROVENANCE_EVENT`).

A number that changed between last month's campaign and today's may be the platform, or the
machine that measured it: its load (``/proc/loadavg``: 1, 5 and 15 minute averages and the
runnable/total tasks, as proc(5) defines them), its CPU model and kernel, the faascope, agent and
platform builds (the Go binaries are identified by their SHA-256, since they carry no version of
their own), the region and architecture, the price tables in force, and the local platform's
profile and sandboxing as its ``/faascope/health`` reports them. Collecting never fails a
campaign: a fact that cannot be read is recorded as null with the reason.
"""
from __future__ import annotations

import hashlib
import os
import platform as pyplatform
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from faascope import __version__
from faascope.binaries import BIN_DIR
from faascope.cost.pricing import pricing_for
from faascope.provider_kinds import provider_kind
from faascope.providers.base import Provider
from faascope.providers.local_platform import health
from faascope.specs.loader import LoadedSpec
from faascope.store.timestamps import utc_now


def loadavg() -> Optional[dict[str, Any]]:
    """``/proc/loadavg`` parsed (proc(5)); None where there is none."""
    try:
        parts = Path("/proc/loadavg").read_text().split()
    except OSError:
        return None
    running, _, total = parts[3].partition("/")
    return {"load1": float(parts[0]), "load5": float(parts[1]), "load15": float(parts[2]),
            "runnable": int(running), "tasks": int(total)}


@lru_cache(maxsize=None)
def cpu_model() -> Optional[str]:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return pyplatform.processor() or None


@lru_cache(maxsize=None)
def _digest(path: Path) -> Optional[str]:
    try:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()[:16]
    except OSError:
        return None


def builds() -> dict[str, Optional[str]]:
    """The SHA-256 (first 16 hex digits) of each Go binary this faascope runs."""
    if not BIN_DIR.is_dir():
        return {}
    return {p.name: _digest(p) for p in sorted(BIN_DIR.iterdir()) if p.name.startswith("faascope-")}


def _platform_status(described: dict) -> Optional[dict]:
    """What the local platform reports about itself (profile, isolation, cgroup version, arch,
    keep-alive, concurrency, network shaping, the calibration tables and versions in force per
    profile with what a user file overrode, the shared file system's budget, the host budget the
    lambda sandboxes' /tmp share, block I/O limits and direct I/O of /tmp): the calibration a
    local campaign ran under."""
    endpoint = described.get("endpoint_url")
    kind = provider_kind(described.get("kind"))
    if not endpoint or kind is None or not kind.local:
        return None
    h = health(str(endpoint), timeout=2.0)
    if h is None:
        return None
    keep = ("profile", "isolation", "cgroup_version", "arch", "keep_alive_s", "concurrency",
            "net_shape", "host_network", "calibration", "shared_budget", "host_tmp_budget",
            "block_io_limits", "tmp_direct_io", "device_cpu")
    return {k: h.get(k) for k in keep if k in h}


def provenance(phase: str, loaded: LoadedSpec, provider: Optional[Provider]) -> dict[str, Any]:
    """The facts of one run's start (``phase`` "start") or end ("end"); the end records only
    what changes during a run (load, time)."""
    out: dict[str, Any] = {"phase": phase, "at": utc_now(), "loadavg": loadavg(),
                           "pid": os.getpid()}
    if phase != "start":
        return out
    u = pyplatform.uname()
    described: dict = {}
    if provider is not None:
        try:
            described = provider.describe()
        except Exception as exc:  # a description is never worth a failed campaign
            described = {"error": str(exc)}
    fn = loaded.spec.function
    try:
        prices = pricing_for(loaded.spec.provider.parsed_settings()).provenance()
        price_tables = [{"table": p["table"], "version": p["version"]} for p in prices]
    except Exception as exc:  # noqa: BLE001 - the pricing was validated with the spec
        price_tables = [{"error": str(exc)}]
    out.update({
        "faascope_version": __version__,
        "builds": builds(),
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "kernel": u.release,
        "system": u.system,
        "machine": u.machine,
        "python": pyplatform.python_version(),
        "provider": loaded.provider_kind,
        "region": described.get("region"),
        "architecture": fn.arch,
        "endpoint": described.get("endpoint_url"),
        "price_tables": price_tables,
        # a local campaign's calibration is its platform's profile and sandboxing, as the
        # platform reports them (null for a cloud provider, whose platform is the cloud's)
        "platform": _platform_status(described),
    })
    return out
