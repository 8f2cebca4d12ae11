"""The cost of a planned campaign, before it runs (``faascope plan`` shows it).

Per cell, the billed duration of one invocation is estimated as the plan's workload time
(:func:`faascope.designs.estimate.workload_seconds`, the same rough model as the duration
estimate) plus a small in-function overhead; every forced cold start and every function's first
invocation adds an init time, billed as each price table's ``init_billed`` says (Lambda bills
the INIT phase: custom runtimes always, every on-demand function since 1 August 2025; Cloud Run
bills an instance's start-up while it serves the request). The cell is priced on the platform it runs on:

- ``aws``: AWS Lambda (arch and ephemeral storage of the cell);
- ``gcp``: GCF 2nd gen / Cloud Run with the provider's CPU setting (the GCF tier by default);
- ``local``: as if on the cloud each cell's sandbox profile imitates (``lambda`` and ``unlimited``
  -> AWS Lambda, ``gcf`` -> GCF 2nd gen); running locally itself costs nothing;
- ``http``: only when ``provider.settings.price_as`` names a platform;
- a spec with ``deployments``: each cell as its deployment's provider (above), with totals per
  deployment (``per_deployment``).

``as_if`` prices every cell on AWS Lambda and on GCF 2nd gen as well, for comparison.

Storage requests are added where the provider bills them per request or per byte (prices only
from the tables): S3 PUTs and GETs (``aws_s3``) or, on GCP, GCS Class A and B operations
(``gcp_storage``) for object workloads; DynamoDB on-demand request units (``aws_dynamodb``) for
kv with ``backend: dynamodb``; EFS Elastic Throughput bytes (``aws_efs``) for sharedfs on AWS;
and the same for transfer via object/kv and app storage. A local cell's storage is priced as on
the cloud its profile imitates, like its compute. A transfer chain bills each of its hops as an
invocation, each for as long as the rest of the chain takes (the Invoke is synchronous).
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Optional

from faascope.cost.model import (PLATFORM_CLOUD, PLATFORM_TABLE, PLATFORM_TITLES, InvocationCost,
                                 dynamodb_units, invocation_cost, storage_cost)
from faascope.cost.pricing import Pricing, pricing_for
from faascope.designs.estimate import app_sizes, hop_seconds, prepare_drop, transfer_hops
from faascope.provider_kinds import PROVIDER_KINDS
from faascope.provider_kinds import provider_kind as provider_kind_of
from faascope.tiers import PLATFORMS, lambda_vcpu

FUNCTION_OVERHEAD_S = 0.002  # the agent's own handling inside the billed duration
INIT_S = 0.1                 # a cold start's billed init (a static Go binary starts fast)

# What the agent names what it stores (agent/workloads/kv.go, transfer.go, app.go): a DynamoDB
# item is {"pk": key (S), "v": value (B)}, and its size counts attribute names and values.
DYNAMODB_ATTRIBUTE_NAME_BYTES = len("pk") + len("v")
KV_DEFAULT_PREFIX = "faascope:"
#: transfer/<16 hex digits of session>/<hop>, below the prefix
TRANSFER_KEY_BYTES = len("transfer/") + 16 + len("/") + 2
#: an object store -> the storage row it is charged in and what its PUTs and GETs are called there
OBJECT_CHARGE = {"s3": ("aws_s3", "put_requests", "get_requests"),
                 "gcs": ("gcp_storage", "class_a_requests", "class_b_requests")}
#: usage counters (per planned invocation) -> what they are called in the estimate
USAGE_KEYS = ("object_puts", "object_gets", "dynamodb_write_units", "dynamodb_read_units",
              "sharedfs_bytes_read", "sharedfs_bytes_written", "redis_requests")


def cell_platform(provider_kind: str, profile: Optional[str], settings: Any) -> tuple[Optional[str], Optional[float]]:
    """(platform key, vcpu override) that prices a cell; (None, None) when unknown."""
    d = provider_kind_of(provider_kind)
    return d.price(profile, settings) if d is not None else (None, None)


def deployment_rows(loaded: Any) -> list[dict]:
    """The results file's ``deployments`` rows of a spec: each deployment's name, provider kind,
    region and the price table that prices it (None for a local campaign whose cells' profiles
    differ: its invocations are priced by their profile). A spec without deployments has one,
    named after its provider kind."""
    if not loaded.deployments:
        kind, settings = loaded.provider_kind, loaded.spec.provider.parsed_settings()
        # a local campaign's invocations are priced by their sandbox profile
        price = None if PROVIDER_KINDS[kind].has_profiles else cell_platform(kind, None, settings)[0]
        return [{"name": kind, "kind": kind, "region": getattr(settings, "region", None),
                 "price_platform": price, "detail": {}}]
    rows = []
    for name, dep in loaded.deployments.items():
        settings = dep.parsed_settings()
        profile = dep.function.get("profile") or PROVIDER_KINDS[dep.kind].default_profile
        rows.append({"name": name, "kind": dep.kind, "region": dep.region,
                     "price_platform": cell_platform(dep.kind, profile, settings)[0],
                     "detail": {"function": dep.function,
                                "description": loaded.spec.deployments[name].description}})
    return rows


def _vcpu(platform: str, vcpu: Optional[float], memory_mb: int) -> Optional[float]:
    if vcpu is not None and vcpu < 0:  # match_lambda: the Cloud Run CPU closest to Lambda's
        return PLATFORMS["cloudrun"].closest_cpu(memory_mb, lambda_vcpu(memory_mb))
    return vcpu


def _dynamodb(usage: Counter, w: dict, key_bytes: int, value_bytes: int, *, puts: int = 0,
              gets: int = 0, deletes: int = 0, pricing: Pricing) -> None:
    item = value_bytes + key_bytes + DYNAMODB_ATTRIBUTE_NAME_BYTES
    wru = dynamodb_units(item, read=False, pricing=pricing)
    rru = dynamodb_units(item, read=True, consistent=bool(w.get("consistent_read")), pricing=pricing)
    usage["dynamodb_write_units"] += (puts + deletes) * wru
    usage["dynamodb_read_units"] += gets * rru


def _kv_store(usage: Counter, w: dict, key_bytes: int, value_bytes: int, *, puts: int = 0,
              gets: int = 0, deletes: int = 0, pricing: Pricing) -> None:
    if w.get("backend", "redis") == "dynamodb":
        _dynamodb(usage, w, key_bytes, value_bytes, puts=puts, gets=gets, deletes=deletes,
                  pricing=pricing)
    else:
        usage["redis_requests"] += puts + gets + deletes


def storage_usage(w: dict, pricing: Optional[Pricing] = None) -> dict[str, float]:
    """The storage one planned invocation of workload ``w`` uses (requests, request units, bytes),
    preparation and drop included; deletes are counted where they are billed (DynamoDB)."""
    pricing = pricing or Pricing()
    u: Counter = Counter()
    kind = w.get("kind")
    prepare, drop = prepare_drop(w)
    if kind == "object":
        n = int(w.get("count", 1))
        u["object_puts" if w.get("op") == "put" else "object_gets"] += n
        u["object_puts"] += n if prepare else 0   # deletes are free on S3 and GCS
    elif kind == "kv":
        n = int(w.get("count", 1))
        # the longest key, {prefix}{index}:{count-1}, bounds every item's size from above
        key = len(w.get("prefix", KV_DEFAULT_PREFIX)) + len(f"{w.get('index', 0)}:{n - 1}")
        put = w.get("op") == "put"
        _kv_store(u, w, key, int(w.get("item_size", 0)), puts=n * (put + prepare),
                  gets=0 if put else n, deletes=n if drop else 0, pricing=pricing)
    elif kind == "sharedfs":
        size = int(w.get("file_size", 0))
        if w.get("op") == "read":
            u["sharedfs_bytes_read"] += size
        else:
            u["sharedfs_bytes_written"] += size
        u["sharedfs_bytes_written"] += size if prepare else 0
    elif kind == "transfer":
        links = transfer_hops(w) - 1
        size, via = int(w.get("payload_size", 0)), w.get("via", "inline")
        if via == "object":
            u["object_puts"] += links
            u["object_gets"] += links
        elif via == "kv":
            key = len(w.get("prefix", KV_DEFAULT_PREFIX)) + TRANSFER_KEY_BYTES
            _kv_store(u, w, key, size, puts=links, gets=links, deletes=links, pricing=pricing)
    elif kind == "app":
        inp, out = app_sizes(w)
        storage = w.get("storage", "object")
        if storage == "object":
            u["object_puts"] += 1 + prepare
            u["object_gets"] += 1
        elif storage == "kv":
            prefix = len(w.get("prefix", KV_DEFAULT_PREFIX))
            key = prefix + len(f"app/{w.get('shape')}/{w.get('index', 0)}/output")
            _kv_store(u, w, key, inp, puts=int(prepare), gets=1, deletes=int(drop), pricing=pricing)
            _kv_store(u, w, key, out, puts=1, deletes=int(drop), pricing=pricing)
        elif storage == "sharedfs":
            u["sharedfs_bytes_read"] += inp
            u["sharedfs_bytes_written"] += out + (inp if prepare else 0)
    return {k: u[k] for k in USAGE_KEYS if u[k]}


def storage_charges(usage: dict[str, float], cloud: Optional[str],
                    pricing: Pricing) -> dict[str, dict[str, float]]:
    """``usage`` priced on ``cloud`` ("aws" or "gcp"), per price table: the counts and the
    charge. Object requests go to S3 on AWS and GCS on GCP; DynamoDB is billed wherever it is
    called from; EFS only on AWS (GCP's Filestore bills provisioned capacity, not use)."""
    out: dict[str, dict[str, float]] = {}
    d = provider_kind_of(cloud)
    puts, gets = usage.get("object_puts", 0), usage.get("object_gets", 0)
    store = d.object_storage if d is not None else None
    if (puts or gets) and store in OBJECT_CHARGE:
        table, put_name, get_name = OBJECT_CHARGE[store]
        out[table] = {put_name: puts, get_name: gets,
                      "total": storage_cost(store, puts=puts, gets=gets, pricing=pricing)["total"]}
    wru, rru = usage.get("dynamodb_write_units", 0), usage.get("dynamodb_read_units", 0)
    if (wru or rru) and cloud is not None:
        out["aws_dynamodb"] = {"write_request_units": wru, "read_request_units": rru,
                               "total": storage_cost("dynamodb", write_units=wru, read_units=rru,
                                                     pricing=pricing)["total"]}
    rd, wr = usage.get("sharedfs_bytes_read", 0), usage.get("sharedfs_bytes_written", 0)
    if (rd or wr) and d is not None and d.shared_fs_storage == "efs":
        out["aws_efs"] = {"bytes_read": rd, "bytes_written": wr,
                          "total": storage_cost("efs", bytes_read=rd, bytes_written=wr,
                                                pricing=pricing)["total"]}
    return out


def _scaled(charges: dict[str, dict[str, float]], n: int) -> dict[str, dict[str, float]]:
    return {t: {k: v * n for k, v in row.items()} for t, row in charges.items()}


def _add(into: dict[str, dict[str, float]], charges: dict[str, dict[str, float]]) -> None:
    for t, row in charges.items():
        acc = into.setdefault(t, {})
        for k, v in row.items():
            acc[k] = acc.get(k, 0) + v


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
    function_total: Optional[float] = 0.0
    as_if = {"aws_lambda": 0.0, "gcf": 0.0}
    used_tables: set[str] = set()
    storage: dict[str, dict[str, float]] = {}
    unpriced: set[str] = set()
    per_deployment: dict[str, Optional[float]] = {}
    deployments = getattr(plan.spec, "deployments", None) or {}
    for c in plan.cells:
        f = c.function
        w = c.workload_request
        dep = deployments.get(getattr(c, "deployment", None))
        ckind = dep.kind if dep is not None else kind
        csettings = dep.parsed_settings() if dep is not None else settings
        hops = [h + FUNCTION_OVERHEAD_S for h in hop_seconds(c, ckind)]
        n = per_run[c.key]
        k = min(colds[c.key], n)
        platform, vcpu = cell_platform(ckind, f.profile, csettings)
        usage = storage_usage(w, pricing)

        def price(pl: str, v: Optional[float]) -> tuple[InvocationCost, float, float]:
            """(the first hop's cost, a warm and a cold planned invocation's function cost):
            a transfer chain's later hops are warm invocations of their own."""
            v = _vcpu(pl, v, f.memory_mb)
            kw = dict(arch=f.arch, ephemeral_mb=f.ephemeral_mb, vcpu=v, pricing=pricing)
            first = invocation_cost(pl, f.memory_mb, hops[0], **kw)
            rest = sum(invocation_cost(pl, f.memory_mb, h, **kw).total for h in hops[1:])
            cold = invocation_cost(pl, f.memory_mb, hops[0], init_s=INIT_S, **kw).total
            return first, first.total + rest, cold + rest

        for pl in as_if:
            _, warm, cold = price(pl, None)
            st = storage_charges(usage, PLATFORM_CLOUD[pl], pricing)
            as_if[pl] += (n - k) * warm + k * cold + n * sum(r["total"] for r in st.values())
        row: dict[str, Any] = {"key": c.key, "levels": c.levels, "invocations": n,
                               "cold_invocations": k, "platform": platform,
                               "memory_mb": f.memory_mb}
        if dep is not None:
            row["deployment"] = dep.name
        if len(hops) > 1:
            row["function_invocations"] = n * len(hops)
        if usage:
            row["storage_per_invocation"] = usage
        if platform is None:
            row.update(per_invocation=None, total=None)
            total = function_total = None
        else:
            used_tables.add(PLATFORM_TABLE[platform])
            first, warm, cold = price(platform, vcpu)
            fn_total = (n - k) * warm + k * cold
            st = _scaled(storage_charges(usage, PLATFORM_CLOUD[platform], pricing), n)
            st_total = sum(r["total"] for r in st.values())
            used_tables |= set(st)
            _add(storage, st)
            if usage.get("redis_requests"):
                unpriced.add("redis")
            if (usage.get("sharedfs_bytes_read") or usage.get("sharedfs_bytes_written")) \
                    and "aws_efs" not in st:
                unpriced.add("sharedfs")
            row.update(billed_seconds_per_invocation=round(first.billed_s, 6),
                       per_invocation=warm, per_invocation_breakdown=first.as_dict(),
                       function_total=fn_total, storage=st, storage_total=st_total,
                       total=fn_total + st_total)
            if total is not None and function_total is not None:
                total += fn_total + st_total
                function_total += fn_total
        if dep is not None:
            before = per_deployment.get(dep.name, 0.0)
            per_deployment[dep.name] = (None if before is None or row["total"] is None
                                        else before + row["total"])
        cells.append(row)
    spec_kind = provider_kind_of(kind)
    if spec_kind is not None and spec_kind.local:
        notes.append("a local run costs nothing; these are the prices of the clouds the sandbox "
                     "profiles imitate (lambda, unlimited -> AWS Lambda; gcf -> GCF 2nd gen), "
                     "storage included (S3, DynamoDB, EFS; GCS)")
    if any(v is None for v in per_deployment.values()):
        notes.append("deployments without a price: "
                     + ", ".join(n for n, v in per_deployment.items() if v is None)
                     + " (an http deployment needs settings.price_as)")
    if spec_kind is not None and spec_kind.price_from_setting and total is None and not deployments:
        notes.append("the http provider's platform is unknown; set provider.settings.price_as "
                     "(aws_lambda, gcf or cloudrun) to price it")
    if "redis" in unpriced:
        notes.append("Redis bills nodes by the hour, not requests: kv with backend redis adds "
                     "no storage charge")
    if "sharedfs" in unpriced:
        notes.append("a shared file system off AWS (Filestore) bills provisioned capacity, not "
                     "use: not priced")
    if storage:
        notes.append("storage: requests and request units only; objects and items left behind "
                     "(drop: false) are billed per GB-month afterwards, and retries, throttles "
                     "and data transfer out of the region are not included")
    if any(w.get("kind") == "network" for w in (c.workload_request for c in plan.cells)):
        notes.append("the network workload's traffic to its sink is not priced (inter-AZ or "
                     "internet transfer depends on where the sink runs)")
    notes.append("billed durations come from the rough duration model (docs/specs.md); free tiers "
                 "are not subtracted")
    used_tables |= {"aws_lambda", "gcp_functions"}
    storage_total = sum(r["total"] for r in storage.values()) if total is not None else None
    return {
        "currency": "USD",
        "total": None if total is None else round(total, 8),
        "function_total": None if function_total is None else round(function_total, 8),
        "storage_total": None if storage_total is None else round(storage_total, 8),
        "storage": {t: {k: (round(v, 8) if k == "total" else v) for k, v in row.items()}
                    for t, row in sorted(storage.items())},
        "as_if": {pl: {"title": PLATFORM_TITLES[pl], "total": round(v, 8)} for pl, v in as_if.items()},
        "per_cell": cells,
        **({"per_deployment": {n: (None if v is None else round(v, 8))
                               for n, v in per_deployment.items()}} if deployments else {}),
        "tables": pricing.provenance(sorted(used_tables)),
        "model": "per invocation: memory x billed duration (Lambda: GB = MB/1024, 1 ms; GCF/Cloud "
                 "Run: vCPU-s + GiB-s, 100 ms) + request + ephemeral storage above 512 MB; "
                 f"billed duration = workload estimate + {FUNCTION_OVERHEAD_S * 1000:g} ms, + "
                 f"{INIT_S * 1000:g} ms init when cold; a transfer chain bills every hop; plus "
                 "storage requests (S3/GCS per 1,000, DynamoDB request units, EFS bytes); see "
                 "docs/cost.md",
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


def storage_line(cost: dict) -> Optional[str]:
    """The storage charges in one line (None when there are none)."""
    names = {"aws_s3": ("S3", {"put_requests": "PUT", "get_requests": "GET"}),
             "gcp_storage": ("GCS", {"class_a_requests": "Class A", "class_b_requests": "Class B"}),
             "aws_dynamodb": ("DynamoDB", {"write_request_units": "WRU", "read_request_units": "RRU"}),
             "aws_efs": ("EFS", {"bytes_read": "bytes read", "bytes_written": "bytes written"})}
    parts = []
    for table, row in cost.get("storage", {}).items():
        title, counts = names.get(table, (table, {}))
        what = ", ".join(f"{row[k]:,.10g} {label}" for k, label in counts.items() if row.get(k))
        parts.append(f"{title} {format_usd(row['total'])} ({what})")
    if not parts:
        return None
    return f"  of which storage: ≈ {format_usd(cost['storage_total'])}: " + "; ".join(parts)


def summary_line(cost: dict) -> str:
    a = cost["as_if"]
    both = (f"AWS Lambda {format_usd(a['aws_lambda']['total'])}, "
            f"GCF 2nd gen {format_usd(a['gcf']['total'])} for all cells")
    tables = ", ".join(f"{t['table']}@{t['version']}" for t in cost["tables"])
    per = cost.get("per_deployment")
    by_dep = ("; per deployment: " + ", ".join(f"{n} {format_usd(v)}" for n, v in per.items())
              if per else "")
    if cost["total"] is None:
        return f"Estimated cost: unknown for this provider ({both}; prices {tables}){by_dep}"
    return f"Estimated cost: ≈ {format_usd(cost['total'])} ({both}; prices {tables}){by_dep}"
