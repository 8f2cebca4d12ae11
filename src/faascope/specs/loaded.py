"""A validated spec (:class:`LoadedSpec`) and its parts: factors, deployments, override rules.
It resolves a cell's function and workload from its levels, the rules' names and the agent's
payload; :func:`faascope.specs.loader.parse_spec` builds it."""
from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from faascope.errors import BadInput
from faascope.provider_kinds import PROVIDER_KINDS
from faascope.specs.fields import (
    DEPLOYMENT_FACTOR,
    FUNCTION_ALIASES,
    LOAD_ALIASES,
    MB_AS_BYTES,
    PROVIDER_NAME,
    field_path,
    format_errors,
    raise_errors,
)
from faascope.specs.model import (
    PROVIDER_SETTINGS,
    FunctionSpec,
    LoadSpec,
    Spec,
    SPEC_WORKLOADS,
    agent_request,
)
from faascope.specs.rules import Rule, RuleError
from faascope.units import MIB


@dataclass
class Factor:
    name: str          # as written in the spec (the key of levels)
    section: str       # "function" or "workload"
    field: str         # the spec field it sets
    levels: list[Any]  # normalised: sizes as bytes, memory as Lambda MB (MiB), booleans, strings
    raw_levels: list[Any]

    @property
    def numeric(self) -> bool:
        return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.levels)


@dataclass
class Deployment:
    """One level of the ``deployment`` factor: where its cells run."""

    name: str
    kind: str                 # local | aws | gcp | http
    settings: dict[str, Any]  # the provider's settings (provider.settings merged in)
    function: dict[str, Any]  # function fields it fixes, normalised (profile, arch …)

    def parsed_settings(self) -> Any:
        return PROVIDER_SETTINGS[self.kind].model_validate(self.settings)

    @property
    def region(self) -> str | None:
        """The cloud region its functions run in (None on the local platform and HTTP)."""
        if PROVIDER_KINDS[self.kind].has_region:
            return self.parsed_settings().region
        return None


@dataclass
class OverrideRule:
    rule: Rule
    sets: dict[tuple[str, str], Any]


@dataclass
class LoadedSpec:
    spec: Spec
    source: str
    factors: list[Factor]
    rules: list[Rule]
    overrides: list[OverrideRule]
    raw: dict = field(default_factory=dict)
    #: the spec's deployments by name (empty: every cell runs on ``provider``)
    deployments: dict[str, Deployment] = field(default_factory=dict)

    # ---- identity
    def canonical(self) -> dict:
        """The validated spec, normalised; without replications and seed (they are the run's)."""
        d = self.spec.model_dump(mode="json")
        if d.get("load") is None:
            d.pop("load", None)  # specs without a load section keep their hash
        if not d.get("deployments"):
            d.pop("deployments", None)  # and so do specs without deployments
        d["design"].pop("replications", None)
        d["design"].pop("seed", None)
        d["factors"] = {f.name: f.levels for f in self.factors}
        return d

    @property
    def spec_hash(self) -> str:
        blob = json.dumps(self.canonical(), sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def provider_kind(self) -> str:
        return self.spec.provider.kind

    def deployment_of(self, levels: dict[str, Any]) -> Deployment | None:
        """The deployment a cell runs on (None without ``deployments``)."""
        name = levels.get(DEPLOYMENT_FACTOR)
        return self.deployments.get(name) if self.deployments and name is not None else None

    def cell_provider_kind(self, levels: dict[str, Any]) -> str:
        """The provider kind of a cell: its deployment's, else the spec's."""
        dep = self.deployment_of(levels)
        return dep.kind if dep is not None else self.provider_kind

    # ---- cells
    def resolve(self, levels: dict[str, Any]) -> tuple[dict, dict]:
        """The function and workload dicts of the cell with these levels (overrides applied)."""
        fn = self.spec.function.model_dump()
        wl = copy.deepcopy(self.spec.workload)
        byname = {f.name: f for f in self.factors}
        dep = self.deployment_of(levels)
        if dep is not None:
            fn.update(dep.function)  # what the deployment fixes (its profile, arch …)
        for name, value in levels.items():
            f = byname[name]
            if f.section in ("load", "deployment"):
                continue  # see resolve_load; the deployment is applied above
            (fn if f.section == "function" else wl)[f.field] = value
        default_profile = PROVIDER_KINDS[self.cell_provider_kind(levels)].default_profile
        if default_profile is not None and fn.get("profile") is None:
            fn["profile"] = default_profile
        if self.overrides:
            env = self.env(fn, wl, deployment=dep.name if dep else None)
            for i, ov in enumerate(self.overrides):
                try:
                    hit = ov.rule.evaluate(env)
                except RuleError as exc:
                    raise BadInput(f"{exc} (in cell {levels})", field=f"overrides[{i}].when") from None
                if hit:
                    for (section, fname), value in ov.sets.items():
                        (fn if section == "function" else wl)[fname] = value
        return fn, wl

    def resolve_load(self, levels: dict[str, Any]) -> dict | None:
        """The cell's load section (base ``load`` + its load-factor levels), as a plain dict;
        None when the spec has no load section and no load factor."""
        load_factors = [f for f in self.factors if f.section == "load"]
        if self.spec.load is None and not load_factors:
            return None
        ld = (self.spec.load.model_dump(mode="json", exclude_none=True)
              if self.spec.load is not None else {})
        for f in load_factors:
            if f.name not in levels:
                continue
            if "." in f.field:
                sub, _, leaf = f.field.partition(".")
                ld.setdefault(sub, {})
                ld[sub] = dict(ld[sub] or {}, **{leaf: levels[f.name]})
            else:
                ld[f.field] = levels[f.name]
        return ld

    def env(self, fn: dict, wl: dict, load: dict | None = None,
            deployment: str | None = None) -> dict[str, Any]:
        """The names a rule can use for a cell. Sizes are bytes; ``memory`` and ``ephemeral`` are
        bytes too (Lambda MB x 2**20), ``memory_mb``/``ephemeral_mb`` the plain MB numbers; the
        load names (burst_size, batch_size, delay …) when the cell has a load section;
        ``deployment`` (its name) and ``provider`` (its kind: local, aws, gcp, http)."""
        env: dict[str, Any] = {DEPLOYMENT_FACTOR: deployment}
        env[PROVIDER_NAME] = (self.deployments[deployment].kind if deployment in self.deployments
                              else self.provider_kind)
        if load is not None:
            for alias, path in LOAD_ALIASES.items():
                sub, _, leaf = path.rpartition(".")
                src = (load.get(sub) or {}) if sub else load
                env[alias] = src.get(leaf)
        for alias, fname in FUNCTION_ALIASES.items():
            env[alias] = fn.get(fname)
        for alias, fname in MB_AS_BYTES.items():
            env[alias] = fn[fname] * MIB if fn.get(fname) is not None else None
        kind = wl.get("kind")
        model = SPEC_WORKLOADS.get(kind)
        if model is not None:
            for fname, info in model.model_fields.items():
                if fname in wl:
                    env[fname] = wl[fname]
                elif not info.is_required():
                    env[fname] = info.default
            if kind == "fileio" and env.get("prepare") is None:
                env["prepare"] = env.get("op") == "read"
            if kind == "fileio" and env.get("drop") is None:
                env["drop"] = bool(env["prepare"]) and env.get("op") == "read"
        for f in self.factors:  # the user's own factor names (aliases keep their meaning)
            if f.section == "deployment":
                continue
            if f.section == "load":
                if f.name.isidentifier() and f.name not in env:
                    env[f.name] = env.get(LOAD_ALIASES.get(f.name, ""), None)
                continue
            if f.name.isidentifier() and f.name not in env:
                env[f.name] = env.get(f.field, (fn if f.section == "function" else wl).get(f.field))
        return env

    def validate_cell(self, fn: dict, wl: dict, where: str = "") -> tuple[FunctionSpec, BaseModel]:
        problems: list[tuple[str, str]] = []
        func = None
        try:
            func = FunctionSpec.model_validate(fn)
        except ValidationError as exc:
            problems += format_errors(exc, ("function",), FunctionSpec)
        kind = wl.get("kind")
        work = None
        if kind is None:
            problems.append(("workload.kind", f"required; one of {', '.join(SPEC_WORKLOADS)}"))
        elif kind not in SPEC_WORKLOADS:
            problems.append(("workload.kind", f"must be one of {', '.join(SPEC_WORKLOADS)} (got {kind!r})"))
        else:
            model = SPEC_WORKLOADS[kind]
            if any(f.field == "kind" for f in self.factors):
                wl = {k: v for k, v in wl.items() if k in model.model_fields}
            try:
                work = model.model_validate(wl)
            except ValidationError as exc:
                errs = format_errors(exc, ("workload",), model)
                problems += [(p, m + (" (set it in workload: or make it a factor)" if m.startswith("required") else ""))
                             for p, m in errs]
            else:  # the schema's cross-field conditionals, on the request the agent will get
                problems += [(field_path(("workload", *([p] if p else []))), m)
                             for p, m in work.schema_problems()]
        if problems:
            if where:
                problems = [(p, f"{m} [in cell {where}]") for p, m in problems]
            raise_errors(problems, self.source)
        return func, work  # type: ignore[return-value]

    def validate_load(self, load: dict, where: str = "") -> LoadSpec:
        """The cell's load section, validated (an error names the field and the cell)."""
        try:
            ld = LoadSpec.model_validate(load)
            missing = ld.arrival.missing()
            problems = [("load.arrival", missing)] if missing else []
        except ValidationError as exc:
            problems = format_errors(exc, ("load",), LoadSpec)
            ld = None
        if problems:
            if where:
                problems = [(p, f"{m} [in cell {where}]") for p, m in problems]
            raise_errors(problems, self.source)
        return ld

    def payload(self, work: BaseModel) -> dict:
        return agent_request(work)
