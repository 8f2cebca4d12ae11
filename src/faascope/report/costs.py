"""What each cell of a report cost, from the versioned price tables (faascope.cost), and which
level of the compared factor is cheapest, by the same analysis the latency gets.

Per invocation: compute (GB-s at the provider's billing granularity, or vCPU-s and GiB-s on GCF),
the request fee, ephemeral storage above the free size (Lambda), and the storage requests the
workload makes (the plan's per-cell workload, priced by :mod:`faascope.designs.cost`, which also
prices a plan's estimate: one model for both). The duration billed is the best each row has:
the REPORT line's Billed Duration (AWS Lambda, and the local platform, which writes one like
Lambda), else the platform's duration rounded up to the granularity, else the client's round
trip (an upper bound).

A campaign on the local platform is priced as the cloud its sandbox profile stands in for
(``lambda`` -> AWS Lambda, ``gcf`` -> GCF 2nd gen); the report says so.

The cost per million invocations has the interval of a mean of positive values
(:func:`faascope.analysis.intervals.mean_interval`: bootstrap-t on the log scale, stays positive),
or none with too few invocations (``cost_ci_why`` says so). Which level is cheapest, and which are
tied, comes from the statistics engine's decision on the per-invocation cost (``rank_levels``: the
decision table's whole-scenario ordering, for the cost: estimated marginal means with Welch tests),
exactly as for latency: no separate test.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from faascope.analysis.decisions import rank_levels
from faascope.cost.breakeven import ram_break_even_s
from faascope.cost.mapping import FieldMap, PriceMapping, PricedColumns, pricing_columns
from faascope.cost.model import PLATFORM_CLOUD, PLATFORM_TABLE, PLATFORM_TITLES, platform_key
from faascope.cost.pricing import Pricing, pricing_for
from faascope.analysis.intervals import mean_interval
from faascope.cost.report import (
    DURATION_COLS, MEMORY_COLS, PLATFORM_COLS, invocation_costs, pareto_front, row_durations,
)
from faascope.errors import BadInput
from faascope.provider_kinds import provider_kind
from faascope.analysis.dataset import Dataset
from faascope.report.scenarios import Scenario

#: what the local platform's sandbox profiles stand in for
PROFILE_MEANS = {"lambda": "AWS Lambda", "gcf": "GCF 2nd gen", "unlimited": "AWS Lambda (no limits)"}
#: billed / timed above this ratio: the report says what the billed time contains besides the timed part
BILLED_RATIO_NOTE = 2.0
COST_COLUMN = "cost_usd"
#: workload kinds whose invocations make storage requests (faascope.designs.cost.storage_usage
#: prices nothing for the others; tests/report/test_answer.py checks that it stays so)
STORAGE_KINDS = frozenset({"object", "kv", "sharedfs", "transfer", "app"})
DURATION_NAMES = {"billed_duration_ms": "the REPORT line's Billed Duration",
                  "report_duration_ms": "the REPORT line's Duration, rounded up to the billing granularity",
                  "platform_duration_ms": "the platform's duration, rounded up to the billing granularity",
                  "client_latency_seconds": "the client's round trip (an upper bound), rounded up",
                  "mapped": "the one the price mapping names (below)"}


@dataclass
class CellCost:
    label: str
    levels: dict
    color: str
    n: int
    platform: str                   # aws_lambda, gcf, cloudrun
    billed_mean_s: float
    timed_mean_s: float | None      # the timed response (the report's response when it is a duration)
    timed_mean_ci: list | None
    timed_p99_s: float | None
    cost_mean: float                # USD per invocation
    cost_ci: tuple[float, float] | None
    compute: float
    request: float
    ephemeral: float
    storage: float
    sources: list[str]
    tier: str | None = None             # where a read/get cell fetched its data from ("/tmp", "object storage")
    item_bytes: float | None = None     # bytes one invocation fetched
    break_even_s: float | None = None   # keep the data in memory if re-read more often than this
    timed_mean_ci_why: str | None = None  # why timed_mean_ci is None ("too few (n = 3; needs ≥ 100)")
    cost_ci_why: str | None = None        # why cost_ci is None

    @property
    def per_million(self) -> float:
        return self.cost_mean * 1e6

    @property
    def per_million_ci(self) -> tuple[float, float] | None:
        return None if self.cost_ci is None else (self.cost_ci[0] * 1e6, self.cost_ci[1] * 1e6)

    @property
    def billed_ratio(self) -> float | None:
        if not self.timed_mean_s or not math.isfinite(self.billed_mean_s):
            return None
        return self.billed_mean_s / self.timed_mean_s


@dataclass
class ScenarioCost:
    cells: list[CellCost]
    res: dict | None = None         # the engine's analysis of the per-invocation cost
    error: str | None = None        # why it could not be analysed
    front: list[int] = field(default_factory=list)       # cells on the cost / mean-latency front
    front_p99: list[int] = field(default_factory=list)   # cells on the cost / p99 front

    @property
    def decision(self) -> dict | None:
        """The whole-scenario row of the cost decision (lower mean cost is better)."""
        return self.res["decisions"][0] if self.res and self.res.get("decisions") else None


@dataclass
class CostBasis:
    """How the report priced the campaign (shown once, in the cost section)."""
    pricing: Pricing
    platforms: list[str]
    as_what: str                    # "AWS Lambda (profile lambda), GCF 2nd gen (profile gcf)"
    sources: list[str]
    timed: str | None               # the timed column the billed duration is compared with
    storage_priced: bool
    #: how a foreign table's columns were mapped to platform, memory, arch and duration
    #: (--price-platform …), in words; empty when the rows carried them
    mapped: list[str] = field(default_factory=list)
    #: the priced duration is the timed response: every cost is a lower bound
    lower_bound: bool = False


def _platform_for(data: Dataset) -> tuple[str | None, str | None]:
    """(platform= for invocation_costs, why none) from the rows and the campaign's provider."""
    rows = data.data
    if "config_profile" in rows.columns and rows["config_profile"].notna().any():
        return None, None
    spec = data.source.spec or {}
    prov = spec.get("provider") or {}
    # the platform a provider's invocations are priced as when the rows do not name one
    kind = provider_kind(prov.get("kind"))
    if kind is not None and kind.price_from_setting:
        price_as = (prov.get("settings") or {}).get(kind.price_from_setting)
        if price_as:
            return price_as, None
        return "", "an HTTP endpoint has no price list; set provider.settings.price_as (aws_lambda, gcf, cloudrun)"
    if kind is not None and kind.default_price_platform:
        return kind.default_price_platform, None
    if any(c in rows.columns for c in ("profile", "platform")):
        return None, None
    return "aws_lambda", None


def _storage_per_invocation(data: Dataset, rows: pd.DataFrame, platform: str, pricing: Pricing) -> float:
    """The storage requests (and request units, EFS bytes) one invocation of the cell makes, priced:
    from the plan's workload of the cell (faascope.designs.cost.storage_usage)."""
    plan = data.source.plan or {}
    if "cell_key" not in rows.columns or not plan.get("cells"):
        return 0.0
    by_key = {c.get("key"): c for c in plan["cells"]}
    keys = rows["cell_key"].dropna().unique()
    if not any((by_key.get(k) or {}).get("workload", {}).get("kind") in STORAGE_KINDS for k in keys):
        return 0.0  # the plan's cost model (and the spec machinery it imports) is not needed
    from faascope.designs.cost import storage_charges, storage_usage  # lazy: the spec machinery, only for storage cells

    total = 0.0
    for k in keys:
        cell = by_key.get(k)
        if not cell or not isinstance(cell.get("workload"), dict):
            continue
        usage = storage_usage(cell["workload"], pricing)
        charges = storage_charges(usage, PLATFORM_CLOUD.get(platform), pricing)
        total += sum(v["total"] for v in charges.values()) * (rows["cell_key"] == k).sum()
    return total / max(1, len(rows))


def timed_column(data: Dataset) -> str | None:
    """The timed response the billed duration is compared with: the report's response when it is
    a duration in seconds (faascope.store.measures), else the agent's timed workload
    (latency_seconds)."""
    if data.measure.unit == "s":  # the measures table says what is a duration (a rate is not)
        return data.response
    return "latency_seconds" if "latency_seconds" in data.data.columns else None


def _mapped_fallback(data: Dataset) -> str | None:
    """The platform a price mapping falls back to for rows it does not map: the campaign's (a
    results store), else none — a foreign table's platform is never guessed."""
    if data.source.kind != "store":
        return None
    platform, why = _platform_for(data)
    return None if why else platform


def _priced_columns(data: Dataset, rows: pd.DataFrame, price_map: PriceMapping) -> PricedColumns:
    memory_col = next((c for c in MEMORY_COLS if c in rows.columns and rows[c].notna().any()), None)
    fallback = _mapped_fallback(data)
    if fallback is None and price_map.platform is None:
        # rows that name their platform (an exported flat view) are priced by it
        col = next((c for c in PLATFORM_COLS if c in rows.columns and rows[c].notna().all()), None)
        if col is not None:
            price_map = replace(price_map, platform=FieldMap("--price-platform", column=col))
    return pricing_columns(rows, price_map, platform=fallback, memory_col=memory_col,
                           timed=timed_column(data), duration_cols=list(DURATION_COLS))


def check_price_map(data: Dataset, price_map: PriceMapping | None) -> None:
    """Raise BadInput (exit 2, naming the option and the level) when ``price_map`` cannot price
    ``data``'s rows: before the analysis, not after it."""
    if price_map is not None:
        _priced_columns(data, data.data, price_map)


def price_scenarios(data: Dataset, scenarios: list[Scenario], alpha: float = 0.05,
                    price_map: PriceMapping | None = None) -> tuple[CostBasis | None, str | None]:
    """Attach a ScenarioCost to every scenario (``sc.cost``); returns how it was priced, or None
    and the reason when the input cannot be priced (no memory or duration column, no price list).
    ``price_map``: how a foreign table's columns give platform, memory, arch and duration
    (faascope.cost.mapping; --price-platform …)."""
    platform, why = _platform_for(data)
    if why and price_map is None:
        return None, why
    spec = data.source.spec or {}
    try:
        pricing = pricing_for((spec.get("provider") or {}).get("settings") or {})
    except BadInput as exc:
        return None, f"the spec's pricing cannot be used: {exc.message}"
    timed = timed_column(data)
    platforms: set[str] = set()
    sources: set[str] = set()
    mapped: list[str] = []
    lower_bound = False
    storage_priced = False
    for sc in scenarios:
        rows = sc.rows
        if price_map is not None:
            pc = _priced_columns(data, rows, price_map)
            priced, duration_col = pc.frame, (pc.duration_col or None)
            mapped, lower_bound = pc.words, pc.lower_bound
        else:
            priced, duration_col = rows, None
        try:
            costs = invocation_costs(priced, platform=None if price_map is not None else platform or None,
                                     pricing=pricing, duration_col=duration_col)
        except BadInput as exc:
            if data.source.kind != "store":
                return None, (f"{exc.message}; a foreign table is priced by mapping its columns: "
                              "--price-platform, --price-memory, --price-duration (docs/cost.md)")
            return None, exc.message
        _, _, src = row_durations(priced, duration_col)
        if duration_col is not None:   # the mapping chose the duration: its words say which
            src = np.full(len(src), "mapped", dtype=object)
        cost = costs["cost"].to_numpy(dtype=float).copy()
        timed_y = rows[timed].to_numpy(dtype=float) if timed else None
        cells = []
        for cell in sc.cells:
            pos = cell.pos
            plats = sorted(set(costs["platform"].iloc[pos]))
            plat = plats[0] if plats else "aws_lambda"
            platforms.update(plats)
            storage = _storage_per_invocation(data, rows.iloc[pos], plat, pricing)
            if storage:
                storage_priced = True
                cost[pos] = cost[pos] + storage
            cci = mean_interval(cost[pos], alpha, seed=len(cells))
            mean = float(np.mean(cost[pos])) if len(pos) else float("nan")
            cs = [s for s in dict.fromkeys(src[pos]) if s]
            sources.update(cs)
            st = cell.stats if timed == data.response else None
            t = timed_y[pos] if timed_y is not None else None
            t = t[np.isfinite(t)] if t is not None else None
            cells.append(CellCost(
                cell.label, dict(cell.levels), cell.color, len(pos), plat,
                billed_mean_s=float(np.nanmean(costs["billed_s"].to_numpy(dtype=float)[pos])),
                timed_mean_s=float(t.mean()) if t is not None and len(t) else None,
                timed_mean_ci=st["mean_ci"] if st else None,
                timed_mean_ci_why=st.get("mean_ci_why") if st else None,
                timed_p99_s=float(np.quantile(t, 0.99)) if t is not None and len(t) else None,
                cost_mean=mean, cost_ci=None if cci.low is None else (cci.low, cci.high), cost_ci_why=cci.why,
                compute=float(np.nanmean(costs["compute"].to_numpy(dtype=float)[pos])),
                request=float(np.nanmean(costs["request"].to_numpy(dtype=float)[pos])),
                ephemeral=float(np.nanmean(costs["ephemeral"].to_numpy(dtype=float)[pos])),
                storage=storage, sources=cs))
        for cell, cc in zip(sc.cells, cells):
            _break_even(cc, rows.iloc[cell.pos], pricing)
        scost = ScenarioCost(cells)
        scost.front, scost.front_p99 = _fronts(cells)
        if sc.res is not None and np.isfinite(cost).all():
            frame = rows[sc.factors].copy()
            frame[COST_COLUMN] = cost
            try:
                scost.res = rank_levels(frame, COST_COLUMN, sc.factors, data.compare, alpha,
                                        {f: data.info[f].levels for f in sc.factors})
            except BadInput as exc:
                scost.error = exc.message
        elif sc.res is None:
            scost.error = sc.error
        sc.cost = scost
    shown = sorted(platforms)
    if "config_profile" in data.data.columns and data.data["config_profile"].notna().any():
        profs = sorted(set(data.data["config_profile"].dropna().astype(str)))
        as_what = ", ".join(f"{PLATFORM_TITLES[platform_key(p)]} (profile `{p}`)" for p in profs)
    else:
        as_what = ", ".join(PLATFORM_TITLES.get(p, p) for p in shown)
    return CostBasis(pricing, shown, as_what, sorted(sources), timed, storage_priced, mapped, lower_bound), None


#: reads whose data could be kept in memory instead: (workload kind, op) -> the tier read from
READ_TIERS = {("fileio", "read"): "/tmp", ("object", "get"): "object storage (S3)"}


def _break_even(cc: CellCost, rows: pd.DataFrame, pricing: Pricing) -> None:
    """The five-minute rule for a cell that reads its data from /tmp or object storage on AWS
    Lambda (faascope.cost.breakeven): how often it must be re-read for keeping it in the
    function's memory to be cheaper."""
    if cc.platform != "aws_lambda" or cc.timed_mean_s is None:
        return
    kind = rows["workload_kind"].dropna().unique() if "workload_kind" in rows.columns else []
    op = rows["workload_op"].dropna().unique() if "workload_op" in rows.columns else []
    if len(kind) != 1 or len(op) != 1 or (kind[0], op[0]) not in READ_TIERS:
        return
    nbytes = pd.to_numeric(rows.get("bytes"), errors="coerce").dropna()
    mem = pd.to_numeric(rows.get("config_memory_mb"), errors="coerce").dropna()
    if nbytes.empty or mem.empty or nbytes.mean() <= 0:
        return
    lam = pricing["aws_lambda"]
    arch = str(rows["config_arch"].dropna().iloc[0]) if "config_arch" in rows.columns and rows["config_arch"].notna().any() else "x86_64"
    fee = 0.0
    if kind[0] == "object":
        n_req = pd.to_numeric(rows.get("requests_ok"), errors="coerce").dropna()
        fee = (float(n_req.mean()) if len(n_req) else 1.0) * pricing["aws_s3"]["get_per_1000"] / 1000
    cc.tier = READ_TIERS[(kind[0], op[0])]
    cc.item_bytes = float(nbytes.mean())
    cc.break_even_s = ram_break_even_s(cc.item_bytes, cc.timed_mean_s, float(mem.iloc[0]),
                                       lam[f"gb_second_{arch}"], fee, lam["mb_per_gb"])


def _fronts(cells: list[CellCost]) -> tuple[list[int], list[int]]:
    df = pd.DataFrame({"cost": [c.cost_mean for c in cells], "mean": [c.timed_mean_s for c in cells],
                       "p99": [c.timed_p99_s for c in cells]}, dtype=float)
    out = []
    for col in ("mean", "p99"):
        if df[col].notna().any():
            out.append(list(pareto_front(df, "cost", col).index))
        else:
            out.append([])
    return out[0], out[1]


def table_of(pricing: Pricing, platform: str):
    """The price table a platform is priced from (for provenance)."""
    return pricing[PLATFORM_TABLE[platform]]
