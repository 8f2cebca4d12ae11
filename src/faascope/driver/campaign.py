"""A campaign's lifecycle, owned in one place: open (create or resume), deploy, record, stop,
settle, conclude, tear down.

How the pending invocations are sent is an executor's business (:mod:`faascope.driver.sequential`
one at a time, :mod:`faascope.driver.bursts` in bursts); an executor sees the campaign only
through this class's public methods, and the campaign never looks inside an executor:

    campaign = Campaign.open(loaded, spec_path, results, resume=...)
    summary = campaign.execute(executor)      # executor.run(campaign)

Order of events (nothing is written before the spec and the plan are valid):

1. check the results file (new campaign, or ``--resume``);
2. plan (or, on resume, rebuild the recorded plan: same seed, same replications, same order);
3. create the campaign in the store (spec, hash, seed, plan, run order, version, machine);
4. the executor deploys the functions it needs (``campaign.deploy``) and runs the pending
   invocations, recording each durably;
5. settle: mark the campaign complete or interrupted; delete the functions when complete
   (unless ``keep_functions``): every function a ``deployed`` event names and no ``deleted``
   event does, so a resumed run deletes those of earlier runs too, and resuming a campaign
   killed after its last record runs the teardown it missed.

Ctrl-C (or SIGTERM) once: finish what is in flight, record it, stop. Twice: abandon it (nothing
is recorded for it). Either way the store is consistent and ``faascope run SPEC --results FILE
--resume`` continues with exactly the missing records.
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
from typing import Any, Callable, Optional, Protocol

from faascope import __version__
from faascope.designs.cost import deployment_rows
from faascope.designs.estimate import estimate
from faascope.driver.adaptive import add_round
from faascope.designs.plan import Cell, Plan, build_plan
from faascope.designs.slots import recorded_anchor
from faascope.driver.provenance import provenance
from faascope.errors import BadInput, Failure
from faascope.provider_kinds import PROVIDER_KINDS
from faascope.providers.base import FunctionConfig, Provider
from faascope.providers.deployments import DeploymentProviders
from faascope.providers.invocation import MAY_HAVE_RUN, NEVER_SENT, InvokeResult
from faascope.providers.packaging import package_sha256
from faascope.specs.loader import LoadedSpec
from faascope.standins.wiring import open_provider
from faascope.analysis.host_bound import host_bound_cells
from faascope.standins.needs import needs_of, uses_payloads
from faascope.store.reader import NotAResultsFile, ResultsFile
from faascope.store.schema import HOST_BOUND_EVENT, HOST_CAPACITY_EVENT, MAY_HAVE_RUN_STOP_EVENT
from faascope.store.timestamps import iso_local_from_ns, iso_utc_from_ns
from faascope.store.writer import ResultsDiskFull, ResultsStore

ProviderFactory = Callable[[LoadedSpec], Provider]
#: a plan's planned_runs rows (an executor's: one per invocation slot)
RunRows = Callable[[Plan], list[dict]]

#: client errors raised before a request reached the endpoint (connection refused, DNS, connect
#: timeout) at every attempt: the function cannot have run, so nothing is recorded and the run
#: stops. A read timeout or a dropped connection after the request was sent is different: the
#: function may have run, so the provider names it ``MayHaveRun.<error>`` and it is recorded as a
#: client_error (docs/reliability.md). botocore used to retry a dropped call once by default and
#: report the second attempt's "connection refused", which hid a call that had run.
NEVER_REACHED = set(NEVER_SENT)


def may_have_run(res: InvokeResult) -> bool:
    """A client error of a call whose request may have reached the function (``MayHaveRun.*``):
    recorded, and the run stops there (:meth:`Campaign.stop_may_have_run`)."""
    return res.status == "client_error" and str(res.error_type or "").startswith(MAY_HAVE_RUN)


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
    #: planned invocations of a periodic campaign's missed slots (never run, so not pending)
    missed: int = 0
    #: planned runs appended to an existing campaign by this command (top-up rounds)
    added: int = 0


class Interrupted(Exception):
    """The user asked to stop (first Ctrl-C) at a point where nothing is in flight."""


class Executor(Protocol):
    """Sends a campaign's pending invocations: deploys what it needs (``campaign.deploy``),
    records every result through the campaign, adds to ``campaign.summary.ran_now``, checks
    ``campaign.stop`` between invocations and raises :class:`Interrupted` (or returns) when it
    is set."""

    def run(self, campaign: "Campaign") -> None: ...


def needs_payloads(cells: list[Cell]) -> list[dict]:
    """What the cells' stand-ins are chosen from: the agent's payloads, and for a user's own
    function (spec ``function.code``) the stand-ins it names in ``uses`` (its event says
    nothing about them)."""
    out: list[dict] = []
    for c in cells:
        code = c.function.code
        out += uses_payloads(code.uses) if code is not None else [c.payload]
    return out


def default_results_path(loaded: LoadedSpec) -> Path:
    return Path("results") / f"{loaded.spec.name}.db"


def function_name(prefix: str, spec_name: str, uid: str, identity: tuple) -> str:
    """A Lambda-valid function name (64 characters at most) unique to the campaign and the
    function configuration's identity."""
    h = hashlib.sha1(json.dumps(identity, default=str).encode()).hexdigest()[:8]
    base = re.sub(r"[^A-Za-z0-9_-]", "-", spec_name)[:30]
    return f"{prefix}-{base}-{uid[:6]}-{h}"[:64]


def factor_meta(loaded: LoadedSpec) -> list[dict]:
    return [{"name": f.name, "field": f"{f.section}.{f.field}",
             "boolean": all(isinstance(v, bool) for v in f.levels), "levels": f.levels}
            for f in loaded.factors]


def cell_rows(plan: Plan) -> list[dict]:
    return [{"key": c.key, "index": c.index, "levels": c.levels,
             "function": c.function.model_dump(mode="json"), "payload": c.payload}
            for c in plan.cells]


def sequential_runs(plan: Plan) -> list[dict]:
    """The planned_runs rows of a plan run one invocation per run."""
    return [r.as_dict() for r in plan.runs]


class StopFlag:
    """First Ctrl-C/SIGTERM: stop after what is in flight. Second: abandon it."""

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


class Campaign:
    """One campaign in one results file, with the provider that runs it."""

    def __init__(self, loaded: LoadedSpec, plan: Plan, store: ResultsStore, row: dict,
                 results: Path, spec_path: Path, *, provider_factory: Optional[ProviderFactory],
                 progress: bool, console: Any):
        self.loaded, self.plan, self.store, self.row = loaded, plan, store, row
        self.results, self.spec_path = results, spec_path
        self.settings = loaded.spec.provider.parsed_settings()
        self.progress, self.console = progress, console
        self.provider_factory = provider_factory
        #: leave a local platform this run starts running at the end (run --keep-platform)
        self.keep_platform = False
        #: run again the planned runs whose record is a MayHaveRun client error, each new record
        #: replacing the old in one transaction (run --resume --rerun-may-have-run)
        self.rerun_may_have_run = False
        self.provider: Optional[Provider] = None
        self.deployed: dict[str, FunctionConfig] = {}
        self.stop = StopFlag(self.say)
        self.settle_note = ""
        self.summary = RunSummary(results=results, campaign_id=self.id, planned=0, recorded=0,
                                  ran_now=0, statuses={}, complete=False, seed=int(row["seed"]),
                                  factors=[f.name for f in loaded.factors])

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, loaded: LoadedSpec, spec_path: Path, results: Optional[Path], *,
             run_rows: RunRows, resume: bool = False, replications: Optional[int] = None,
             seed: Optional[int] = None, force: bool = False, add_replications: int = 0,
             provider_factory: Optional[ProviderFactory] = None, progress: bool = True,
             console: Any = None, rerun_may_have_run: bool = False) -> "Campaign":
        """A new campaign in ``results``, or (``resume``) the one it holds, checked against the
        spec; BadInput (exit 2) for every refusal, before anything is written.
        ``rerun_may_have_run`` (resume only): the planned runs recorded as MayHaveRun client
        errors are pending again."""
        results = Path(results) if results else default_results_path(loaded)
        existing = _existing_campaign(results)
        if existing is not None and not resume:
            done = "complete" if existing["status"] == "complete" else existing["status"]
            raise BadInput(f"{results} already holds the campaign {existing['name']!r} ({done}); "
                           f"continue it with --resume, or choose another --results file",
                           field="--results")
        if resume and existing is None:
            raise BadInput(f"there is no campaign to resume in {results}; run without --resume "
                           "to start one", field="--resume")
        if rerun_may_have_run and existing is None:
            raise BadInput("--rerun-may-have-run reruns recorded invocations of a campaign; use "
                           "it with --resume on an existing results file",
                           field="--rerun-may-have-run")
        if existing is not None:
            # before anything is written into it: a damaged file is refused (exit 2, with what
            # is readable and how to recover it), never written further
            with ResultsStore(results) as check:
                check.check_intact()
        kw = dict(provider_factory=provider_factory, progress=progress, console=console)
        if existing is None:
            plan = build_plan(loaded, replications=replications, seed=seed)
            return cls.create(loaded, plan, results, spec_path, run_rows, **kw)
        if replications is not None and replications < existing["replications"]:
            raise BadInput(f"the campaign in {results} already has {existing['replications']} "
                           f"replication(s); records are never dropped, so a continued campaign "
                           f"cannot have fewer (start a new --results file for {replications})",
                           field="--replications")
        if seed is not None and seed != existing["seed"]:
            raise BadInput(f"the campaign in {results} was planned with seed {existing['seed']}; "
                           "a resumed campaign keeps its seed", field="--seed")
        if existing["spec_hash"] != loaded.spec_hash and not force:
            raise BadInput(
                f"the spec changed since the campaign in {results} was started (spec hash "
                f"{existing['spec_hash'][:12]} recorded, {loaded.spec_hash[:12]} now); restore "
                "it, use a new --results file, or pass --force to continue with the new spec "
                "(recorded invocations are kept)", field="SPEC")
        plan = build_plan(loaded, replications=existing["replications"], seed=existing["seed"],
                          anchor_unix=recorded_anchor(existing.get("plan_json")))
        campaign = cls(loaded, plan, ResultsStore(results), existing, results, spec_path, **kw)
        campaign.store.upgrade_schema()  # a file of an earlier version: add what this one records
        if existing["spec_hash"] != loaded.spec_hash:
            campaign.replace_plan(loaded, plan, run_rows,
                                  reason="resumed with --force after the spec changed")
            campaign.say("[yellow]warning[/yellow]: the spec changed; continuing with the new "
                         "spec (--force); earlier records are kept")
        # a burst cut by the kill stays "running" in the bursts table unless closed here; its
        # missing members run again as a new attempt
        cut = campaign.store.close_running_bursts(campaign.id)
        campaign.rerun_may_have_run = rerun_may_have_run
        rerun = len(campaign._unrecorded()) - len(campaign.store.pending_runs(campaign.id)) \
            if rerun_may_have_run else 0
        campaign.event("resumed", {"pending": len(campaign.pending()),
                                   **({"bursts_interrupted": cut} if cut else {}),
                                   **({"rerun_may_have_run": rerun} if rerun_may_have_run else {})})
        if rerun_may_have_run:
            campaign.say(f"rerunning {rerun} invocation(s) recorded as MayHaveRun "
                         "(--rerun-may-have-run); each old record is kept in a "
                         "may_have_run_rerun event")
        campaign.top_up(replications, add_replications)
        return campaign

    def top_up(self, replications: Optional[int], add: int) -> None:
        """Append a round that brings every cell to ``replications`` measured replications, or
        adds ``add`` to each (``run --replications N`` above the recorded count,
        ``--add-replications N``); every earlier record stays."""
        if not add and (replications is None or replications <= self.row["replications"]):
            return
        if any(c.load is not None for c in self.plan.cells):
            raise BadInput("a burst campaign cannot be topped up yet; start a new --results "
                           "file with more replications", field="--add-replications")
        have: dict[str, int] = {}
        for r in self.planned():
            if r["kind"] == "measure":
                have[r["cell_key"]] = have.get(r["cell_key"], 0) + 1
        if add:
            wanted = {k: add for k in self.plan.cells_by_key}
            reason = f"--add-replications {add}"
        else:
            wanted = {k: replications - have.get(k, 0) for k in self.plan.cells_by_key}
            reason = f"--replications {replications}"
        self.summary.added = add_round(self, wanted, reason)
        self.row = self.store.campaign()
        self.say(f"added {self.summary.added} planned run(s) ({reason}); earlier records kept")

    @classmethod
    def create(cls, loaded: LoadedSpec, plan: Plan, results: Path, spec_path: Path,
               run_rows: RunRows, *, with_estimate: bool = True, **kw) -> "Campaign":
        """Record a new campaign (spec, plan, run order) in a new results file."""
        try:
            results.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a read-only file system, no permission
            raise BadInput(f"cannot create the directory of the results file {results}: "
                           f"{exc.strerror or exc}", field="--results") from None
        store = ResultsStore(results)
        store.create_campaign(
            uid=secrets.token_hex(4), name=loaded.spec.name, spec_json=loaded.canonical(),
            spec_text=spec_path.read_text(), spec_path=str(spec_path),
            spec_hash=loaded.spec_hash, seed=plan.seed, replications=plan.design_replications,
            plan_json=plan.to_json(estimate=estimate(plan)) if with_estimate else plan.to_json(),
            factors=factor_meta(loaded), provider=loaded.provider_kind, version=__version__,
            cells=cell_rows(plan), runs=run_rows(plan), deployments=deployment_rows(loaded))
        return cls(loaded, plan, store, store.campaign(), results, spec_path, **kw)

    def replace_plan(self, loaded: LoadedSpec, plan: Plan, run_rows: RunRows, *, reason: str,
                     with_estimate: bool = True) -> None:
        """Continue with another plan (a changed spec, or a plan grown by ``stagger suggest``):
        the recorded invocations stay."""
        self.store.replace_plan(
            self.id, spec_json=loaded.canonical(), spec_text=self.spec_path.read_text(),
            spec_hash=loaded.spec_hash,
            plan_json=plan.to_json(estimate=estimate(plan)) if with_estimate else plan.to_json(),
            factors=factor_meta(loaded), cells=cell_rows(plan), runs=run_rows(plan),
            reason=reason, deployments=deployment_rows(loaded))
        self.loaded, self.plan = loaded, plan
        self.summary.factors = [f.name for f in loaded.factors]

    # ------------------------------------------------------------------ what it is
    @property
    def id(self) -> int:
        return int(self.row["id"])

    @property
    def uid(self) -> str:
        return str(self.row["uid"])

    @property
    def name(self) -> str:
        return str(self.row["name"])

    @property
    def started_at_unix(self) -> float:
        return float(self.row["started_at_unix"])

    @property
    def resume_hint(self) -> str:
        return f"faascope run {self.spec_path} --results {self.results} --resume"

    def planned(self) -> list[dict]:
        return self.store.planned_runs(self.id)

    def pending(self) -> list[dict]:
        """The planned runs without a record, in run order; Failure when the recorded plan names
        cells the spec no longer has."""
        pending = self._open_runs()
        missing = {r["cell_key"] for r in pending} - set(self.plan.cells_by_key)
        if missing:
            raise Failure(f"the recorded plan refers to cells the spec no longer has: "
                          f"{sorted(missing)[:3]}")
        return pending

    def _open_runs(self) -> list[dict]:
        """The planned runs without a record, less those of a periodic campaign's missed slots
        (recorded as missed, they are never run)."""
        pending = self._unrecorded()
        missed = self.store.missed_slots(self.id) if self.plan.schedule is not None else set()
        return [r for r in pending if r["block"] not in missed] if missed else pending

    def _unrecorded(self) -> list[dict]:
        """The planned runs without a record (with --rerun-may-have-run: or with a MayHaveRun
        record)."""
        return self.store.pending_runs(self.id, MAY_HAVE_RUN if self.rerun_may_have_run else None)

    @property
    def supersede(self) -> Optional[str]:
        """The error-type prefix of the records a new record of the same planned run replaces
        (``MayHaveRun.`` with --rerun-may-have-run, else none: a duplicate is refused)."""
        return MAY_HAVE_RUN if self.rerun_may_have_run else None

    def missed_runs(self) -> int:
        """Planned runs of missed slots that have no record."""
        return len(self._unrecorded()) - len(self._open_runs())

    def base_function_names(self) -> dict[str, str]:
        """Each cell's function name: one function per configuration (``functions:
        per_config``), or as the provider settings' strategy groups them."""
        strategy = getattr(self.settings, "functions", "per_config")
        prefix = getattr(self.settings, "function_prefix", "faascope")
        return {key: function_name(prefix, self.loaded.spec.name, self.uid,
                                   FunctionConfig.from_dict(c.config).identity(strategy))
                for key, c in self.plan.cells_by_key.items()}

    def say(self, msg: str, **kw) -> None:
        self.console.print(msg, **kw)

    def say_plain(self, msg: str) -> None:
        """Say a message that may hold paths (no console markup read in it)."""
        self.console.print(msg, markup=False, soft_wrap=True)

    def event(self, kind: str, detail: Optional[dict] = None) -> None:
        self.store.event(self.id, kind, detail)

    # ------------------------------------------------------------------ functions
    def open_provider(self) -> Provider:
        """The provider, made once; it tags what it creates with the campaign (``faascope
        cleanup --campaign``)."""
        if self.provider is None:
            # a local campaign's stand-ins start here and stop when the provider closes
            if self.provider_factory:
                self.provider = self.provider_factory(self.loaded)
            elif self.loaded.deployments:
                self.provider = self._deployment_providers()
            else:
                self.provider = open_provider(self.loaded.provider_kind, self.settings,
                                              needs_payloads(self.plan.cells), self.event,
                                              profiles=[c.config.get("profile") for c in self.plan.cells],
                                              image_sizes=[c.config.get("image_size") for c in self.plan.cells],
                                              keep_platform=self.keep_platform, say=self.say_plain)
            if isinstance(self.provider, DeploymentProviders):
                names = self.base_function_names()
                for key, cell in self.plan.cells_by_key.items():
                    self.provider.assign(names[key], cell.deployment)
            self.provider.bind_campaign(self.uid, self.loaded.spec.name)
            self.say(f"endpoint: {endpoint_of(self.provider.describe())}")
        return self.provider

    def _deployment_providers(self) -> DeploymentProviders:
        """One provider per deployment the plan's cells use; deployments of one kind and the
        same settings share one (two local profiles: one platform, one set of stand-ins), made
        for the payloads of all the cells it runs."""
        deployments = self.loaded.deployments
        group = {name: json.dumps([d.kind, d.settings], sort_keys=True, default=str)
                 for name, d in deployments.items()}
        payloads: dict[str, list[dict]] = {}
        profiles: dict[str, list] = {}
        sizes: dict[str, list] = {}
        for c in self.plan.cells:
            payloads.setdefault(group[c.deployment], []).extend(needs_payloads([c]))
            profiles.setdefault(group[c.deployment], []).append(c.config.get("profile"))
            sizes.setdefault(group[c.deployment], []).append(c.config.get("image_size"))
        made: dict[str, Provider] = {}
        try:
            for name, dep in deployments.items():
                key = group[name]
                if key in payloads and key not in made:
                    made[key] = open_provider(dep.kind, dep.parsed_settings(), payloads[key],
                                              self.event, profiles=profiles[key], image_sizes=sizes[key],
                                              keep_platform=self.keep_platform, say=self.say_plain)
        except BaseException:
            for p in made.values():
                p.close()
            raise
        return DeploymentProviders({name: made[group[name]] for name in deployments
                                    if group[name] in made})

    def deploy_pending(self, pending: list[dict]) -> dict[str, str]:
        """Deploy every function the pending runs need (the first configuration each will run
        with); the cells' base function names. Interrupted when asked to stop."""
        cells = self.plan.cells_by_key
        names = self.base_function_names()
        for r in pending:
            self.deploy(names[r["cell_key"]], FunctionConfig.from_dict(cells[r["cell_key"]].config))
            if self.stop.stop:
                raise Interrupted
        return names

    def deploy(self, name: str, config: FunctionConfig) -> None:
        """Deploy a function the campaign runs (once; deleted when the campaign completes)."""
        if name in self.deployed:
            return
        code_sha = self._same_package(name, config)
        provider = self.open_provider()
        t0 = time.perf_counter()
        provider.deploy(name, config)
        self.deployed[name] = config
        detail = {"function": name, "config": config.as_dict(),
                  "seconds": round(time.perf_counter() - t0, 3),
                  "provider": provider.describe_function(name)}
        if code_sha is not None:
            detail["code_sha256"] = code_sha
        self.event("deployed", detail)

    def _same_package(self, name: str, config: FunctionConfig) -> Optional[str]:
        """A user's function's package digest (None for the agent), refused when the campaign
        deployed other code under this name before: one campaign measures one package, and a
        package edited between a run and its --resume would mix two programs' times in one
        cell without a word."""
        if not config.user_code:
            return None
        sha = package_sha256(config.code)
        earlier = [d.get("code_sha256") for kind, d in self.store.events(self.id, ("deployed",))
                   if d.get("function") == name and d.get("code_sha256")]
        if earlier and earlier[-1] != sha:
            raise BadInput(f"the package {config.code} changed since this campaign deployed it "
                           f"(SHA-256 {earlier[-1][:12]}… then, {sha[:12]}… now); a campaign "
                           "measures one package: restore it, or run the new one into a new "
                           "results file", field="function.code.path")
        return sha

    def configure(self, name: str, config: FunctionConfig) -> None:
        """Give a deployed function this configuration (in place: shared functions change
        memory etc. between cells)."""
        if self.deployed.get(name) != config:
            self.open_provider().update_configuration(name, config)
            self.deployed[name] = config

    def functions_left(self) -> list[str]:
        """The functions this campaign deployed and has not deleted. Read from its events, not
        only from this run's memory: a run killed before its teardown (or a resumed run that
        deployed only what its pending runs needed) leaves functions of earlier runs."""
        alive: set[str] = set(self.deployed)
        for kind, detail in self.store.events(self.id, ("deployed", "deleted")):
            name = detail.get("function")
            if name:
                (alive.add if kind == "deployed" else alive.discard)(name)
        return sorted(alive)

    def delete_function(self, name: str) -> None:
        """Delete one of the campaign's functions, with a ``deleted`` event (idempotent: the
        providers treat a function that is already gone as deleted)."""
        self.open_provider().teardown(name)
        self.deployed.pop(name, None)
        self.event("deleted", {"function": name})

    def teardown(self) -> None:
        """Delete every function the campaign deployed and has not deleted, in any run."""
        for name in self.functions_left():
            try:
                self.delete_function(name)
            except Exception as exc:  # leave a note, the data are safe; --resume retries it
                self.say(f"[yellow]warning[/yellow]: could not delete function {name}: {exc}")

    # ------------------------------------------------------------------ records
    def record_row(self, run: dict, cell: Cell, name: str, cfg: FunctionConfig,
                   res: InvokeResult, before_ns: int) -> dict:
        """The invocations row of one result (``before_ns``: when it was due, for a result that
        has no send time)."""
        t0 = res.send_ns or before_ns
        t1 = res.end_ns or time.time_ns()
        return {
            "campaign_id": self.id,
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
            "deployment": cell.deployment or self.loaded.provider_kind,
        }

    def record(self, run: dict, cell: Cell, name: str, cfg: FunctionConfig, res: InvokeResult,
               before_ns: int) -> None:
        """Record one result durably (its own fsynced transaction)."""
        if res.status == "client_error" and res.error_type in NEVER_REACHED:
            # The request never left this machine, so no function ran: there is nothing to
            # record as a measurement, and every later run would fail the same way. Stop, keep
            # the incident in the campaign's events, and let --resume run it again.
            self.event("endpoint_unreachable", {"function": name,
                                                "order_index": run["order_index"],
                                                "error_type": res.error_type,
                                                "error": res.error_message})
            raise Failure(f"the endpoint is unreachable ({res.error_type}: "
                          f"{res.error_message}); nothing was recorded for that invocation")
        self.store.record(self.record_row(run, cell, name, cfg, res, before_ns), self.supersede)
        self.summary.ran_now += 1
        if may_have_run(res):
            self.stop_may_have_run([(name, run["order_index"], res)])

    def stop_may_have_run(self, calls: list[tuple[str, int, InvokeResult]],
                          where: str = "") -> None:
        """Stop the run at its first record (or burst) of a call that may have run
        (``MayHaveRun.*``, already recorded durably): a ``may_have_run_stop`` event, then a
        Failure saying how to continue and how to rerun such calls.

        One such record stops the run, even a single read timeout of a slow function: a platform
        that dies behind a proxy turns every later call into one (186 of 256 in about a second,
        issue #29), and telling that apart from one slow call would take guessing. The message
        says so, and names read_timeout_s for a function that is just slow."""
        name, order, res = calls[0]
        self.event(MAY_HAVE_RUN_STOP_EVENT, {
            "function": name, "order_index": order, "error_type": res.error_type,
            "error": res.error_message, "count": len(calls),
            **({"burst": where} if where else {}),
            "order_indexes": [c[1] for c in calls][:100]})
        many = f" ({len(calls)} in {where})" if len(calls) > 1 else (f" ({where})" if where else "")
        raise Failure(
            f"a call may have run but its reply was lost{many}: {res.error_type}: "
            f"{res.error_message} (function {name}). It is recorded as a client_error, and the "
            f"run stops at the first such record: a platform that dies behind a proxy turns "
            f"every later call into one. If the function is only slow, raise "
            f"provider.settings.read_timeout_s. --resume runs the invocations not yet run; "
            f"add --rerun-may-have-run to run the MayHaveRun ones again (each new record "
            f"replaces the old, which is kept in a may_have_run_rerun event)")

    # ------------------------------------------------------------------ running
    def execute(self, executor: Executor,
                rounds: Optional[Callable[["Campaign"], bool]] = None) -> RunSummary:
        """Run the pending invocations with ``executor``, then settle and conclude: the summary
        of a finished run, or a Failure saying what is recorded and how to resume.

        ``rounds`` (adaptive replication, :mod:`faascope.driver.adaptive`): called when nothing
        is pending; True when it appended a round of runs, which then run too."""
        self.summary.planned = len(self.planned())
        if not self.pending() and not (rounds is not None and rounds(self)):
            return self._already_complete()
        failure: Optional[BaseException] = None
        interrupted = False
        # The stop flag covers the deploy, the settling and the teardown too: a signal there
        # asks to stop (a second one abandons, and the teardown resumes with the campaign)
        # instead of killing the process halfway with the default handler.
        with self.stop:
            try:
                self.open_provider()
                self.record_provenance("start")
                executor.run(self)
                while rounds is not None and not self.stop.stop and rounds(self):
                    executor.run(self)
                interrupted = self.stop.stop
            except (KeyboardInterrupt, Interrupted):
                interrupted = True
            except (Failure, BadInput) as exc:
                failure = exc
            finally:
                self._settle()
                if self.summary.complete and not getattr(self.settings, "keep_functions", False):
                    self.teardown()
                self.close_provider()
            if isinstance(failure, BadInput):
                raise failure
            return self._conclude(failure, interrupted)

    def record_host_bound(self) -> None:
        """A ``host_bound`` event (a local campaign): per cell and stand-in it uses, the
        aggregate demand against the capacity probed at the start (if the campaign used
        stand-ins), which cells the host rather than the modelled cloud bounded, and where the
        CPU quotas of the cell's running instances promised more than the host's CPUs
        (faascope.analysis.host_bound)."""
        if not PROVIDER_KINDS[self.loaded.provider_kind].local:
            return   # on a cloud, instances run on machines of their own
        with ResultsFile(self.results) as rf:
            events = rf.campaign_meta()["events"]
            probes = [e for e in events if e["kind"] == HOST_CAPACITY_EVENT]
            df = rf.flat(include_warmups=False)
        capacity = json.loads(probes[-1]["detail_json"] or "{}") if probes else {}
        uses = {c.key: sorted(needs_of(needs_payloads([c])).kinds) for c in self.plan.cells}
        try:
            detail = host_bound_cells(df, uses, capacity)
        except (ValueError, KeyError, TypeError) as exc:
            # a verdict that cannot be made is said, not guessed; the records are unaffected
            detail = {"error": f"{type(exc).__name__}: {exc}"}
        self.event(HOST_BOUND_EVENT, detail)

    def record_provenance(self, phase: str) -> None:
        """A ``provenance`` event: what could explain drift between runs (machine load, CPU,
        kernel, versions, region, price and calibration tables), at a run's start and end."""
        self.event("provenance", provenance(phase, self.loaded, self.provider))

    def set_running(self) -> None:
        self.store.set_status(self.id, "running")

    def close_provider(self) -> None:
        if self.provider is not None:
            self.provider.close()

    def close(self) -> None:
        self.store.close()

    def _already_complete(self) -> RunSummary:
        """Nothing is pending: finish what a run killed after its last record left undone. The
        teardown is part of the campaign and resumes like the rest (functions deployed and not
        deleted, found in the events); the status and the ``complete`` event are written when
        missing, so a campaign has exactly one ``complete`` event however often it resumes."""
        s = self.summary
        s.recorded = self.store.count(self.id)
        s.statuses = self.store.status_counts(self.id)
        s.missed = self.missed_runs()
        s.complete = True
        if not getattr(self.settings, "keep_functions", False) and self.functions_left():
            try:
                self.teardown()
            finally:
                self.close_provider()
        if self.row["status"] != "complete":
            self.store.set_status(self.id, "complete")
        if not self.store.events(self.id, ("complete",)):
            self.event("complete", {"records": s.recorded})
        return s

    def _settle(self) -> None:
        """After running (done, failed or interrupted): count what is recorded and mark the
        campaign complete or interrupted, with an event."""
        s = self.summary
        s.recorded = self.store.count(self.id)
        s.statuses = self.store.status_counts(self.id)
        pending = len(self._open_runs())
        s.missed = self.missed_runs()
        s.complete = s.recorded + s.missed >= s.planned and not pending
        try:
            self.record_host_bound()
            self.record_provenance("end")
            if s.complete:
                self.store.set_status(self.id, "complete")
                self.event("complete", {"records": s.recorded})
            else:
                self.store.set_status(self.id, "interrupted")
                self.event("interrupted", {"records": s.recorded, "pending": pending})
        except ResultsDiskFull:
            # nothing more can be written; the records are safe and --resume needs no status
            self.settle_note = (" (the campaign could not be marked interrupted: the disk is "
                                "full; --resume does not need it)")

    def _conclude(self, failure: Optional[BaseException], interrupted: bool) -> RunSummary:
        s = self.summary
        if failure is not None:
            raise Failure(f"{getattr(failure, 'message', failure)}\n{s.recorded} of {s.planned} "
                          f"invocations are recorded in {self.results}{self.settle_note}; once "
                          f"fixed, continue with: {self.resume_hint}")
        s.interrupted = interrupted and not s.complete
        if s.interrupted:
            raise Failure(f"interrupted: {s.recorded} of {s.planned} invocations are recorded in "
                          f"{self.results}; continue with: {self.resume_hint}")
        return s


def endpoint_of(described: dict) -> str:
    """Where a provider sends its requests, from its ``describe()``: the Lambda API's endpoint
    URL (or the provider's region for AWS's own), or the HTTP endpoints' redacted URLs."""
    if described.get("endpoint_url"):
        return str(described["endpoint_url"])
    urls = [e.get("url") for e in described.get("endpoints") or [] if e.get("url")]
    if urls:
        return ", ".join(urls[:3]) + (f" (+{len(urls) - 3} more)" if len(urls) > 3 else "")
    where = [f"{k} {described[k]}" for k in ("region", "project", "service") if described.get(k)]
    return f"{described.get('kind', 'provider')} ({', '.join(where) or 'default endpoint'})"


def _existing_campaign(results: Path) -> Optional[dict]:
    """The campaign a results path already holds (None for a new file)."""
    if not results.exists():
        return None
    if results.is_dir():
        raise BadInput(f"{results} is a directory; give a file name", field="--results")
    try:
        with ResultsFile(results, field="--results") as rf:
            return rf.campaign()
    except NotAResultsFile as exc:
        raise BadInput(f"{results} exists and is not a faascope results file ({exc.reason})",
                       field="--results") from None
