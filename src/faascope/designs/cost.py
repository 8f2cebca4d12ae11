"""The cost of a planned campaign, before it runs (``faascope plan`` shows it).

Per cell, the billed duration of one invocation is estimated as the plan's workload time
(:func:`faascope.designs.estimate.workload_seconds`, the same rough model as the duration
estimate) plus a small in-function overhead; every forced cold start and every function's first
invocation adds an init time (a custom runtime's init is billed on Lambda; Cloud Run bills an
instance's start-up while it serves the request). The cell is priced on the platform it runs on:

- ``aws``: AWS Lambda (arch and ephemeral storage of the cell);
- ``gcp``: GCF 2nd gen / Cloud Run with the provider's CPU setting (the GCF tier by default);
- ``local``: as if on the cloud each cell's sandbox profile imitates (``lambda`` and ``unlimited``
  -> AWS Lambda, ``gcf`` -> GCF 2nd gen); running locally itself costs nothing;
- ``http``: only when ``provider.settings.price_as`` names a platform.

``as_if`` prices every cell on AWS Lambda and on GCF 2nd gen as well, for comparison.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Optional

from faascope.cost.model import PLATFORM_TABLE, PLATFORM_TITLES, InvocationCost, invocation_cost
from faascope.cost.pricing import Pricing, pricing_for
from faascope.designs.estimate import workload_seconds
from faascope.tiers import PLATFORMS, lambda_vcpu

FUNCTION_OVERHEAD_S = 0.002  # the agent's own handling inside the billed duration
INIT_S = 0.1                 # a cold start's billed init (a static Go binary starts fast)


def _settings_get(settings: Any, key: str, default=None):
    if isinstance(settings, dict):
        return settings.get(key, default)
    return getattr(settings, key, default)


def cell_platform(provider_kind: str, profile: Optional[str], settings: Any) -> tuple[Optional[str], Optional[float]]:
    """(platform key, vcpu override) that prices a cell; (None, None) when unknown."""
    if provider_kind == "aws":
        return "aws_lambda", None
    if provider_kind == "local":
        return ("gcf" if profile == "gcf" else "aws_lambda"), None
    if provider_kind == "gcp":
        service = _settings_get(settings, "service", "cloud_run") or "cloud_run"
        cpu = _settings_get(settings, "cpu", "gcf")
        if service == "cloud_functions" or cpu in (None, "gcf"):
            return "gcf", None
        return "cloudrun", (float(cpu) if cpu not in ("match_lambda",) else -1.0)
    if provider_kind == "http":
        as_ = _settings_get(settings, "price_as")
        return (as_, None) if as_ else (None, None)
    return None, None


def _vcpu(platform: str, vcpu: Optional[float], memory_mb: int) -> Optional[float]:
    if vcpu is not None and vcpu < 0:  # match_lambda: the Cloud Run CPU closest to Lambda's
        return PLATFORMS["cloudrun"].closest_cpu(memory_mb, lambda_vcpu(memory_mb))
    return vcpu


def estimate_plan_cost(plan: Any, settings: Any = None, pricing: Optional[Pricing] = None) -> dict:
    kind = plan.spec.provider_kind
    if settings is None:
        settings = plan.spec.spec.provider.settings
    pricing = pricing or pricing_for(settings)
    per_run = Counter(r.cell_key for r in plan.runs)
    colds = Counter(r.cell_key for r in plan.runs if r.force_cold)
    for c in plan.cells:  # a burst spec's planned run is a burst: count its invocations
        if getattr(c, "load", None) is not None:
            bursts = per_run[c.key]
            per_run[c.key] = bursts * c.burst_invocations
            if c.load.get("start", "warm") != "warm":
                colds[c.key] = bursts * int(c.load.get("burst_size", 1))
    # every function's first invocation is cold too
    seen_configs: set = set()
    for c in plan.cells:
        ident = tuple(sorted(c.config.items()))
        if ident not in seen_configs:
            seen_configs.add(ident)
            if colds[c.key] == 0:
                colds[c.key] += 1
    notes: list[str] = []
    cells = []
    total: Optional[float] = 0.0
    as_if = {"aws_lambda": 0.0, "gcf": 0.0}
    used_tables: set[str] = set()
    for c in plan.cells:
        f = c.function
        warm_s = workload_seconds(c) + FUNCTION_OVERHEAD_S
        n = per_run[c.key]
        k = min(colds[c.key], n)
        platform, vcpu = cell_platform(kind, f.profile, settings)

        def price(pl: str, v: Optional[float]) -> tuple[InvocationCost, InvocationCost]:
            v = _vcpu(pl, v, f.memory_mb)
            kw = dict(arch=f.arch, ephemeral_mb=f.ephemeral_mb, vcpu=v, pricing=pricing)
            return (invocation_cost(pl, f.memory_mb, warm_s, **kw),
                    invocation_cost(pl, f.memory_mb, warm_s + INIT_S, **kw))

        for pl in as_if:
            warm, cold = price(pl, None)
            as_if[pl] += (n - k) * warm.total + k * cold.total
        row: dict[str, Any] = {"key": c.key, "levels": c.levels, "invocations": n,
                               "cold_invocations": k, "platform": platform,
                               "memory_mb": f.memory_mb}
        if platform is None:
            row.update(per_invocation=None, total=None)
            total = None
        else:
            used_tables.add(PLATFORM_TABLE[platform])
            warm, cold = price(platform, vcpu)
            cell_total = (n - k) * warm.total + k * cold.total
            row.update(billed_seconds_per_invocation=round(warm.billed_s, 6),
                       per_invocation=warm.total, per_invocation_breakdown=warm.as_dict(),
                       total=cell_total)
            if total is not None:
                total += cell_total
        cells.append(row)
    if kind == "local":
        notes.append("a local run costs nothing; these are the prices of the clouds the sandbox "
                     "profiles imitate (lambda, unlimited -> AWS Lambda; gcf -> GCF 2nd gen)")
    if kind == "http" and total is None:
        notes.append("the http provider's platform is unknown; set provider.settings.price_as "
                     "(aws_lambda, gcf or cloudrun) to price it")
    if any(c.payload["workload"].get("kind") not in ("noop", "spin", "fileio") for c in plan.cells):
        notes.append("storage requests and transfer of storage workloads are not estimated yet")
    notes.append("billed durations come from the rough duration model (docs/specs.md); free tiers "
                 "are not subtracted")
    used_tables |= {"aws_lambda", "gcp_functions"}
    return {
        "currency": "USD",
        "total": None if total is None else round(total, 8),
        "as_if": {pl: {"title": PLATFORM_TITLES[pl], "total": round(v, 8)} for pl, v in as_if.items()},
        "per_cell": cells,
        "tables": pricing.provenance(sorted(used_tables)),
        "model": "per invocation: memory x billed duration (Lambda: GB = MB/1024, 1 ms; GCF/Cloud "
                 "Run: vCPU-s + GiB-s, 100 ms) + request + ephemeral storage above 512 MB; "
                 f"billed duration = workload estimate + {FUNCTION_OVERHEAD_S * 1000:g} ms, + "
                 f"{INIT_S * 1000:g} ms init when cold; see docs/cost.md",
        "notes": notes,
    }


def format_usd(x: Optional[float]) -> str:
    if x is None:
        return "unknown"
    if x == 0:
        return "$0"
    if x < 0.01:
        return f"${x:.6f}"
    return f"${x:,.4f}" if x < 100 else f"${x:,.2f}"


def summary_line(cost: dict) -> str:
    a = cost["as_if"]
    both = (f"AWS Lambda {format_usd(a['aws_lambda']['total'])}, "
            f"GCF 2nd gen {format_usd(a['gcf']['total'])} for all cells")
    tables = ", ".join(f"{t['table']}@{t['version']}" for t in cost["tables"])
    if cost["total"] is None:
        return f"Estimated cost: unknown for this provider ({both}; prices {tables})"
    return f"Estimated cost: ≈ {format_usd(cost['total'])} ({both}; prices {tables})"
