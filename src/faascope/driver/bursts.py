"""The burst executor: a campaign whose planned runs are bursts (a spec with a ``load`` section).

Each replication of a cell is one **burst** of ``load.burst_size`` invocations sent as close
together as the client allows, or on an arrival schedule (fixed, shifted exponential, trace) or
in staggered batches (:mod:`faascope.designs.schedule`). The Go dispatcher sends each burst's
prepared requests, one pre-opened connection and one socket write per member at its instant
(:mod:`faascope.driver.go_dispatch`); with ``FAASCOPE_DISPATCHER=python`` (or without its binary)
one asyncio loop and one aiohttp connection pool do (:mod:`faascope.driver.aclient`). Either way
no thread per request, and the choice is recorded per burst.

Every invocation has its own planned slot (:mod:`faascope.driver.burst_plan`), so resuming is
exact. A burst that was cut short is finished as a second *attempt* with its missing members
(recorded in ``bursts`` and flagged ``split`` there, so the analysis can tell a burst of N from
two smaller ones).

Per burst, in order: wait for its time block and ``load.pause``; make it cold as the design says
(``start``: cold = environment change, fresh = a new function, expire = wait out the keep-alive);
open connections (DryRun invokes); send the warm pool and wait for it; send the burst; record
every reply as it arrives (a writer thread, group commits); summarise the burst; check the error
budget. Errors and throttles are results, never retried.
"""
from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Optional

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from faascope.designs.schedule import burst_schedule, describe
from faascope.driver.aclient import AsyncInvoker, request_factory
from faascope.driver.burst_plan import BurstGroup, cell_burst_shape, derived_name, group_pending
from faascope.driver.burst_summary import burst_line, summarise
from faascope.driver.campaign import Campaign, Interrupted, may_have_run
from faascope.driver.dispatch import Budget, Member, dispatch
from faascope.driver.go_dispatch import choose_dispatcher, dispatch_go
from faascope.errors import BadInput, Failure
from faascope.providers.base import FunctionConfig
from faascope.providers.invocation import InvokeResult
from faascope.store.writer import RecordWriter


class BurstExecutor:
    """Runs a burst campaign's pending bursts; ``faascope stagger suggest`` runs its trial
    bursts through the same object, round by round (:meth:`run_groups`, then :meth:`close`)."""

    def __init__(self, campaign: Campaign):
        for c in campaign.plan.cells:
            if (c.load or {}).get("start") == "expire" and \
                    getattr(campaign.settings, "keep_alive_s", None) is None:
                raise BadInput("load.start: expire waits out the keep-alive, so set "
                               "provider.settings.keep_alive_s (local platform); elsewhere use "
                               "load.pause", field="load.start")
        self.campaign = campaign
        self.writer: Optional[RecordWriter] = None
        campaign.store.add_burst_tables()

    def run(self, campaign: Campaign) -> None:
        groups = group_pending(campaign.pending(), campaign.plan.cells_by_key)
        try:
            self.deploy_for(groups)
            campaign.set_running()
            self.run_groups(groups)
        finally:
            self.close()

    def deploy_for(self, groups: list[BurstGroup]) -> None:
        """Deploy the functions (and parallel copies) every non-fresh burst of ``groups`` needs."""
        campaign = self.campaign
        cells, base_names = campaign.plan.cells_by_key, campaign.base_function_names()
        for g in groups:
            c = cells[g.cell_key]
            if (c.load or {}).get("start") == "fresh":
                continue
            cfg = FunctionConfig.from_dict(c.config)
            for name in function_copies(base_names[g.cell_key], c):
                campaign.deploy(name, cfg)
            if campaign.stop.stop:
                raise Interrupted

    def run_groups(self, groups: list[BurstGroup]) -> bool:
        """Run these bursts in order (one event loop); True when interrupted."""
        if self.writer is None:
            self.writer = RecordWriter(self.campaign.results, supersede=self.campaign.supersede)
        interrupted = asyncio.run(_Bursts(self.campaign, groups, self.writer).run())
        self.writer.flush()
        return interrupted

    def close(self) -> None:
        """Wait for every record handed to the writer to be committed."""
        writer, self.writer = self.writer, None
        if writer is None:
            return
        try:
            writer.close()
        except BaseException as exc:  # a store failure is the campaign's failure
            raise Failure(f"writing records failed: {exc}") from None


def function_copies(base: str, cell) -> list[str]:
    """The names of a cell's parallel function copies (``load.functions``)."""
    k = int((cell.load or {}).get("functions", 1))
    return [base] if k == 1 else [derived_name(base, f"-p{j}") for j in range(k)]


class _Bursts:
    """The async part of a burst campaign (one event loop for the bursts of one call)."""

    def __init__(self, campaign: Campaign, groups: list[BurstGroup], writer: RecordWriter):
        self.campaign, self.groups, self.writer = campaign, groups, writer
        self.provider = campaign.open_provider()
        self.store, self.cid, self.summary = campaign.store, campaign.id, campaign.summary
        self.stop, self.settings = campaign.stop, campaign.settings
        self.cells = campaign.plan.cells_by_key
        self.base_names = campaign.base_function_names()
        self.spec_dir = Path(campaign.spec_path).resolve().parent

    def _record(self, m: Member, res: InvokeResult, cell, attempt: int, burst: int,
                cfg: FunctionConfig) -> None:
        rec = self.campaign.record_row(m.row, cell, m.function, cfg, res, m.scheduled_ns)
        mem = {"campaign_id": self.cid, "cell_key": m.row["cell_key"],
               "replication": m.row["replication"], "kind": m.row["kind"], "burst": burst,
               "attempt": attempt, "member": m.member, "batch": m.batch,
               "planned_offset_s": m.offset_s, "scheduled_ns": m.scheduled_ns,
               "function_copy": m.copy}
        self.writer.put(rec, mem)

    async def run(self) -> bool:
        biggest = max(max(cell_burst_shape(self.cells[g.cell_key])) for g in self.groups)
        s = self.settings
        # a user's function is timed by the platform's REPORT line (its latency_seconds), which
        # only the log tail carries; the agent times itself, and its bursts skip the tail
        user = any(c.function.code is not None for c in self.cells.values())
        factory = request_factory(self.provider, log_tail=user)
        inv = AsyncInvoker(factory, max_connections=max(biggest, 1),
                           connect_timeout_s=getattr(s, "connect_timeout_s", 10.0),
                           read_timeout_s=getattr(s, "read_timeout_s", 960.0))
        self.factory = factory
        self.dispatcher, why = choose_dispatcher()
        self.campaign.event("burst_driver", {"client": factory.describe(),
                                             "max_connections": inv.max_connections,
                                             "attempts_per_invocation": 1,
                                             "dispatcher": self.dispatcher,
                                             "dispatcher_reason": why})
        total = self.summary.planned
        done = total - sum(len(g.warmup) + len(g.measure) for g in self.groups)
        interval = self.campaign.plan.block_interval_s or 0.0
        anchor = self.campaign.started_at_unix
        cols = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[errors]} errors"), TimeElapsedColumn()]
        last_end = None
        try:
            with Progress(*cols, console=self.campaign.console,
                          disable=not self.campaign.progress) as bar:
                task = bar.add_task(self.campaign.name, total=total, completed=done, errors=0)
                for g in self.groups:
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
        n, w = cell_burst_shape(cell)
        cfg = FunctionConfig.from_dict(cell.config)
        start = ld.get("start", "warm")
        base = self.base_names[g.cell_key]
        names = function_copies(base, cell)
        if start == "fresh":
            names = [derived_name(nm, f"-n{g.burst}") for nm in names]
            for nm in names:
                self.provider.teardown(nm)   # a leftover of a killed run is not fresh
                # through the campaign: its deployed/deleted events let a resumed run delete a
                # fresh function a kill left behind
                self.campaign.deploy(nm, cfg)
        else:
            for nm in names:
                self.campaign.configure(nm, cfg)  # shared functions: memory etc. in place
        if start == "cold" and g.measure:
            for nm in names:
                self.provider.force_cold(nm)
        elif start == "expire" and g.measure:
            keep = float(getattr(self.settings, "keep_alive_s", 0) or 0)
            if not await self._sleep_until(time.time() + keep + 1.0):
                return "interrupted"
        arrival = dict(ld.get("arrival") or {})
        if arrival.get("process") == "exponential" and arrival.get("seed") is None:
            arrival["seed"] = int(self.campaign.row["seed"])  # recorded in the burst's schedule
            ld["arrival"] = arrival
        payload = json.dumps(cell.payload).encode()
        label = f"{g.cell_key} burst {g.burst}"
        pre = int(n if ld.get("preconnect", "burst") == "burst" else ld.get("preconnect") or 0)
        go = self.dispatcher == "go"
        try:
            if pre and not go:  # the Go dispatcher opens its own connections, one per member
                pc = await inv.preconnect(names[0], pre)
                if pc.get("failed") == pc.get("requested") and \
                        set(pc.get("errors") or {}) <= {"EndpointConnectionError"} and pc.get("errors"):
                    # nothing reached the endpoint: no function could run, so stop before
                    # recording a whole burst of refusals (as the sequential runner does)
                    self.campaign.event("endpoint_unreachable", {"burst": label, **pc})
                    raise Failure(f"the endpoint is unreachable ({pc['errors']}); nothing was sent "
                                  f"for {label}")
                if pc.get("failed"):
                    self.campaign.say(f"[yellow]note[/yellow]: {pc['failed']} of {pc['requested']} "
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
                attempt = self.store.next_burst_attempt(self.cid, g.cell_key, g.burst, kind)
                sched = describe(ld) if kind == "measure" else {"warm_pool": size}
                sched.update(members=len(members), split=len(members) < size or attempt > 1,
                             functions=names, start=start, dispatcher=self.dispatcher)
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
                self.store.begin_burst(self.cid, g.cell_key, g.burst, kind, attempt,
                               len(members), time.time_ns() + int(lead * 1e9), sched)
                if go:
                    out = await dispatch_go(
                        self.factory, members, payload, on_result=on_result, budget=budget,
                        stop=self.stop, member_field=ld.get("member_index"),
                        preconnect=-1 if pre >= len(members) else pre,
                        connect_timeout_s=getattr(self.settings, "connect_timeout_s", 10.0),
                        read_timeout_s=getattr(self.settings, "read_timeout_s", 960.0))
                else:
                    out = await dispatch(inv, members, payload, lead_s=lead, on_result=on_result,
                                         budget=budget, stop=self.stop,
                                         member_field=ld.get("member_index"))
                self.writer.flush()
                s = summarise(collected, len(members))
                s["schedule_start_ns"] = out["start_ns"]
                s["stopped"] = out["stopped"]
                s["dispatch"] = dispatch_detail(self.dispatcher, out)
                status = ("stopped" if out["stopped"] == "error_budget" else
                          "interrupted" if out["stopped"] else "complete")
                if out["stopped"] == "unreachable":
                    # no connection could be opened: nothing was sent (as the Python sender's
                    # DryRun check above)
                    self.store.end_burst(self.cid, g.cell_key, g.burst, kind, attempt,
                                         status=status, sent=0, recorded=0, first_send_ns=None,
                                         last_send_ns=None, detail=s)
                    ready = out.get("ready") or {}
                    self.campaign.event("endpoint_unreachable", {
                        "burst": label, "requested": ready.get("members"),
                        "failed": ready.get("connect_failed"), "errors": ready.get("connect_errors")})
                    raise Failure(f"the endpoint is unreachable ({ready.get('connect_errors')}); "
                                  f"nothing was sent for {label}")
                budget_hit = budget is not None and budget.exceeded
                if budget is not None:
                    s["error_budget"] = {"max_failed_fraction": budget.limit / max(budget.planned, 1),
                                         "failed": budget.failed, "exceeded": budget_hit}
                self.store.end_burst(self.cid, g.cell_key, g.burst, kind, attempt,
                             status=status, sent=out["sent"], recorded=len(collected),
                             first_send_ns=s["first_send_ns"], last_send_ns=s["last_send_ns"],
                             detail=s)
                self.summary.ran_now += len(collected)
                if kind == "measure":
                    self.campaign.say(burst_line(label + (f" (attempt {attempt})" if attempt > 1 else ""), s),
                                   soft_wrap=True, markup=False)
                if budget_hit:
                    self.campaign.event("error_budget_exceeded", {
                        "cell_key": g.cell_key, "burst": g.burst, "failed": budget.failed,
                        "planned": budget.planned, "errors": s["errors"],
                        "max_failed_fraction": float(eb.get("max_failed_fraction", 0.5))})
                    raise Failure(f"error budget exceeded in {label}: {budget.failed} of "
                                  f"{budget.planned} invocations failed ({s['errors']}); more than "
                                  f"{100 * float(eb.get('max_failed_fraction', 0.5)):g} % "
                                  "(load.error_budget.max_failed_fraction); the run stopped")
                if out["stopped"] == "dispatcher_died":
                    self.campaign.event("dispatcher_died", {"burst": label, "error": out.get("error"),
                                                            "recorded": len(collected)})
                    raise Failure(f"the burst dispatcher died during {label} ({out.get('error')}); "
                                  "members past their instant are recorded as MayHaveRun."
                                  "DispatcherDied (--resume --rerun-may-have-run sends them "
                                  "again), the rest are left for --resume")
                lost = [(m.function, m.row["order_index"], r) for m, r in collected
                        if may_have_run(r)]
                if lost:
                    # the whole burst is recorded (flushed above); stop before the next one
                    self.campaign.stop_may_have_run(lost, label)
                if out["stopped"] == "interrupted":
                    return "interrupted"
        finally:
            if start == "fresh":
                for nm in names:
                    try:
                        self.campaign.delete_function(nm)
                    except Exception as exc:  # noqa: BLE001
                        self.campaign.say(f"[yellow]warning[/yellow]: could not delete {nm}: {exc}")
        return "ok"


def dispatch_detail(dispatcher: str, out: dict) -> dict:
    """What a burst's summary records about its sender: which one, and for the Go dispatcher its
    connections, open files and memory."""
    d: dict = {"dispatcher": dispatcher}
    ready, done = out.get("ready") or {}, out.get("done") or {}
    for k in ("connected", "connect_failed", "connect_s", "fds"):
        if k in ready:
            d[k] = ready[k]
    if "max_rss_kb" in done:
        d["max_rss_kb"] = done["max_rss_kb"]
    if out.get("error"):
        d["error"] = out["error"]
    return d
