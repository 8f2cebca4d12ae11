"""The report's first section: what was measured and how (a campaign's spec, design, excluded
cells, counts, errors, retries, duration, machine and versions), or, for a foreign table, what is
known about it; then what this report analyses."""
from __future__ import annotations

import pandas as pd

from faascope.analysis.adaptive_record import adaptive_note
from faascope.analysis.calendar import DEFINITIONS as CALENDAR_DEFINITIONS
from faascope.analysis.levels import factor_info
from faascope.report.numbers import fmt_duration
from faascope.report.items import Block, Details, KeyValues, Text, table
from faascope.report.sections.context import Ctx
from faascope.store.schema import (PROVENANCE_EVENT, SLOT_MISSED_EVENT, STANDINS_EVENT, event_detail,
                                    latest_event_detail)


def overview_section(ctx: Ctx) -> Block:
    d = ctx.data
    src = d.source
    b = Block("overview", "Campaign overview" if src.kind == "store" else "Input overview")
    if src.kind == "store":
        _store_overview(ctx, b)
    else:
        _table_overview(ctx, b)
    fac = [(f"factor {f}" + (" (compared)" if f == d.compare else ""),
            f"{d.info[f].describe_levels()}") for f in d.factors]
    sel = [("response", f"`{d.response}`" + (f" ({ctx.unit})" if ctx.unit else ""))] + fac
    if d.scenario_cols:
        sel.append(("scenarios", " × ".join(d.scenario_cols) + (" (chosen automatically)" if d.scenario_auto else "")
                    + f": {len(ctx.scenarios)} scenario(s)"))
    sel.append(("rows analysed", f"{d.counts['analysed']:,}"))
    if d.time_source:
        t = d.data[d.time_col]
        sel.append(("time span", f"{_ts(t.min())} → {_ts(t.max())} ({fmt_duration((t.max() - t.min()).total_seconds())}; "
                    f"from column `{d.time_source}`)"))
    b.items.append(KeyValues(sel, "What is analysed"))
    for n in d.notes:
        b.items.append(Text(n, "note"))
    if d.described:
        b.items.append(Text(
            f"Statistics: mean with a t-based {ctx.conf} CI, median with an order-statistic CI, percentiles, "
            "coefficient of variation (CV = s/mean) with a bootstrap CI, cold and warm starts apart where known; "
            "no factor varies, so nothing is tested.", "note"))
        return b
    b.items.append(Text(
        f"Statistics per scenario: per-cell mean and median with {ctx.conf} CIs, coefficient of variation "
        f"(CV = s/mean, the predictability metric; lower is more predictable) with its CI, each interval only "
        f"where the cell has the values its method needs to cover (else 'too few'), ANOVA with interactions "
        f"(share of variation = SS/SST), Tukey HSD at {ctx.conf} family-wise confidence; the answer and the "
        "decisions compare estimated marginal means "
        "(Welch tests, Games-Howell-adjusted) and cells (Games-Howell), which do not assume equal variances, "
        "and CVs by the CV test (a studentized permutation test of the CV ratio, Holm-adjusted), which holds "
        "its level on skewed and cold-start data. "
        f"`{d.response}`: {d.measure.direction_text}.", "note"))
    return b


def _ts(t) -> str:
    if t is None or pd.isna(t):
        return "–"
    return pd.Timestamp(t).strftime("%Y-%m-%d %H:%M:%S UTC")


def _store_overview(ctx: Ctx, b: Block) -> None:
    d = ctx.data
    src = d.source
    camp = src.campaign or {}
    plan = src.plan or {}
    spec = src.spec or {}
    rows = d.all_rows
    pairs = [("campaign", f"{camp.get('name')} (status: {camp.get('status')})"),
             ("results store", f"`{src.path}`")]
    if spec.get("description"):
        pairs.append(("description", " ".join(str(spec["description"]).split())))
    pairs.append(("provider", str(camp.get("provider"))))
    fn = spec.get("function") or {}
    if fn:
        pairs.append(("function", ", ".join(f"{k}={v}" for k, v in fn.items() if v is not None)))
    wl = spec.get("workload") or {}
    if wl:
        pairs.append(("workload", ", ".join(f"{k}={v}" for k, v in wl.items() if v is not None)))
    t0 = _parse_one(rows.get("started_at"), "min")
    t1 = _parse_one(rows.get("ended_at"), "max")
    if t0 is not None and t1 is not None:
        pairs.append(("duration", f"{fmt_duration((t1 - t0).total_seconds())} ({_ts(t0)} → {_ts(t1)}; first "
                      "invocation sent → last one answered)"))
    pairs.append(("created / completed", f"{camp.get('created_at')} / {camp.get('completed_at') or '–'}"))
    mach = camp.get("machine") or {}
    if mach:
        pairs.append(("machine", ", ".join(str(mach[k]) for k in ("hostname", "cpu_model") if mach.get(k))
                      + f"; {mach.get('cpus')} CPUs; {mach.get('system')} {mach.get('release')} {mach.get('machine')}; "
                      f"time zone {mach.get('timezone')}"))
    vers = [f"faascope {camp.get('faascope_version')}"]
    vers += [f"{k} {mach[k]}" for k in ("python", "boto3", "botocore") if mach.get(k)]
    pairs.append(("versions", ", ".join(vers)))
    served = _standins_served(src.events)
    if served:
        pairs.append(("stand-ins", served))
    pairs.append(("spec hash", f"`{str(camp.get('spec_hash'))[:16]}`"))
    b.items.append(KeyValues(pairs, "Campaign"))
    prov = provenance_table(src.events)
    if prov is not None:
        b.items.append(prov)

    # design
    dz = [("design", str(plan.get("design", "–"))),
          ("factors", "; ".join(f"{f['name']} ({f.get('field')}): {', '.join(map(str, f.get('levels', [])))}"
                                for f in src.factor_meta) or "–"),
          ("cells run", f"{len(plan.get('cells', []))}"),
          ("cells excluded", f"{len(plan.get('excluded', []))} (by the compatibility rules below)"),
          ("replications per cell", str(plan.get("replications", camp.get("replications")))),
          ("warm-ups per cell", str(plan.get("warmup_per_cell", 0))),
          ("forced cold starts", str(plan.get("cold", "none"))),
          ("run order", ("randomised" if plan.get("randomize") else "replication by replication")
           + f", seed {plan.get('seed', camp.get('seed'))}"),
          ("blocks", f"{plan.get('blocks', 1)}" + (f", {plan['block_interval_s']:g} s apart"
                                                  if plan.get("block_interval_s") else ""))]
    adaptive = d.adaptive   # analysis/dataset read it with the file (analysis/adaptive_record)
    if adaptive:
        dz.append(("adaptive replication", adaptive_note(adaptive)))
    rules = (spec.get("design") or {}).get("rules") or []
    if rules:
        dz.append(("compatibility rules", "; ".join(f"`{r}`" for r in rules)))
    sched = plan.get("schedule")
    if sched:
        missed = sum(1 for e in src.events if e.get("kind") == SLOT_MISSED_EVENT)
        dz.append(("schedule", (f"every {sched['every_s']:g} s" if sched.get("every_s")
                                else f"cron `{sched.get('cron')}` ({sched.get('tz')})")
                   + f", {sched.get('slots')} slot(s) from {sched.get('first_due')}, "
                   f"{sched.get('replications_per_slot')} replication(s) of every cell per slot; "
                   f"late slots {'run late' if sched.get('late') == 'run' else 'missed'} after "
                   f"{sched.get('grace_s') or 0:g} s; {missed} slot(s) missed"))
        dz.append(("calendar factors", "derived at analysis time in the zone given to `faascope "
                   "analyze --tz` (from `started_at`, UTC): " + "; ".join(
                       f"{k}: {v}" for k, v in CALENDAR_DEFINITIONS.items())))
    b.items.append(KeyValues(dz, "Design"))
    exc = plan.get("excluded") or []
    if exc:
        names = list(exc[0]["levels"])
        b.items.append(table(f"Excluded cells ({len(exc)})", names + ["excluded by rule"],
                             [[_level_text(ctx, k, e["levels"].get(k)) for k in names] + [e.get("rule", "")]
                              for e in exc],
                             caption="Combinations the design does not run, and the first rule each breaks."))

    # counts, errors, retries
    n_rec = len(rows)
    warm = int(pd.to_numeric(rows.get("warmup", pd.Series(dtype=float)), errors="coerce").fillna(0).sum())
    status = rows["status"].value_counts() if "status" in rows else pd.Series(dtype=int)
    retries = pd.to_numeric(rows.get("retries", pd.Series(dtype=float)), errors="coerce").fillna(0)
    cold = pd.to_numeric(rows.get("cold", pd.Series(dtype=float)), errors="coerce")
    forced = pd.to_numeric(rows.get("cold_forced", pd.Series(dtype=float)), errors="coerce").fillna(0)
    cz = [("planned invocations", f"{src.planned_runs:,}" if src.planned_runs is not None else "–"),
          ("recorded", f"{n_rec:,}" + (f" ({src.planned_runs - n_rec:,} missing: the campaign did not finish; "
                                       "resume it with `faascope run … --resume`)"
                                       if src.planned_runs and n_rec < src.planned_runs else "")),
          ("measured / warm-ups", f"{n_rec - warm:,} / {warm:,}"),
          ("outcome", ", ".join(f"{k}: {v:,}" for k, v in status.items()) or "–"),
          ("retries", f"{int(retries.sum()):,} in total; {int((retries > 0).sum()):,} invocation(s) needed one or more"),
          ("cold starts", f"{int((cold == 1).sum()):,} of {int(cold.notna().sum()):,} invocations reported cold"
                          + (f" ({int(forced.sum()):,} forced by the plan)" if forced.sum() else ""))]
    events = pd.Series([e["kind"] for e in src.events]).value_counts() if src.events else pd.Series(dtype=int)
    if len(events):
        cz.append(("events", ", ".join(f"{k}: {v}" for k, v in events.items())))
    b.items.append(KeyValues(cz, "Invocations"))
    if "ok" in rows:
        bad = rows[pd.to_numeric(rows["ok"], errors="coerce").fillna(0) == 0]
        if len(bad):
            g = bad.groupby([bad["status"].fillna(""), bad["error_type"].fillna("")], sort=True)
            err_rows = []
            for (st, et), grp in g:
                msg = str(grp["error_message"].dropna().iloc[0])[:160] if grp["error_message"].notna().any() else ""
                err_rows.append([st, et or "–", str(len(grp)), msg])
            b.items.append(table("Errors", ["status", "error type", "count", "first message"], err_rows,
                                 caption="Failed invocations (left out of the statistics)."))
        else:
            b.items.append(Text("No failed invocations.", "note"))
    if camp.get("spec_text"):
        b.items.append(Details(f"Spec as written ({camp.get('spec_path') or 'spec'})", camp["spec_text"], "yaml"))


def _parse_one(s: pd.Series | None, how: str):
    if s is None or len(s) == 0:
        return None
    t = pd.to_datetime(s, errors="coerce", utc=True, format="ISO8601")
    v = t.min() if how == "min" else t.max()
    return None if pd.isna(v) else v


def _level_text(ctx: Ctx, factor: str, value) -> str:
    info = ctx.data.info.get(factor)
    s = "" if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
    if info is not None:
        return info.label(s)
    return factor_info(factor, [s]).label(s) if s else s


def _table_overview(ctx: Ctx, b: Block) -> None:
    d = ctx.data
    src = d.source
    if src.path is not None:
        size = src.path.stat().st_size
        pairs = [("file", f"`{src.path}` ({size:,} bytes, {src.path.suffix.lstrip('.') or 'table'})")]
    else:  # several inputs stacked, each row's input in the column `source`
        pairs = [("inputs", ", ".join(f"`{n}`" for n in src.inputs) + " (column `source` names each "
                  "row's input; the stacked table is inputs.csv beside this report)")]
    pairs += [("rows read", f"{src.rows_read:,}"),
             ("columns", f"{len(src.columns)}: " + ", ".join(f"`{c}`" for c in src.columns[:60])
              + (" …" if len(src.columns) > 60 else ""))]
    if d.mapping:
        pairs.append(("column mapping (--map)", ", ".join(f"`{o}` → `{n}`" for o, n in d.mapping.items())))
    pairs.append(("filters (--filter)", " ".join(f"`{f}`" for f in d.filters) or "none"))
    pairs.append(("--latest", f"{d.latest} most recent rows per cell" if d.latest else "all rows"))
    for col in ("status", "ok"):
        if col in d.all_rows:
            vc = d.all_rows[col].astype(str).value_counts()
            pairs.append((f"values of `{col}`", ", ".join(f"{k}: {v:,}" for k, v in vc.head(8).items())))
    pairs.append(("not known", "spec, design, excluded cells, retries, machine and versions are recorded only by a "
                  "faascope results store"))
    b.items.append(KeyValues(pairs, "Input"))


def _standins_served(events: list[dict]) -> str:
    """Which local servers stood in for cloud storage, and their versions (the campaign's
    ``standins`` events; the latest when a campaign was resumed)."""
    detail = latest_event_detail(events, STANDINS_EVENT) or {}
    return ", ".join(f"{s.get('kind')}: {s.get('server')} {s.get('version') or ''}".strip()
                     for s in detail.get("servers", []))


def _load(d: dict | None) -> str:
    if not d:
        return "–"
    return f"{d.get('load1')} / {d.get('load5')} / {d.get('load15')}"


def provenance_table(events: list[dict]):
    """One row per run of the driver (its ``provenance`` events, start and end): what could
    explain drift between campaigns or between runs of one; None for files without them."""
    runs: list[list[dict]] = []
    for e in events:
        if e.get("kind") != PROVENANCE_EVENT:
            continue
        d = event_detail(e)
        if d.get("phase") == "start":
            runs.append([d])
        elif runs:
            runs[-1].append(d)
    if not runs:
        return None
    rows = []
    for run in runs:
        start, end = run[0], (run[-1] if len(run) > 1 else {})
        builds = start.get("builds") or {}
        agent = next((v for k, v in sorted(builds.items()) if k.startswith("faascope-agent")), None)
        plat = start.get("platform") or {}
        rows.append([
            str(start.get("at", "–")), _load(start.get("loadavg")), _load(end.get("loadavg")),
            f"{start.get('cpu_model') or '–'} ({start.get('cpus')} CPUs)",
            f"{start.get('system', '')} {start.get('kernel', '')}".strip() or "–",
            f"faascope {start.get('faascope_version')}; agent `{agent or '–'}`; platform "
            f"`{builds.get('faascope-platform') or '–'}`",
            " ".join(str(x) for x in (start.get("provider"), start.get("region"),
                                      start.get("architecture")) if x) or "–",
            ", ".join(f"{t.get('table')}@{t.get('version')}" for t in start.get("price_tables") or []
                      if t.get("table")) or "–",
            ", ".join(f"{k} {v}" for k, v in plat.items()) if plat else "–",
        ])
    return table("Provenance (each run of the driver)",
                 ["started", "load 1/5/15 min at start", "at end", "CPU", "kernel", "versions",
                  "provider, region, architecture", "price tables", "local platform"], rows,
                 caption="What could explain drift: the machine's load (/proc/loadavg), CPU, "
                         "kernel, the faascope version and the SHA-256 of its Go builds, where "
                         "it ran, the price tables in force and the local platform's profile and "
                         "sandboxing as it reported them (a cloud platform reports none).")
