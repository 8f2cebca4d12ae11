"""Cost next to performance, for reports: :func:`invocation_costs`, :func:`cost_table` and
:func:`pareto_front`.

They take a pandas DataFrame of invocations, such as the results store's ``invocations_flat`` view
(``faascope export``), and find what they need by column name, or take it as an argument:

- platform: ``platform=`` or, per row, the first value among the columns ``price_platform`` (the
  price table of the invocation's deployment, docs/specs.md), ``config_profile``/``profile``/
  ``platform`` (lambda, gcf, unlimited, aws_lambda, cloudrun …); default AWS Lambda;
- memory: ``memory_mb=`` or a column ``config_memory_mb``/``memory_mb``/``memory``;
- arch and ephemeral storage likewise (``config_arch``/``arch``, ``config_ephemeral_mb``/
  ``ephemeral_mb``/``ephemeral``), defaults x86_64 and 512;
- the billed duration, per row the best it has: ``billed_duration_ms`` (Lambda's REPORT line, already rounded
  by AWS), ``report_duration_ms``/``platform_duration_ms`` (the platform's duration, rounded here),
  else ``client_latency_seconds`` (an upper bound: it includes the network round trip).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from faascope.cost.model import invocation_cost, platform_key
from faascope.cost.pricing import Pricing
from faascope.errors import BadInput

MEMORY_COLS = ("config_memory_mb", "memory_mb", "memory")
ARCH_COLS = ("config_arch", "arch")
EPHEMERAL_COLS = ("config_ephemeral_mb", "ephemeral_mb", "ephemeral")
PLATFORM_COLS = ("price_platform", "config_profile", "profile", "platform")
DURATION_COLS = ("billed_duration_ms", "report_duration_ms", "platform_duration_ms",
                 "client_latency_seconds")


def _col(df, names: Sequence[str]) -> Optional[str]:
    for n in names:
        if n in df.columns and df[n].notna().any():
            return n
    return None


def duration_source(df) -> tuple[str, bool, float]:
    """(column, already billed?, factor to seconds) of the best duration column in ``df``."""
    if "billed_duration_ms" in df.columns and df["billed_duration_ms"].notna().any():
        return "billed_duration_ms", True, 1e-3
    for c in ("report_duration_ms", "platform_duration_ms"):
        if c in df.columns and df[c].notna().any():
            return c, False, 1e-3
    if "client_latency_seconds" in df.columns:
        return "client_latency_seconds", False, 1.0
    raise BadInput("no duration column: need billed_duration_ms, platform_duration_ms or "
                   "client_latency_seconds", field="duration_col")


def invocation_costs(df, *, platform: Optional[str] = None, memory_mb: Optional[int] = None,
                     arch: str = "x86_64", ephemeral_mb: int = 512, vcpu: Optional[float] = None,
                     duration_col: Optional[str] = None, pricing: Optional[Pricing] = None):
    """One row per invocation: platform, billed seconds, compute, request, ephemeral and total
    cost (USD), aligned with ``df``'s index."""
    import pandas as pd

    pricing = pricing or Pricing()
    if duration_col is None:
        duration_source(df)  # raises when there is none at all
        # per row, the best duration that row has
        sources = [(c, c == "billed_duration_ms", 1e-3 if c.endswith("_ms") else 1.0)
                   for c in DURATION_COLS if c in df.columns]
    else:
        if duration_col not in df.columns:
            raise BadInput(f"no column {duration_col!r}", field="duration_col")
        sources = [(duration_col, duration_col == "billed_duration_ms",
                    1e-3 if duration_col.endswith("_ms") else 1.0)]
    mcol = None if memory_mb is not None else _col(df, MEMORY_COLS)
    if memory_mb is None and mcol is None:
        raise BadInput("no memory column (config_memory_mb, memory_mb or memory); pass memory_mb=",
                       field="memory_mb")
    acol = _col(df, ARCH_COLS)
    ecol = _col(df, EPHEMERAL_COLS)
    # per row: a campaign with deployments prices each by its own table (an HTTP deployment
    # without one falls back to the profile columns)
    pcols = [] if platform is not None else [c for c in PLATFORM_COLS if c in df.columns
                                             and df[c].notna().any()]
    rows = []
    for idx, r in df.iterrows():
        pl = platform if platform is not None else next(
            (r[c] for c in pcols if r[c] is not None and r[c] == r[c]), "aws_lambda")
        key = platform_key(pl if pl is not None and pl == pl else "aws_lambda")
        mem = memory_mb if memory_mb is not None else r[mcol]
        dur, billed, factor = None, False, 1.0
        for col, b, f in sources:
            v = r[col]
            if v is not None and v == v:
                dur, billed, factor = v, b, f
                break
        if dur is None or mem is None or mem != mem:
            rows.append({"platform": key, "billed_s": None, "compute": None, "request": None,
                         "ephemeral": None, "cost": None})
            continue
        c = invocation_cost(
            key, float(mem), float(dur) * factor,
            arch=str(r[acol]) if acol and r[acol] == r[acol] else arch,
            ephemeral_mb=float(r[ecol]) if ecol and r[ecol] == r[ecol] else ephemeral_mb,
            vcpu=vcpu, billed=billed and key == "aws_lambda", pricing=pricing)
        rows.append({"platform": key, "billed_s": c.billed_s, "compute": c.compute,
                     "request": c.request, "ephemeral": c.ephemeral, "cost": c.total})
    return pd.DataFrame(rows, index=df.index)


def cost_table(df, by: Optional[Sequence[str]] = None, *, latency_col: str = "latency_seconds",
               platform: Optional[str] = None, memory_mb: Optional[int] = None,
               arch: str = "x86_64", ephemeral_mb: int = 512, vcpu: Optional[float] = None,
               duration_col: Optional[str] = None, pricing: Optional[Pricing] = None,
               include_failed: bool = True):
    """Cost next to latency per group (``by``: factor columns; none = one row for all).

    Columns: the ``by`` columns, ``platform``, ``n``, ``latency_mean``, ``latency_median``,
    ``latency_p95``, ``billed_s_mean``, ``cost_per_invocation`` (mean USD), ``cost_per_million``
    and ``cost_total`` (USD of the invocations in the group). Failed invocations are billed too
    (``include_failed``); their latency is left out of the latency columns.
    """
    import pandas as pd

    if df is None or len(df) == 0:
        raise BadInput("no invocations to price", field="df")
    if "warmup" in df.columns:
        df = df[df["warmup"].fillna(0).astype(int) == 0]
    costs = invocation_costs(df, platform=platform, memory_mb=memory_mb, arch=arch,
                             ephemeral_mb=ephemeral_mb, vcpu=vcpu, duration_col=duration_col,
                             pricing=pricing)
    work = pd.concat([df.reset_index(drop=True), costs.reset_index(drop=True)
                      .rename(columns={"platform": "_platform"})], axis=1)
    if not include_failed and "ok" in work.columns:
        work = work[work["ok"] == 1]
    by = list(by or [])
    for b in by:
        if b not in work.columns:
            raise BadInput(f"no column {b!r}; columns: {', '.join(map(str, df.columns))}", field="by")
    ok = work["ok"] == 1 if "ok" in work.columns else pd.Series(True, index=work.index)
    lat = work[latency_col].where(ok) if latency_col in work.columns else None

    def agg(g: pd.DataFrame) -> dict[str, Any]:
        n = len(g)
        c = g["cost"].astype(float)
        out = {"platform": ",".join(sorted(set(g["_platform"]))), "n": n}
        if lat is not None:
            lv = lat.loc[g.index].dropna().astype(float)
            out.update(latency_mean=lv.mean() if len(lv) else None,
                       latency_median=lv.median() if len(lv) else None,
                       latency_p95=lv.quantile(0.95) if len(lv) else None)
        out.update(billed_s_mean=g["billed_s"].astype(float).mean(),
                   cost_per_invocation=c.mean(), cost_per_million=c.mean() * 1e6,
                   cost_total=c.sum())
        return out

    if by:
        rows = []
        for keys, g in work.groupby(by, sort=True, dropna=False):
            keys = keys if isinstance(keys, tuple) else (keys,)
            rows.append({**dict(zip(by, keys)), **agg(g)})
    else:
        rows = [agg(work)]
    return pd.DataFrame(rows)


def pareto_front(df, cost_col: str = "cost_per_invocation", latency_col: str = "latency_mean"):
    """The rows no other row beats on both cost and latency (lower is better for both), sorted by
    cost, with a column ``pareto_rank`` (0 = cheapest on the front). Rows with a missing value are
    left out."""
    for c in (cost_col, latency_col):
        if c not in df.columns:
            raise BadInput(f"no column {c!r}", field="cost_col" if c == cost_col else "latency_col")
    d = df.dropna(subset=[cost_col, latency_col]).copy()
    d = d.sort_values([cost_col, latency_col], kind="mergesort")
    keep = []
    best = float("inf")
    for idx, lat in zip(d.index, d[latency_col]):
        if lat < best:
            keep.append(idx)
            best = lat
    front = d.loc[keep].copy()
    front["pareto_rank"] = range(len(front))
    return front
