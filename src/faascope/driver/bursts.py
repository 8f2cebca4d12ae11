"""The burst driver: a campaign whose planned runs are bursts (a spec with a ``load`` section).

Each replication of a cell is one **burst** of ``load.burst_size`` invocations sent as close
together as the client allows, or on an arrival schedule (fixed, shifted exponential, trace) or
in staggered batches (:mod:`faascope.driver.schedule`). One asyncio loop and one aiohttp
connection pool send everything (:mod:`faascope.driver.aclient`); no thread per request.

The plan is the ordinary design plan (cells x replications, randomised, blocked), expanded so that
every invocation has its own slot in ``planned_runs``: burst k of a cell with N members owns the
measured replications k*N … k*N+N-1 and, with a warm pool of W, the warm-up replications
k*W … k*W+W-1. The store's UNIQUE(cell, replication, kind) then makes resuming exact: a killed
campaign resumes with the missing slots only. A burst that was cut short is finished as a second
*attempt* with its missing members (recorded in ``bursts`` and flagged ``split`` there, so the
analysis can tell a burst of N from two smaller ones).

Per burst, in order: wait for its time block and ``load.pause``; make it cold as the design says
(``start``: cold = environment change, fresh = a new function, expire = wait out the keep-alive);
open connections (DryRun invokes); send the warm pool and wait for it; send the burst; record
every reply as it arrives (a writer thread, group commits); summarise the burst; check the error
budget. Errors and throttles are results, never retried.
"""
from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from faascope.errors import BadInput, Failure
from faascope.providers.base import FunctionConfig, InvokeResult, Provider, make_provider

THROTTLE_TYPES = ("TooManyRequestsException", "ThrottlingException", "TooManyRequests", "HTTP429")


# ------------------------------------------------------------------------------------ planning
def cell_burst_shape(cell) -> tuple[int, int]:
    """(burst size N, warm pool W) of a plan cell."""
    ld = cell.load or {}
    n = int(ld.get("burst_size", 1))
    pool = ld.get("warm_pool", 0)
    if ld.get("start", "warm") != "warm":
        return n, 0  # a warm pool only precedes warm bursts
    return n, (n if pool == "burst" else int(pool or 0))


def expand_runs(plan) -> list[dict]:
    """The invocation-level ``planned_runs`` rows of a burst plan (see the module doc)."""
    cells = plan.cells_by_key
    rows: list[dict] = []
    for r in plan.runs:
        if r.kind != "measure":  # design.warmup is refused for burst specs (load.warm_pool)
            continue
        n, w = cell_burst_shape(cells[r.cell_key])
        k = r.replication
        for j in range(w):
            rows.append(dict(order=len(rows), cell_key=r.cell_key, replication=k * w + j,
                             kind="warmup", block=r.block, force_cold=False))
        for i in range(n):
            rows.append(dict(order=len(rows), cell_key=r.cell_key, replication=k * n + i,
                             kind="measure", block=r.block, force_cold=r.force_cold))
    return rows


def check_burst_spec(loaded) -> None:
    """Design settings that a burst spec expresses in ``load`` instead (exit 2 before anything)."""
    d = loaded.spec.design
    if d.warmup:
        raise BadInput("with a load section, warm up with load.warm_pool (a warm pool sent "
                       "together before each burst), not design.warmup", field="design.warmup")
    if d.cold_mode != "none":
        raise BadInput("with a load section, choose cold or warm bursts with load.start (cold, "
                       "fresh, expire or warm), not design.cold", field="design.cold")


def is_burst_spec(loaded) -> bool:
    return loaded.spec.load is not None or any(f.section == "load" for f in loaded.factors)


@dataclass
class BurstGroup:
    cell_key: str
    burst: int
    block: int
    first_order: int
    warmup: list[dict] = field(default_factory=list)
    measure: list[dict] = field(default_factory=list)


def group_pending(pending: list[dict], cells: dict) -> list[BurstGroup]:
    groups: dict[tuple[str, int], BurstGroup] = {}
    for row in pending:
        n, w = cell_burst_shape(cells[row["cell_key"]])
        size = n if row["kind"] == "measure" else w
        k = row["replication"] // max(size, 1)
        g = groups.get((row["cell_key"], k))
        if g is None:
            g = groups[(row["cell_key"], k)] = BurstGroup(row["cell_key"], k, row["block"],
                                                          row["order_index"])
        (g.measure if row["kind"] == "measure" else g.warmup).append(row)
        g.first_order = min(g.first_order, row["order_index"])
    return sorted(groups.values(), key=lambda g: g.first_order)


def derived_name(base: str, suffix: str) -> str:
    """``base + suffix`` within Lambda's 64 characters (shortened with a hash when needed)."""
    if len(base) + len(suffix) <= 64:
        return base + suffix
    h = hashlib.sha1(base.encode()).hexdigest()[:8]
    return base[:64 - len(suffix) - 9] + "-" + h + suffix


# ------------------------------------------------------------------------------------ summaries
def _q(a: np.ndarray, p: float) -> Optional[float]:
    return float(np.quantile(a, p)) if a.size else None


def dist(values) -> dict[str, Optional[float]]:
    a = np.asarray([v for v in values if v is not None], dtype=float)
    if not a.size:
        return {"n": 0}
    return {"n": int(a.size), "p50": _q(a, .5), "p95": _q(a, .95), "p99": _q(a, .99),
            "max": float(a.max()), "min": float(a.min()), "mean": float(a.mean())}


def summarise(results: list[tuple[Any, InvokeResult]], planned: int) -> dict:
    """A burst's summary from its (member, result) pairs: statuses, throttles, dispatch spread,
    lag behind the schedule, arrival spread, wait/run/service quantiles, instances."""
    statuses: dict[str, int] = {}
    errors: dict[str, int] = {}
    sends, lags, recv, arrival, waits, runs, services, rts = [], [], [], [], [], [], [], []
    instances, sandboxes, hosts, cold = set(), set(), set(), 0
    new_conns = 0
    for m, r in results:
        statuses[r.status] = statuses.get(r.status, 0) + 1
        if r.status != "ok":
            errors[r.error_type or r.status] = errors.get(r.error_type or r.status, 0) + 1
        if (r.platform or {}).get("connection") == "new":
            new_conns += 1
        if r.send_ns is not None:
            sends.append(r.send_ns)
            lags.append((r.send_ns - m.scheduled_ns) / 1e9)
            if r.end_ns is not None:
                rts.append((r.end_ns - r.send_ns) / 1e9)
        resp = r.response or {}
        t = resp.get("timings") or {}
        inst = resp.get("instance") or {}
        if inst.get("id"):
            instances.add(inst["id"])
        if inst.get("sandbox"):
            sandboxes.add(inst["sandbox"])
        if inst.get("boot_id"):
            hosts.add(inst["boot_id"])
        if resp.get("cold"):
            cold += 1
        rec = t.get("received_ns")
        if rec is not None:
            recv.append(rec)
            p = r.platform or {}
            est = rec
            if str(p.get("cold", "")).lower() == "true":
                est = rec - int((float(p.get("setup_ms") or 0) + float(p.get("init_ms") or 0)) * 1e6)
            arrival.append(est)
            if r.send_ns is not None:
                waits.append((rec - r.send_ns) / 1e9)
            end = t.get("workload_end_ns")
            if end is not None:
                runs.append((end - rec) / 1e9)
                if r.send_ns is not None:
                    services.append((end - r.send_ns) / 1e9)
    sent = len(sends)
    return {
        "planned": planned, "sent": sent, "replies": len(results), "statuses": statuses,
        "errors": errors, "throttled": sum(v for k, v in errors.items() if k in THROTTLE_TYPES),
        "failed": sum(v for k, v in statuses.items() if k != "ok"),
        "first_send_ns": min(sends) if sends else None, "last_send_ns": max(sends) if sends else None,
        "send_spread_s": (max(sends) - min(sends)) / 1e9 if sends else None,
        "send_lag_s": dist(lags),
        "received_spread_s": (max(recv) - min(recv)) / 1e9 if recv else None,
        "arrival_spread_est_s": (max(arrival) - min(arrival)) / 1e9 if arrival else None,
        "wait_s": dist(waits), "run_s": dist(runs), "service_s": dist(services),
        "round_trip_s": dist(rts), "cold": cold, "instances": len(instances),
        "sandboxes": len(sandboxes), "hosts": len(hosts), "new_connections": new_conns,
    }


def _ms(v: Optional[float]) -> str:
    return "–" if v is None else (f"{v * 1e3:.1f} ms" if v < 10 else f"{v:.2f} s")


def burst_line(label: str, s: dict) -> str:
    st = ", ".join(f"{v} {k}" for k, v in sorted(s["statuses"].items()))
    return (f"{label}: {s['sent']}/{s['planned']} sent, spread {_ms(s['send_spread_s'])}, "
            f"{st or 'no replies'}"
            + (f", {s['throttled']} throttled" if s["throttled"] else "")
            + f"; wait p50 {_ms(s['wait_s'].get('p50'))} p99 {_ms(s['wait_s'].get('p99'))}, "
              f"service p99 {_ms(s['service_s'].get('p99'))}; {s['cold']} cold, "
              f"{s['instances']} instance(s)")


# ------------------------------------------------------------------------------------ sending
@dataclass
class Member:
    row: dict
    member: int
    batch: int
    offset_s: float
    copy: int
    function: str
    scheduled_ns: int = 0
    prep: Any = None
    index: int = 0  # burst * burst_size + member: distinct across the cell's bursts


class Budget:
    def __init__(self, planned: int, max_failed_fraction: float, stop_sending: bool,
                 min_failed: int = 1):
        self.planned = planned
        self.limit = max_failed_fraction * planned
        self.stop_sending = stop_sending
        self.min_failed = min_failed
        self.failed = 0

    def add(self, res: InvokeResult) -> None:
        if res.status != "ok":
            self.failed += 1

    @property
    def exceeded(self) -> bool:
        return self.failed > self.limit and self.failed >= self.min_failed


async def dispatch(inv, members: list[Member], payload: bytes, *, lead_s: float,
                   on_result: Callable[[Member, InvokeResult], None],
                   budget: Optional[Budget] = None, stop: Any = None,
                   sign_ahead_s: float = 60.0, member_field: Optional[str] = None) -> dict:
    """Send ``members`` on their schedule (offsets from a start ``lead_s`` from now); calls
    ``on_result`` as each reply arrives; returns {start_ns, sent, stopped}."""
    loop = asyncio.get_running_loop()

    def member_payload(body: bytes, m: Member) -> bytes:
        if member_field is not None:
            d = json.loads(body)
            d["workload"][member_field] = m.index
            body = json.dumps(d).encode()
        return body.replace(b"{index}", str(m.index).encode())

    def prepare(m: Member):
        return inv.factory.prepare(m.function, member_payload(payload, m) if per_member else payload)

    members = sorted(members, key=lambda m: (m.offset_s, m.member))
    # prepare (serialise + sign) what is due soon; the rest just before its time
    idx = 0
    per_member = member_field is not None or b"{index}" in payload
    while idx < len(members) and members[idx].offset_s < sign_ahead_s:
        members[idx].prep = prepare(members[idx])
        idx += 1
    start_loop = loop.time() + lead_s
    start_ns = time.time_ns() + int(lead_s * 1e9)
    for m in members:
        m.scheduled_ns = start_ns + int(round(m.offset_s * 1e9))
    tasks: list[asyncio.Task] = []
    stopped = None

    async def one(m: Member) -> None:
        res = await inv.send(m.prep)
        m.prep = None
        if budget is not None:
            budget.add(res)
        on_result(m, res)

    for offset, grp in itertools.groupby(members, key=lambda m: m.offset_s):
        grp = list(grp)
        if budget is not None and budget.stop_sending and budget.exceeded:
            stopped = "error_budget"
            break
        if stop is not None and stop.stop:
            stopped = "interrupted"
            break
        while idx < len(members) and members[idx].offset_s < offset + sign_ahead_s:
            members[idx].prep = prepare(members[idx])
            idx += 1
        for m in grp:
            if m.prep is None:
                m.prep = prepare(m)
        delay = start_loop + offset - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        for m in grp:
            tasks.append(loop.create_task(one(m)))
    if tasks:
        await asyncio.gather(*tasks)
    return {"start_ns": start_ns, "sent": len(tasks), "stopped": stopped}


# ------------------------------------------------------------------------------------ campaign
def execute_bursts(loaded, plan, store, campaign: dict, settings: Any, results: Path,
                   spec_path: Path, provider_factory: Optional[Callable], progress: bool, con: Any):
    """Run the pending slots of a burst campaign (called by :func:`runner.run_campaign`)."""
    from faascope.driver import burst_store as bs
    from faascope.driver.runner import (Interrupted, RunSummary, _already_complete, _conclude,
                                        _settle, _StopFlag)

    cid = campaign["id"]
    cells = plan.cells_by_key
    bs.ensure_schema(store)
    planned = store.planned_runs(cid)
    pending = store.pending_runs(cid)
    missing = {r["cell_key"] for r in pending} - set(cells)
    if missing:
        raise Failure(f"the recorded plan refers to cells the spec no longer has: {sorted(missing)[:3]}")
    keep = getattr(settings, "keep_functions", False)
    summary = RunSummary(results=results, campaign_id=cid, planned=len(planned), recorded=0,
                         ran_now=0, statuses={}, complete=False, seed=campaign["seed"],
                         factors=[f.name for f in loaded.factors])
    resume_hint = f"faascope run {spec_path} --results {results} --resume"
    if not pending:
        return _already_complete(store, campaign, summary)

    for c in cells.values():
        ld = c.load or {}
        if ld.get("start") == "expire" and getattr(settings, "keep_alive_s", None) is None:
            raise BadInput("load.start: expire waits out the keep-alive, so set "
                           "provider.settings.keep_alive_s (local platform); elsewhere use "
                           "load.pause", field="load.start")

    provider = provider_factory(loaded) if provider_factory else make_provider(
        loaded.provider_kind, settings)
    say = lambda msg: con.print(msg)  # noqa: E731
    stop = _StopFlag(say)
    groups = group_pending(pending, cells)
    session = BurstSession(loaded, plan, store, campaign, provider, spec_path, progress, con, summary)
    failure: Optional[BaseException] = None
    interrupted = False
    try:
        with stop:
            session.deploy_for(groups, stop)
            store.set_status(cid, "running")
            interrupted = session.run_groups(groups, stop)
    except (KeyboardInterrupt, Interrupted):
        interrupted = True
    except (Failure, BadInput) as exc:
        failure = exc
    finally:
        try:
            session.writer.close()
        except BaseException as exc:  # noqa: BLE001 - a store failure is the campaign's failure
            failure = failure or Failure(f"writing records failed: {exc}")
        _settle(store, cid, summary, len(planned), lambda: len(store.pending_runs(cid)))
        session.close(teardown=summary.complete and not keep)
    if isinstance(failure, BadInput):
        raise failure
    return _conclude(summary, failure, interrupted, results, resume_hint)


class BurstSession:
    """A provider with its deployed functions, a record writer and the bursts' runner: what a
    burst campaign (and ``faascope stagger suggest``, round by round) runs bursts with."""

    def __init__(self, loaded, plan, store, campaign: dict, provider: Provider, spec_path: Path,
                 progress: bool, con: Any, summary: Any):
        from faascope.driver import burst_store as bs
        from faascope.driver.runner import function_name

        settings = loaded.spec.provider.parsed_settings()
        strategy = getattr(settings, "functions", "per_config")
        prefix = getattr(settings, "function_prefix", "faascope")
        self.loaded, self.plan, self.store, self.campaign = loaded, plan, store, campaign
        self.provider, self.spec_path, self.progress, self.con = provider, spec_path, progress, con
        self.summary = summary
        if hasattr(provider, "bind_campaign"):
            provider.bind_campaign(campaign["uid"], loaded.spec.name)
        self._naming = (prefix, strategy, function_name)
        self.set_plan(loaded, plan)
        self.deployed: dict[str, FunctionConfig] = {}
        bs.ensure_schema(store)
        self.writer = bs.RecordWriter(store.path)

    def set_plan(self, loaded, plan) -> None:
        """Use this (grown) plan from now on: its cells and their function names."""
        prefix, strategy, function_name = self._naming
        self.loaded, self.plan = loaded, plan
        self.cells = plan.cells_by_key
        self.base_names = {key: function_name(prefix, loaded.spec.name, self.campaign["uid"],
                                              FunctionConfig.from_dict(c.config).identity(strategy))
                           for key, c in self.cells.items()}

    def deploy_for(self, groups: list[BurstGroup], stop: Any = None) -> None:
        """Deploy the functions (and parallel copies) every non-fresh burst of ``groups`` needs."""
        from faascope.driver.runner import Interrupted

        for g in groups:
            c = self.cells[g.cell_key]
            if (c.load or {}).get("start") == "fresh":
                continue
            cfg = FunctionConfig.from_dict(c.config)
            for name in _copies(self.base_names[g.cell_key], c):
                if name not in self.deployed:
                    t0 = time.perf_counter()
                    self.provider.deploy(name, cfg)
                    self.deployed[name] = cfg
                    self.store.event(self.campaign["id"], "deployed", {
                        "function": name, "config": cfg.as_dict(),
                        "seconds": round(time.perf_counter() - t0, 3),
                        "provider": self.provider.describe()})
            if stop is not None and stop.stop:
                raise Interrupted

    def run_groups(self, groups: list[BurstGroup], stop: Any) -> bool:
        """Run these bursts in order (one event loop); True when interrupted."""
        runner = _CampaignBursts(self.loaded, self.plan, self.store, self.campaign, self.provider,
                                 groups, self.cells, self.base_names, self.deployed, self.writer,
                                 stop, self.progress, self.con, self.summary, self.spec_path)
        interrupted = asyncio.run(runner.run())
        self.writer.flush()
        return interrupted

    def close(self, teardown: bool) -> None:
        if teardown:
            for name in sorted(self.deployed):
                try:
                    self.provider.teardown(name)
                except Exception as exc:  # noqa: BLE001
                    self.con.print(f"[yellow]warning[/yellow]: could not delete function {name}: {exc}")
        self.provider.close()


def _copies(base: str, cell) -> list[str]:
    k = int((cell.load or {}).get("functions", 1))
    return [base] if k == 1 else [derived_name(base, f"-p{j}") for j in range(k)]


class _CampaignBursts:
    """The async part of a burst campaign (one event loop for all bursts)."""

    def __init__(self, loaded, plan, store, campaign, provider: Provider, groups, cells,
                 base_names, deployed, writer, stop, progress, con, summary, spec_path: Path):
        self.loaded, self.plan, self.store, self.campaign = loaded, plan, store, campaign
        self.provider, self.groups, self.cells = provider, groups, cells
        self.base_names, self.deployed, self.writer = base_names, deployed, writer
        self.stop, self.progress, self.con, self.summary = stop, progress, con, summary
        self.spec_dir = Path(spec_path).resolve().parent
        self.cid = campaign["id"]
        self.settings = loaded.spec.provider.parsed_settings()

    def _record(self, m: Member, res: InvokeResult, cell, attempt: int, burst: int,
                cfg: FunctionConfig) -> None:
        from faascope.driver.runner import _record

        rec = _record(self.cid, m.row, cell, m.function, cfg, res, m.scheduled_ns)
        mem = {"campaign_id": self.cid, "cell_key": m.row["cell_key"],
               "replication": m.row["replication"], "kind": m.row["kind"], "burst": burst,
               "attempt": attempt, "member": m.member, "batch": m.batch,
               "planned_offset_s": m.offset_s, "scheduled_ns": m.scheduled_ns,
               "function_copy": m.copy}
        self.writer.put(rec, mem)

    async def run(self) -> bool:
        from faascope.driver.aclient import AsyncInvoker, request_factory
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn)

        biggest = max(max(cell_burst_shape(self.cells[g.cell_key])) for g in self.groups)
        s = self.settings
        factory = request_factory(self.provider, log_tail=False)
        inv = AsyncInvoker(factory, max_connections=max(biggest, 1),
                           connect_timeout_s=getattr(s, "connect_timeout_s", 10.0),
                           read_timeout_s=getattr(s, "read_timeout_s", 960.0))
        self.store.event(self.cid, "burst_driver", {"client": factory.describe(),
                                                     "max_connections": inv.max_connections,
                                                     "attempts_per_invocation": 1})
        total = self.summary.planned
        done = total - sum(len(g.warmup) + len(g.measure) for g in self.groups)
        interval = self.plan.block_interval_s or 0.0
        anchor = float(self.campaign["started_at_unix"])
        cols = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[errors]} errors"), TimeElapsedColumn()]
        last_end = None
        try:
            with Progress(*cols, console=self.con, disable=not self.progress) as bar:
                task = bar.add_task(self.campaign["name"], total=total, completed=done, errors=0)
                for gi, g in enumerate(self.groups):
                    if self.stop.stop:
                        return True
                    cell = self.cells[g.cell_key]
                    ld = dict(cell.load or {})
                    # time blocking, then the pause between bursts
                    if g.block > 0 and interval > 0:
                        if not await self._sleep_until(anchor + g.block * interval):
                            return True
                    pause = float(ld.get("pause") or 0)
                    if pause and last_end is not None:
                        if not await self._sleep_until(last_end + pause):
                            return True
                    outcome = await self._one_burst(inv, g, cell, ld, bar, task)
                    last_end = time.time()
                    if outcome == "interrupted":
                        return True
        finally:
            await inv.close()
        return False

    async def _sleep_until(self, t_unix: float) -> bool:
        while time.time() < t_unix:
            if self.stop.stop:
                return False
            await asyncio.sleep(min(0.5, max(0.0, t_unix - time.time())))
        return True

    async def _one_burst(self, inv, g: BurstGroup, cell, ld: dict, bar, task) -> str:
        from faascope.driver import burst_store as bs
        from faascope.driver.schedule import burst_schedule, describe

        n, w = cell_burst_shape(cell)
        cfg = FunctionConfig.from_dict(cell.config)
        start = ld.get("start", "warm")
        base = self.base_names[g.cell_key]
        names = _copies(base, cell)
        if start == "fresh":
            names = [derived_name(nm, f"-n{g.burst}") for nm in names]
            for nm in names:
                self.provider.teardown(nm)   # a leftover of a killed run is not fresh
                self.provider.deploy(nm, cfg)
        else:
            for nm in names:
                if self.deployed.get(nm) != cfg:  # shared functions: memory etc. in place
                    self.provider.update_configuration(nm, cfg)
                    self.deployed[nm] = cfg
        if start == "cold" and g.measure:
            for nm in names:
                self.provider.force_cold(nm)
        elif start == "expire" and g.measure:
            keep = float(getattr(self.settings, "keep_alive_s", 0) or 0)
            if not await self._sleep_until(time.time() + keep + 1.0):
                return "interrupted"
        arrival = dict(ld.get("arrival") or {})
        if arrival.get("process") == "exponential" and arrival.get("seed") is None:
            arrival["seed"] = int(self.campaign["seed"])  # recorded in the burst's schedule
            ld["arrival"] = arrival
        payload = json.dumps(cell.payload).encode()
        label = f"{g.cell_key} burst {g.burst}"
        pre = int(n if ld.get("preconnect", "burst") == "burst" else ld.get("preconnect") or 0)
        try:
            if pre:
                pc = await inv.preconnect(names[0], pre)
                if pc.get("failed") == pc.get("requested") and \
                        set(pc.get("errors") or {}) <= {"EndpointConnectionError"} and pc.get("errors"):
                    # nothing reached the endpoint: no function could run, so stop before
                    # recording a whole burst of refusals (as the sequential runner does)
                    self.store.event(self.cid, "endpoint_unreachable", {"burst": label, **pc})
                    raise Failure(f"the endpoint is unreachable ({pc['errors']}); nothing was sent "
                                  f"for {label}")
                if pc.get("failed"):
                    self.con.print(f"[yellow]note[/yellow]: {pc['failed']} of {pc['requested']} "
                                   f"connection warm-ups failed ({label})")
            for kind, rows in (("warmup", g.warmup), ("measure", g.measure)):
                if not rows:
                    continue
                size = w if kind == "warmup" else n
                if kind == "warmup":
                    slots = {i: (i, 0, 0.0) for i in range(size)}
                else:
                    slots = {s.member: (s.member, s.batch, s.offset_s)
                             for s in burst_schedule(ld, n, g.burst, self.spec_dir)}
                members = []
                for row in rows:
                    i = row["replication"] - g.burst * size
                    mi, batch, off = slots[i]
                    members.append(Member(row=row, member=mi, batch=batch, offset_s=off,
                                          copy=mi % len(names), function=names[mi % len(names)],
                                          index=g.burst * size + mi))
                attempt = bs.next_attempt(self.store, self.cid, g.cell_key, g.burst, kind)
                sched = describe(ld) if kind == "measure" else {"warm_pool": size}
                sched.update(members=len(members), split=len(members) < size or attempt > 1,
                             functions=names, start=start)
                budget = None
                eb = ld.get("error_budget") or {}
                if kind == "measure":
                    budget = Budget(len(members), float(eb.get("max_failed_fraction", 0.5)),
                                    bool(eb.get("stop_sending", True)), int(eb.get("min_failed", 3)))
                collected: list[tuple[Member, InvokeResult]] = []
                errors = [0]

                def on_result(m: Member, res: InvokeResult, _k=kind, _a=attempt) -> None:
                    self._record(m, res, cell, _a, g.burst, cfg)
                    collected.append((m, res))
                    if res.status != "ok":
                        errors[0] += 1
                    bar.update(task, advance=1)

                lead = 0.05 + 0.0002 * len(members)
                bs.begin_burst(self.store, self.cid, g.cell_key, g.burst, kind, attempt,
                               len(members), time.time_ns() + int(lead * 1e9), sched)
                out = await dispatch(inv, members, payload, lead_s=lead, on_result=on_result,
                                     budget=budget, stop=self.stop,
                                     member_field=ld.get("member_index"))
                self.writer.flush()
                s = summarise(collected, len(members))
                s["schedule_start_ns"] = out["start_ns"]
                s["stopped"] = out["stopped"]
                status = ("stopped" if out["stopped"] == "error_budget" else
                          "interrupted" if out["stopped"] else "complete")
                budget_hit = budget is not None and budget.exceeded
                if budget is not None:
                    s["error_budget"] = {"max_failed_fraction": budget.limit / max(budget.planned, 1),
                                         "failed": budget.failed, "exceeded": budget_hit}
                bs.end_burst(self.store, self.cid, g.cell_key, g.burst, kind, attempt,
                             status=status, sent=out["sent"], recorded=len(collected),
                             first_send_ns=s["first_send_ns"], last_send_ns=s["last_send_ns"],
                             detail=s)
                self.summary.ran_now += len(collected)
                if kind == "measure":
                    self.con.print(burst_line(label + (f" (attempt {attempt})" if attempt > 1 else ""), s),
                                   soft_wrap=True, markup=False)
                if budget_hit:
                    self.store.event(self.cid, "error_budget_exceeded", {
                        "cell_key": g.cell_key, "burst": g.burst, "failed": budget.failed,
                        "planned": budget.planned, "errors": s["errors"],
                        "max_failed_fraction": float(eb.get("max_failed_fraction", 0.5))})
                    raise Failure(f"error budget exceeded in {label}: {budget.failed} of "
                                  f"{budget.planned} invocations failed ({s['errors']}); more than "
                                  f"{100 * float(eb.get('max_failed_fraction', 0.5)):g} % "
                                  "(load.error_budget.max_failed_fraction); the run stopped")
                if out["stopped"] == "interrupted":
                    return "interrupted"
        finally:
            if start == "fresh":
                for nm in names:
                    try:
                        self.provider.teardown(nm)
                    except Exception as exc:  # noqa: BLE001
                        self.con.print(f"[yellow]warning[/yellow]: could not delete {nm}: {exc}")
        return "ok"
