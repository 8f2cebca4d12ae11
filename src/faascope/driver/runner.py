"""The campaign runner: plan, deploy, invoke in the planned order, record every invocation durably.

Order of events (nothing is written before the spec and the plan are valid):

1. load and validate the spec, check the results file (new campaign, or ``--resume``);
2. plan (or, on resume, reload the recorded plan: same seed, same replications, same order);
3. create the campaign in the store (spec, hash, seed, plan, run order, version, machine);
4. deploy one function per configuration (``provider.settings.functions``), reusing existing ones;
5. run the pending planned invocations in order: wait for the block's start (time blocking),
   force a cold start where planned, invoke, write the record (its own fsynced transaction);
6. on completion mark the campaign complete and delete the functions (unless keep_functions).

Ctrl-C (or SIGTERM) once: finish the invocation in flight, record it, stop. Twice: abandon the
invocation in flight (nothing is recorded for it). Either way the store is consistent and
``faascope run SPEC --results FILE --resume`` continues with exactly the missing records.
"""
from __future__ import annotations

import hashlib
import json
import re
import secrets
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from faascope import __version__
from faascope.designs.plan import Cell, Plan, build_plan
from faascope.errors import BadInput, Failure
from faascope.providers.base import FunctionConfig, InvokeResult, Provider, make_provider
from faascope.specs.loader import LoadedSpec, load_spec
from faascope.store.sqlite import (
    ResultsStore,
    iso_local_from_ns,
    iso_utc_from_ns,
)

ProviderFactory = Callable[[LoadedSpec], Provider]


@dataclass
class RunSummary:
    results: Path
    campaign_id: int
    planned: int
    recorded: int
    ran_now: int
    statuses: dict[str, int]
    complete: bool
    interrupted: bool = False
    seed: int = 0
    factors: list[str] = field(default_factory=list)


class Interrupted(Exception):
    pass


def default_results_path(loaded: LoadedSpec) -> Path:
    return Path("results") / f"{loaded.spec.name}.db"


def function_name(prefix: str, spec_name: str, uid: str, identity: tuple) -> str:
    h = hashlib.sha1(json.dumps(identity, default=str).encode()).hexdigest()[:8]
    base = re.sub(r"[^A-Za-z0-9_-]", "-", spec_name)[:30]
    return f"{prefix}-{base}-{uid[:6]}-{h}"[:64]


def _factor_meta(loaded: LoadedSpec) -> list[dict]:
    return [{"name": f.name, "field": f"{f.section}.{f.field}",
             "boolean": all(isinstance(v, bool) for v in f.levels), "levels": f.levels}
            for f in loaded.factors]


def _cells_rows(plan: Plan) -> list[dict]:
    return [{"key": c.key, "index": c.index, "levels": c.levels,
             "function": c.function.model_dump(mode="json"), "payload": c.payload}
            for c in plan.cells]


class _StopFlag:
    """First Ctrl-C/SIGTERM: stop after the invocation in flight. Second: abandon it."""

    def __init__(self, say: Callable[[str], None]):
        self.stop = False
        self.say = say
        self._old: dict[int, Any] = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._old[sig] = signal.signal(sig, self._handler)
        return self

    def _handler(self, signum, frame):
        if self.stop:
            raise KeyboardInterrupt
        self.stop = True
        self.say("stopping after the invocation in flight (press Ctrl-C again to abandon it)")

    def __exit__(self, *exc):
        for sig, old in self._old.items():
            signal.signal(sig, old)
        return False


def run_campaign(spec_path: str | Path, results: str | Path | None = None, *, resume: bool = False,
                 replications: int | None = None, seed: int | None = None, force: bool = False,
                 provider_factory: Optional[ProviderFactory] = None, progress: bool = True,
                 console: Any = None) -> RunSummary:
    from rich.console import Console

    con = console or Console(stderr=True)
    spec_path = Path(spec_path)
    loaded = load_spec(spec_path)          # BadInput (exit 2) before anything is written
    spec_text = spec_path.read_text()
    settings = loaded.spec.provider.parsed_settings()
    from faascope.driver import bursts  # a spec with a load section runs bursts
    burst_spec = bursts.is_burst_spec(loaded)
    if burst_spec:
        bursts.check_burst_spec(loaded)
    run_rows = bursts.expand_runs if burst_spec else (lambda p: [r.as_dict() for r in p.runs])
    results = Path(results) if results else default_results_path(loaded)

    existing = None
    if results.exists():
        if results.is_dir():
            raise BadInput(f"{results} is a directory; give a file name", field="--results")
        try:
            probe = ResultsStore(results)
            existing = probe.campaign()
            probe.close()
        except Exception as exc:
            raise BadInput(f"{results} exists and is not a faascope results file ({exc})",
                           field="--results") from None
    if existing is not None and not resume:
        done = "complete" if existing["status"] == "complete" else existing["status"]
        raise BadInput(f"{results} already holds the campaign {existing['name']!r} ({done}); "
                       f"continue it with --resume, or choose another --results file",
                       field="--results")
    if resume and existing is None:
        raise BadInput(f"there is no campaign to resume in {results}; run without --resume to "
                       "start one", field="--resume")

    if existing is None:
        plan = build_plan(loaded, replications=replications, seed=seed)
        from faascope.designs.estimate import estimate
        results.parent.mkdir(parents=True, exist_ok=True)
        store = ResultsStore(results)
        uid = secrets.token_hex(4)
        cid = store.create_campaign(
            uid=uid, name=loaded.spec.name, spec_json=loaded.canonical(), spec_text=spec_text,
            spec_path=str(spec_path), spec_hash=loaded.spec_hash, seed=plan.seed,
            replications=plan.replications, plan_json=plan.to_json(estimate=estimate(plan)),
            factors=_factor_meta(loaded), provider=loaded.provider_kind, version=__version__,
            cells=_cells_rows(plan), runs=run_rows(plan))
        campaign = store.campaign()
    else:
        campaign = existing
        if replications is not None and replications != campaign["replications"]:
            raise BadInput(f"the campaign in {results} was planned with {campaign['replications']} "
                           f"replication(s); a resumed campaign keeps its plan (start a new "
                           f"--results file for {replications})", field="--replications")
        if seed is not None and seed != campaign["seed"]:
            raise BadInput(f"the campaign in {results} was planned with seed {campaign['seed']}; a "
                           "resumed campaign keeps its seed", field="--seed")
        plan = build_plan(loaded, replications=campaign["replications"], seed=campaign["seed"])
        store = ResultsStore(results)
        cid = campaign["id"]
        if campaign["spec_hash"] != loaded.spec_hash:
            if not force:
                store.close()
                raise BadInput(
                    f"the spec changed since the campaign in {results} was started (spec hash "
                    f"{campaign['spec_hash'][:12]} recorded, {loaded.spec_hash[:12]} now); restore "
                    "it, use a new --results file, or pass --force to continue with the new spec "
                    "(recorded invocations are kept)", field="SPEC")
            from faascope.designs.estimate import estimate
            store.replace_plan(cid, spec_json=loaded.canonical(), spec_text=spec_text,
                               spec_hash=loaded.spec_hash, plan_json=plan.to_json(estimate=estimate(plan)),
                               factors=_factor_meta(loaded), cells=_cells_rows(plan),
                               runs=run_rows(plan),
                               reason="resumed with --force after the spec changed")
            con.print("[yellow]warning[/yellow]: the spec changed; continuing with the new spec "
                      "(--force); earlier records are kept")
        store.event(cid, "resumed", {"pending": len(store.pending_runs(cid))})

    try:
        execute = bursts.execute_bursts if burst_spec else _execute
        return execute(loaded, plan, store, campaign, settings, results, spec_path,
                       provider_factory, progress, con)
    finally:
        store.close()


def _execute(loaded: LoadedSpec, plan: Plan, store: ResultsStore, campaign: dict, settings: Any,
             results: Path, spec_path: Path, provider_factory: Optional[ProviderFactory],
             progress: bool, con: Any) -> RunSummary:
    cid = campaign["id"]
    cells = plan.cells_by_key
    planned = store.planned_runs(cid)
    pending = store.pending_runs(cid)
    missing = {r["cell_key"] for r in pending} - set(cells)
    if missing:
        raise Failure(f"the recorded plan refers to cells the spec no longer has: {sorted(missing)[:3]}")
    strategy = getattr(settings, "functions", "per_config")
    prefix = getattr(settings, "function_prefix", "faascope")
    keep = getattr(settings, "keep_functions", False)

    def config_of(cell: Cell) -> FunctionConfig:
        return FunctionConfig.from_dict(cell.config)

    names: dict[str, str] = {}
    for key, cell in cells.items():
        names[key] = function_name(prefix, loaded.spec.name, campaign["uid"],
                                   config_of(cell).identity(strategy))
    summary = RunSummary(results=results, campaign_id=cid, planned=len(planned), recorded=0,
                         ran_now=0, statuses={}, complete=False, seed=campaign["seed"],
                         factors=[f.name for f in loaded.factors])
    resume_hint = (f"faascope run {spec_path} --results {results} --resume")

    if not pending:
        return _already_complete(store, campaign, summary)

    provider = provider_factory(loaded) if provider_factory else make_provider(
        loaded.provider_kind, settings)
    if hasattr(provider, "bind_campaign"):  # tags what it creates (faascope cleanup --campaign)
        provider.bind_campaign(campaign["uid"], loaded.spec.name)
    deployed: dict[str, FunctionConfig] = {}
    failure: Optional[Failure] = None
    say = lambda msg: con.print(msg)  # noqa: E731
    stop = _StopFlag(say)
    interrupted = False
    try:
        with stop:
            # deploy every function this run needs (first configuration each will run with)
            for r in pending:
                name = names[r["cell_key"]]
                if name not in deployed:
                    cfg = config_of(cells[r["cell_key"]])
                    t0 = time.perf_counter()
                    provider.deploy(name, cfg)
                    deployed[name] = cfg
                    store.event(cid, "deployed", {"function": name, "config": cfg.as_dict(),
                                                  "seconds": round(time.perf_counter() - t0, 3),
                                                  "provider": provider.describe()})
                if stop.stop:
                    raise Interrupted
            store.set_status(cid, "running")
            interrupted = _loop(plan, store, campaign, provider, pending, cells, names, deployed,
                                config_of, stop, progress, con, summary)
    except (KeyboardInterrupt, Interrupted):
        interrupted = True
    except Failure as exc:
        failure = exc
    finally:
        _settle(store, cid, summary, len(planned), lambda: len(planned) - summary.recorded)
        if summary.complete and not keep:
            for name in sorted(deployed):
                try:
                    provider.teardown(name)
                except Exception as exc:  # leave a note, the data are safe
                    con.print(f"[yellow]warning[/yellow]: could not delete function {name}: {exc}")
        provider.close()
    return _conclude(summary, failure, interrupted, results, resume_hint)


# The ends of a campaign run, shared by _execute and bursts.execute_bursts.
def _already_complete(store: ResultsStore, campaign: dict, summary: RunSummary) -> RunSummary:
    """Nothing is pending: the campaign is complete (marked so if it was not)."""
    cid = campaign["id"]
    summary.recorded = store.count(cid)
    summary.statuses = store.status_counts(cid)
    summary.complete = True
    if campaign["status"] != "complete":
        store.set_status(cid, "complete")
    return summary


def _settle(store: ResultsStore, cid: int, summary: RunSummary, planned: int,
            pending: Callable[[], int]) -> None:
    """After running (done, failed or interrupted): counts what is recorded and marks the
    campaign complete or interrupted, with an event; pending() is the interrupted event's count
    of what is left."""
    summary.recorded = store.count(cid)
    summary.statuses = store.status_counts(cid)
    summary.complete = summary.recorded >= planned and not store.pending_runs(cid)
    if summary.complete:
        store.set_status(cid, "complete")
        store.event(cid, "complete", {"records": summary.recorded})
    else:
        store.set_status(cid, "interrupted")
        store.event(cid, "interrupted", {"records": summary.recorded, "pending": pending()})


def _conclude(summary: RunSummary, failure: Optional[BaseException], interrupted: bool,
              results: Path, resume_hint: str) -> RunSummary:
    """The summary of a finished run, or a Failure saying what is recorded and how to resume."""
    if failure is not None:
        raise Failure(f"{getattr(failure, 'message', failure)}\n{summary.recorded} of "
                      f"{summary.planned} invocations are recorded in {results}; once fixed, "
                      f"continue with: {resume_hint}")
    summary.interrupted = interrupted and not summary.complete
    if summary.interrupted:
        raise Failure(f"interrupted: {summary.recorded} of {summary.planned} invocations are "
                      f"recorded in {results}; continue with: {resume_hint}")
    return summary


def _loop(plan: Plan, store: ResultsStore, campaign: dict, provider: Provider, pending: list[dict],
          cells: dict[str, Cell], names: dict[str, str], deployed: dict[str, FunctionConfig],
          config_of: Callable[[Cell], FunctionConfig], stop: _StopFlag, progress: bool, con: Any,
          summary: RunSummary) -> bool:
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn,
                               TextColumn, TimeElapsedColumn, TimeRemainingColumn)
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task):
            s = task.speed
            return Text(f"{s:.2f} inv/s" if s else "– inv/s")

    cid = campaign["id"]
    total = len(store.planned_runs(cid))
    done_before = total - len(pending)
    errors = sum(v for k, v in store.status_counts(cid).items() if k != "ok")
    cols = [TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            RateColumn(), TextColumn("{task.fields[errors]} errors"), TimeElapsedColumn(),
            TextColumn("ETA"), TimeRemainingColumn()]
    interval = plan.block_interval_s or 0.0
    t_anchor = float(campaign["started_at_unix"])
    with Progress(*cols, console=con, disable=not progress, transient=False) as bar:
        task = bar.add_task(campaign["name"], total=total, completed=done_before, errors=errors)
        for run in pending:
            if stop.stop:
                return True
            # time blocking: block b starts no earlier than start + b * interval
            if run["block"] > 0 and interval > 0:
                start_at = t_anchor + run["block"] * interval
                while time.time() < start_at:
                    if stop.stop:
                        return True
                    bar.update(task, description=f"{campaign['name']} (waiting for block "
                                                  f"{run['block']})")
                    time.sleep(min(1.0, max(0.0, start_at - time.time())))
                bar.update(task, description=campaign["name"])
            cell = cells[run["cell_key"]]
            name = names[run["cell_key"]]
            cfg = config_of(cell)
            if deployed.get(name) != cfg:  # shared functions: change memory etc. in place
                provider.update_configuration(name, cfg)
                deployed[name] = cfg
            if run["force_cold"]:
                provider.force_cold(name)
            before_ns = time.time_ns()
            result = provider.invoke(name, cell.payload)
            if result.status == "client_error" and result.error_type in NEVER_REACHED:
                # The request never left this machine, so no function ran: there is nothing to
                # record as a measurement, and every later run would fail the same way. Stop,
                # keep the incident in the campaign's events, and let --resume run it again.
                store.event(cid, "endpoint_unreachable", {"function": name, "order_index": run["order_index"],
                                                          "error_type": result.error_type,
                                                          "error": result.error_message})
                raise Failure(f"the endpoint is unreachable ({result.error_type}: {result.error_message}); "
                              "nothing was recorded for that invocation")
            rec = _record(cid, run, cell, name, cfg, result, before_ns)
            store.record(rec)
            summary.ran_now += 1
            if result.status != "ok":
                errors += 1
            bar.update(task, advance=1, errors=errors)
    return False


#: client errors raised before a request reached the endpoint (connection refused, DNS, connect
#: timeout): the function cannot have run. A read timeout or a dropped connection is different:
#: the function may have run, so those are recorded as errors.
NEVER_REACHED = {"EndpointConnectionError", "ConnectTimeoutError"}


def _record(cid: int, run: dict, cell: Cell, name: str, cfg: FunctionConfig, res: InvokeResult,
            before_ns: int) -> dict:
    t0 = res.send_ns or before_ns
    t1 = res.end_ns or time.time_ns()
    return {
        "campaign_id": cid,
        "cell_key": run["cell_key"],
        "levels_json": json.dumps(cell.levels),
        "replication": run["replication"],
        "kind": run["kind"],
        "warmup": int(run["kind"] == "warmup"),
        "order_index": run["order_index"],
        "block": run["block"],
        "status": res.status,
        "function_name": name,
        "config_json": json.dumps(cfg.as_dict()),
        "cold_forced": int(bool(run["force_cold"])),
        "client_send_ns": res.send_ns,
        "client_headers_ns": res.headers_ns,
        "client_end_ns": res.end_ns,
        "client_latency_s": res.client_latency_s,
        "client_headers_s": res.client_headers_s,
        "attempts": res.attempts,
        "retries": res.retries,
        "response_json": json.dumps(res.response) if res.response is not None else None,
        "function_error": res.function_error,
        "error_type": res.error_type,
        "error_message": (res.error_message or res.raw_payload),
        "log_tail": res.log_tail,
        "request_id": res.request_id,
        "platform_json": json.dumps(res.platform) if res.platform else None,
        "started_at": iso_utc_from_ns(t0),
        "ended_at": iso_utc_from_ns(t1),
        "started_at_local": iso_local_from_ns(t0),
    }
