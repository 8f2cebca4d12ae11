"""The `host_capacity` section (local campaigns): what this host delivered per stand-in and
device at the campaign's start (the ``host_capacity`` event, faascope.standins.capacity), and
every cell whose aggregate demand reached HOST_BOUND_FRACTION of it (the ``host_bound`` event,
faascope.analysis.host_bound): there the host, not the modelled cloud, set the result."""
from __future__ import annotations

from faascope.analysis.host_bound import HOST_BOUND_FRACTION
from faascope.report.items import Block, Text, table
from faascope.report.sections.context import Ctx
from faascope.store.schema import HOST_BOUND_EVENT, HOST_CAPACITY_EVENT, latest_event_detail

MiB = 1 << 20


def _rate(v) -> str:
    return "–" if not v else f"{v / MiB:.4g} MiB/s"


def _cpu(b: Block, bound: dict) -> None:
    """The cells whose running instances' CPU quotas added up to more than the host's CPUs."""
    over = bound.get("cells_cpu_oversubscribed") or []
    if not over:
        return
    cells = bound.get("cells") or {}
    rows = [[k, cells[k].get("concurrency", "–"), f"{cells[k]['cpu']['peak_vcpu']:.3g}",
             cells[k]["cpu"]["host_cpus"]] for k in over if "cpu" in cells.get(k, {})]
    b.items.append(table("CPU promised beyond this host", ["cell", "concurrency",
                         "vCPU promised at once", "host CPUs"], rows,
                         ["The sum of the CPU quotas (the provider's vCPU for the memory size) of the "
                          "cell's instances in their workloads at one instant (faascope.analysis.host_bound)."]))
    b.items.append(Text(f"{len(over)} cell(s) ran more instances at once than this host's CPUs can give "
                        "their modelled vCPU: where those functions are CPU-bound, the host, not the "
                        "modelled cloud, set their times (the agent does not report the CPU it used, so "
                        "this is a warning, not a verdict).", "warn"))


def host_capacity_section(ctx: Ctx) -> Block | None:
    src = ctx.data.source
    if src.kind != "store":
        return None
    probe = latest_event_detail(src.events, HOST_CAPACITY_EVENT)
    bound = latest_event_detail(src.events, HOST_BOUND_EVENT) or {}
    if not probe and not bound.get("cells_cpu_oversubscribed"):
        return None
    b = Block("host_capacity", "Host capacity: where this machine, not the modelled cloud, was the bottleneck")
    _cpu(b, bound)
    if not probe:
        return b
    rows = [[k, v.get("op", "–"), _rate(v.get("bytes_per_s")) if "error" not in v else f"probe failed: {v['error']}",
             v.get("device", "–")] for k, v in sorted((probe.get("standins") or {}).items())]
    rows += [[f"device {dev} ({d.get('fs') or '?'})", d.get("op", "–"), _rate(d.get("bytes_per_s")), dev]
             for dev, d in sorted((probe.get("devices") or {}).items())]
    b.items.append(table("Probed at the campaign's start (aggregate of "
                         f"{probe.get('workers')} clients, {probe.get('probe_seconds')} s each)",
                         ["stand-in / device", "operation", "delivered", "device"], rows,
                         ["faascope.standins.capacity: the server itself, not the shaper in front of it; "
                          f"the probe took {probe.get('duration_s')} s. Its clients are Python threads on this "
                          "host, competing for the same CPUs: the capacity is a lower bound, so flags err on "
                          "the side of warning."]))
    cells = bound.get("cells") or {}
    if cells:
        crow = []
        for key, c in cells.items():
            for k, e in c["standins"].items():
                crow.append([key, c.get("concurrency", "–"), k, _rate(e["demand_bytes_per_s"]), _rate(e["capacity_bytes_per_s"]),
                             f"{e['fraction']:.0%}", "**host-bound**" if e["host_bound"] else "no"])
        b.items.append(table("Aggregate demand per cell against the probed capacity", ["cell", "concurrency", "stand-in",
                             "demand", "capacity", "share", "host-bound"], crow,
                             [f"Demand: the bytes the cell's invocations moved / the time at least one of them "
                              f"was in its workload. Host-bound from {HOST_BOUND_FRACTION:.0%} of the capacity, "
                              "for cells whose invocations overlapped (one at a time queues behind nobody) "
                              "(faascope.analysis.host_bound: there queueing on this host alone stretches "
                              "a request x1.5)."]))
    flagged = bound.get("cells_host_bound") or []
    if flagged:
        b.items.append(Text(f"{len(flagged)} cell(s) demanded {HOST_BOUND_FRACTION:.0%} or more of what this host "
                            "delivered to the probe ("
                            + ", ".join(f"`{k}`" for k in flagged) + "): there the host, not the modelled cloud, "
                            "was the bottleneck, and contrasts involving them measure this machine.", "warn"))
    elif bound:
        b.items.append(Text("No cell reached the share of the probed capacity at which the host becomes the "
                            "bottleneck.", "note"))
    return b
