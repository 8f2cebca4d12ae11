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
  by AWS), ``report_duration_ms``/``platform_duration_ms`` (the platform's duration, rounded here,
  with a cold start's ``init_duration_ms``/``platform_init_ms`` added as the price table's
  ``init_billed`` says), else ``client_latency_seconds`` (an upper bound: it includes the network
  round trip, and a cold start's init).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from faascope.cost.model import (PLATFORM_TABLE, billable_seconds, invocation_cost, platform_key,
                                 round_up_many)
from faascope.cost.pricing import Pricing
from faascope.errors import BadInput

MEMORY_COLS = ("config_memory_mb", "memory_mb", "memory")
ARCH_COLS = ("config_arch", "arch")
EPHEMERAL_COLS = ("config_ephemeral_mb", "ephemeral_mb", "ephemeral")
PLATFORM_COLS = ("price_platform", "config_profile", "profile", "platform")
DURATION_COLS = ("billed_duration_ms", "report_duration_ms", "platform_duration_ms",
                 "client_latency_seconds")
#: a cold start's init, billed on top of a platform's duration (not of a client latency, which
#: already holds it, nor of a Billed Duration, which already bills it)
INIT_COLS = ("init_duration_ms", "platform_init_ms")
INIT_ADDED_TO = ("report_duration_ms", "platform_duration_ms")


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


def row_durations(df, duration_col: Optional[str] = None):
    """Per row: the duration in seconds, whether it is already billed (REPORT's Billed Duration)
    and the column it came from: the first of :data:`DURATION_COLS` the row has a value in, or
    ``duration_col`` for every row. Missing: NaN and None."""
    import numpy as np
    import pandas as pd

    if duration_col is None:
        duration_source(df)  # raises when there is none at all
        cols = [c for c in DURATION_COLS if c in df.columns]
    else:
        if duration_col not in df.columns:
            raise BadInput(f"no column {duration_col!r}", field="duration_col")
        cols = [duration_col]
    n = len(df)
    secs = np.full(n, np.nan)
    billed = np.zeros(n, dtype=bool)
    source = np.full(n, None, dtype=object)
    for c in cols:
        v = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float) * (1e-3 if c.endswith("_ms") else 1.0)
        take = np.isnan(secs) & np.isfinite(v)
        secs[take] = v[take]
        billed[take] = c == "billed_duration_ms"
        source[take] = c
    return secs, billed, source


def _column_or(df, names: Sequence[str], default, n: int):
    import numpy as np

    col = _col(df, names)
    if col is None:
        return np.full(n, default, dtype=object)
    s = df[col]
    return s.astype(object).where(s.notna(), default).to_numpy(dtype=object)


def _coalesce(df, names: Sequence[str], default):
    """Per row, the first of the columns ``names`` that has a value there, else ``default``."""
    import pandas as pd

    out = pd.Series([None] * len(df), index=df.index, dtype=object)
    for c in names:
        if c in df.columns:
            out = out.where(out.notna(), df[c].astype(object).where(df[c].notna(), None))
    return out.where(out.notna(), default).to_numpy(dtype=object)


def invocation_costs(df, *, platform: Optional[str] = None, memory_mb: Optional[int] = None,
                     arch: str = "x86_64", ephemeral_mb: int = 512, vcpu: Optional[float] = None,
                     duration_col: Optional[str] = None, pricing: Optional[Pricing] = None):
    """One row per invocation: platform, billed seconds, compute, request, ephemeral and total
    cost (USD), aligned with ``df``'s index (missing where the row has no duration or memory).

    Vectorised: within one (platform, memory, arch, ephemeral) configuration every term of
    :func:`~faascope.cost.model.invocation_cost` is linear in the billed seconds (the request
    term constant), so the model is asked once per configuration for its price of one billed
    second and the rows are priced with that; rounding to the billing granularity is the
    model's :func:`~faascope.cost.model.round_up_many`."""
    import numpy as np
    import pandas as pd

    pricing = pricing or Pricing()
    secs, billed, source = row_durations(df, duration_col)
    n = len(df)
    init_s = np.zeros(n)
    for c in reversed(INIT_COLS):  # the first column wins where both have a value
        if c in df.columns:
            v = pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float) / 1000.0
            init_s = np.where(np.isfinite(v), v, init_s)
    init_s = np.where(np.isin(source.astype(str), INIT_ADDED_TO), init_s, 0.0)
    if memory_mb is None and _col(df, MEMORY_COLS) is None:
        raise BadInput("no memory column (config_memory_mb, memory_mb or memory); pass memory_mb=",
                       field="memory_mb")
    mem = (np.full(n, float(memory_mb)) if memory_mb is not None else
           pd.to_numeric(pd.Series(_column_or(df, MEMORY_COLS, np.nan, n)), errors="coerce").to_numpy(float))
    # per row: a campaign with deployments prices each by its own table; an HTTP deployment
    # without one falls back to the profile columns
    plat = (np.full(n, platform, dtype=object) if platform is not None
            else _coalesce(df, PLATFORM_COLS, "aws_lambda"))
    # one look-up per distinct name, not per row (a million rows name two or three platforms)
    names = pd.Series(plat, dtype=object).astype(str)
    keys = names.map({u: platform_key(u) for u in names.unique()}).to_numpy(dtype=object)
    arch_v = _column_or(df, ARCH_COLS, arch, n).astype(str)
    eph = pd.to_numeric(pd.Series(_column_or(df, EPHEMERAL_COLS, ephemeral_mb, n)),
                        errors="coerce").fillna(ephemeral_mb).to_numpy(float)
    out = {k: np.full(n, np.nan) for k in ("billed_s", "compute", "request", "ephemeral", "cost")}
    valid = np.isfinite(secs) & np.isfinite(mem)
    conf = pd.DataFrame({"k": keys, "m": mem, "a": arch_v, "e": eph})[valid]
    for (key, m, a, e), idx in conf.groupby(["k", "m", "a", "e"], sort=False).indices.items():
        rows = conf.index.to_numpy()[idx]
        table = pricing[PLATFORM_TABLE[key]]
        s = billable_seconds(table, secs[rows], init_s[rows])
        b = round_up_many(s, table["granularity_ms"])
        if key == "aws_lambda":  # REPORT's Billed Duration is already rounded by AWS: as is
            b = np.where(billed[rows], s, b)
        one = invocation_cost(key, float(m), 1.0, arch=str(a), ephemeral_mb=float(e), vcpu=vcpu,
                              billed=True, pricing=pricing)
        out["billed_s"][rows] = b
        out["compute"][rows] = one.compute * b
        out["ephemeral"][rows] = one.ephemeral * b
        out["request"][rows] = one.request
        out["cost"][rows] = one.compute * b + one.ephemeral * b + one.request
    res = pd.DataFrame({"platform": keys, **out}, index=df.index)
    return res


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
