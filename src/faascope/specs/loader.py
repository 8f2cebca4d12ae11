"""Load and validate an experiment spec (YAML or JSON).

Every problem becomes a :class:`faascope.errors.BadInput` (exit status 2) whose message names the
full field path (``workload.file_size``, ``factors.memory[1]``, ``design.rules[0]``) and, where
there is a closed set, the allowed values. Validation happens before anything is deployed or
written.
"""
from __future__ import annotations

import ast
import copy
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Iterable

import yaml
from pydantic import BaseModel, TypeAdapter, ValidationError

from faascope.specs.rules import Rule, RuleError
from faascope.errors import BadInput
from faascope.provider_kinds import PROVIDER_KINDS
from faascope.specs.model import (
    DEPLOYMENT_NAME,
    PROVIDER_SETTINGS,
    ArrivalSpec,
    CommonProviderSettings,
    FunctionSpec,
    LoadSpec,
    Spec,
    StaggerSpec,
    WORKLOAD_MODELS,
    agent_request,
)
from faascope.units import MIB

# short factor names for function fields (workload parameters are used by their own names)
FUNCTION_ALIASES: dict[str, str] = {
    "platform": "profile",
    "profile": "profile",
    "memory": "memory_mb",
    "memory_mb": "memory_mb",
    "ephemeral": "ephemeral_mb",
    "ephemeral_mb": "ephemeral_mb",
    "timeout": "timeout_s",
    "timeout_s": "timeout_s",
    "arch": "arch",
    "image_size": "image_size",
}
# short factor names for the load section (bursts, arrival, staggering; docs/concurrency.md)
LOAD_ALIASES: dict[str, str] = {
    "burst_size": "burst_size",
    "batch_size": "stagger.batch_size",
    "delay": "stagger.delay",
    "interval": "arrival.interval",
    "shift": "arrival.shift",
    "functions": "functions",
    "warm_pool": "warm_pool",
    "start": "start",
    "pause": "pause",
}
LOAD_SUBMODELS: dict[str, type[BaseModel]] = {"stagger": StaggerSpec, "arrival": ArrivalSpec}
#: the factor whose levels are the spec's deployments (``deployments:``), and the rule name of
#: the cell's provider kind
DEPLOYMENT_FACTOR = "deployment"
PROVIDER_NAME = "provider"
# names that are bytes in rules although the spec field is in Lambda MB (MiB)
MB_AS_BYTES = {"memory": "memory_mb", "ephemeral": "ephemeral_mb"}


def workload_fields() -> dict[str, list[str]]:
    """field name -> the workload kinds that have it."""
    out: dict[str, list[str]] = {}
    for kind, model in WORKLOAD_MODELS.items():
        for name in model.model_fields:
            out.setdefault(name, []).append(kind)
    return out


def allowed_factor_names() -> list[str]:
    return sorted(set(FUNCTION_ALIASES) | set(workload_fields()) | set(LOAD_ALIASES)
                  | {DEPLOYMENT_FACTOR})


def load_field_model(fname: str) -> tuple[type[BaseModel], str]:
    """The model and leaf field of a load field path: ``stagger.delay`` -> (StaggerSpec, delay)."""
    if "." in fname:
        sub, _, leaf = fname.partition(".")
        return LOAD_SUBMODELS[sub], leaf
    return LoadSpec, fname


def _load_path_ok(fname: str) -> bool:
    if "." in fname:
        sub, _, leaf = fname.partition(".")
        return sub in LOAD_SUBMODELS and leaf in LOAD_SUBMODELS[sub].model_fields
    return fname in LoadSpec.model_fields and fname not in LOAD_SUBMODELS


def resolve_name(name: str) -> tuple[str, str]:
    """A factor or override name -> (section, field): ``memory`` -> ("function", "memory_mb")."""
    if "." in name:
        section, _, fname = name.partition(".")
        if section == "function" and fname in FunctionSpec.model_fields:
            return "function", fname
        if section == "workload" and fname in workload_fields():
            return "workload", fname
        if section == "load" and _load_path_ok(fname):
            return "load", fname
        raise ValueError(
            f"unknown field {name!r}; dotted names may be function.<{'|'.join(FunctionSpec.model_fields)}>"
            f", workload.<{'|'.join(sorted(workload_fields()))}>"
            f" or load.<{'|'.join(sorted(set(LOAD_ALIASES.values())))}>"
        )
    if name == DEPLOYMENT_FACTOR:
        return "deployment", DEPLOYMENT_FACTOR
    if name in FUNCTION_ALIASES:
        return "function", FUNCTION_ALIASES[name]
    if name in LOAD_ALIASES and name in workload_fields():
        raise ValueError(f"{name!r} is both a workload field and a load field; write "
                         f"workload.{name} or load.{LOAD_ALIASES[name]}")
    if name in LOAD_ALIASES:
        return "load", LOAD_ALIASES[name]
    if name in workload_fields():
        return "workload", name
    raise ValueError(f"unknown factor {name!r}; allowed: {', '.join(allowed_factor_names())} "
                     "(or a dotted path such as workload.io_size)")


def _adapter(model: type[BaseModel], fname: str) -> TypeAdapter:
    info = model.model_fields[fname]
    if info.metadata:
        return TypeAdapter(Annotated[(info.annotation, *info.metadata)])
    return TypeAdapter(info.annotation)


def validate_workload_value(kinds: list[str], fname: str, value: Any) -> Any:
    """``value`` validated and normalised as the workload field ``fname`` of the first of
    ``kinds`` that accepts it (fields of one name differ by kind: fileio's op is write/read,
    object's put/get); the first kind's error when none does."""
    first: ValidationError | None = None
    for kind in kinds:
        if fname in WORKLOAD_MODELS[kind].model_fields:
            try:
                return _adapter(WORKLOAD_MODELS[kind], fname).validate_python(value)
            except ValidationError as exc:
                first = first or exc
    if first is None:
        raise KeyError(fname)
    raise first


# --------------------------------------------------------------------------------------------
# error formatting
# --------------------------------------------------------------------------------------------
def _path(parts: Iterable[Any]) -> str:
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out


def _model_at(model: Any, loc: tuple) -> Any:
    """The pydantic model reached by following ``loc`` from ``model`` (for listing fields)."""
    cur = model
    for part in loc:
        if isinstance(cur, type) and issubclass(cur, BaseModel) and part in cur.model_fields:
            ann = cur.model_fields[part].annotation
            args = [a for a in getattr(ann, "__args__", ()) if isinstance(a, type)]
            cur = ann if isinstance(ann, type) else next(
                (a for a in args if issubclass(a, BaseModel)), None)
        else:
            return None
    return cur


def format_errors(exc: ValidationError, prefix: tuple = (), model: Any = None) -> list[tuple[str, str]]:
    out = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        path = _path(prefix + loc)
        kind = err["type"]
        got = err.get("input")
        if kind == "extra_forbidden":
            parent = _model_at(model, loc[:-1]) if model is not None else None
            allowed = f"; allowed fields: {', '.join(parent.model_fields)}" if parent else ""
            msg = f"unknown field{allowed}"
        elif kind == "missing":
            msg = "required field is missing"
        elif kind == "literal_error":
            msg = f"must be one of {err['ctx']['expected']} (got {got!r})"
        elif kind == "value_error":
            msg = str(err["ctx"]["error"])
        elif kind == "string_pattern_mismatch":
            msg = f"{got!r} does not match the pattern {err['ctx']['pattern']}"
        else:
            msg = err["msg"]
            if got is not None and not isinstance(got, (dict, list)):
                msg += f" (got {got!r})"
        out.append((path, msg))
    return out


def raise_errors(problems: list[tuple[str, str]], source: str = "") -> None:
    if not problems:
        return
    where = f" in {source}" if source else ""
    if len(problems) == 1:
        path, msg = problems[0]
        raise BadInput(msg + (f" (spec{where})" if source else ""), field=path)
    lines = "\n".join(f"  {p}: {m}" for p, m in problems)
    raise BadInput(f"invalid spec{where}, {len(problems)} problems:\n{lines}")


# --------------------------------------------------------------------------------------------
# loaded spec
# --------------------------------------------------------------------------------------------
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
        model = WORKLOAD_MODELS.get(kind)
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
            problems.append(("workload.kind", f"required; one of {', '.join(WORKLOAD_MODELS)}"))
        elif kind not in WORKLOAD_MODELS:
            problems.append(("workload.kind", f"must be one of {', '.join(WORKLOAD_MODELS)} (got {kind!r})"))
        else:
            model = WORKLOAD_MODELS[kind]
            if any(f.field == "kind" for f in self.factors):
                wl = {k: v for k, v in wl.items() if k in model.model_fields}
            try:
                work = model.model_validate(wl)
            except ValidationError as exc:
                errs = format_errors(exc, ("workload",), model)
                problems += [(p, m + (" (set it in workload: or make it a factor)" if m.startswith("required") else ""))
                             for p, m in errs]
            else:  # the schema's cross-field conditionals, on the request the agent will get
                problems += [(_path(("workload", *([p] if p else []))), m)
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


class _SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing duplicate keys: YAML forbids them, and PyYAML would keep
    the last one silently (a second ``factors:`` would replace the first without a word)."""


def _mapping_without_duplicates(loader: _SpecLoader, node: yaml.MappingNode, deep: bool = False):
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # "<<" merges: explicit keys override merged ones, as YAML says
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:
            continue  # an unhashable key: construct_mapping reports it
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {first}); a key may appear "
                "once in a mapping", key_node.start_mark)
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


_SpecLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                            _mapping_without_duplicates)


def _read(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BadInput(f"spec file not found: {path}", field="SPEC") from None
    except IsADirectoryError:
        raise BadInput(f"{path} is a directory; give a spec file (YAML)", field="SPEC") from None
    except OSError as exc:
        raise BadInput(f"cannot read the spec {path}: {exc}", field="SPEC") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path} is not a text file: byte 0x{raw[exc.start]:02x} at offset "
                       f"{exc.start} is not UTF-8; a spec is YAML text", field="SPEC") from None
    try:
        return yaml.load(text, Loader=_SpecLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise BadInput(f"{path} is not valid YAML{at}: {getattr(exc, 'problem', exc)}", field="SPEC") from None


def load_spec(path: str | Path) -> LoadedSpec:
    path = Path(path)
    return parse_spec(_read(path), source=str(path))


def parse_spec(data: Any, source: str = "") -> LoadedSpec:
    if not isinstance(data, dict):
        raise BadInput(f"the spec must be a mapping with name, provider, function, workload, "
                       f"factors and design (got {type(data).__name__})", field="SPEC")
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        raise_errors(format_errors(exc, (), Spec), source)
    problems: list[tuple[str, str]] = []

    # provider settings
    settings_model = PROVIDER_SETTINGS.get(spec.provider.kind)
    if settings_model is not None:
        try:
            settings_model.model_validate(spec.provider.settings)
        except ValidationError as exc:
            problems += format_errors(exc, ("provider", "settings"), settings_model)
    if spec.deployments and spec.function.profile is not None:
        problems.append(("function.profile", "with deployments, a sandbox profile belongs to "
                         "each local deployment (deployments.NAME.function.profile)"))
    elif not PROVIDER_KINDS[spec.provider.kind].has_profiles and spec.function.profile is not None:
        problems.append(("function.profile", "only the local provider has sandbox profiles "
                         f"(provider.kind is {spec.provider.kind!r})"))
    deployments = _deployments(spec, problems)

    # base workload: known kind (unless a factor), known keys, valid values
    wf = workload_fields()
    kind = spec.workload.get("kind")
    kind_is_factor = any(_safe_resolve(n) == ("workload", "kind") for n in spec.factors)
    if kind is None and not kind_is_factor:
        problems.append(("workload.kind", f"required; one of {', '.join(WORKLOAD_MODELS)}"))
    elif kind is not None and kind not in WORKLOAD_MODELS:
        problems.append(("workload.kind", f"must be one of {', '.join(WORKLOAD_MODELS)} (got {kind!r})"))
    kinds = [kind] if kind in WORKLOAD_MODELS and not kind_is_factor else list(WORKLOAD_MODELS)
    for key, value in spec.workload.items():
        if key == "kind":
            continue
        owners = [k for k in kinds if key in WORKLOAD_MODELS[k].model_fields]
        if not owners:
            allowed = sorted({f for k in kinds for f in WORKLOAD_MODELS[k].model_fields})
            problems.append((f"workload.{key}", f"unknown field for workload kind "
                             f"{'/'.join(kinds)}; allowed fields: {', '.join(allowed)}"))
            continue
        try:
            # normalised in place (sizes as bytes, durations as ms), as factor levels are, so
            # that rules, overrides and payloads see one spelling of every value
            spec.workload[key] = validate_workload_value(owners, key, value)
        except ValidationError as exc:
            problems += format_errors(exc, ("workload", key))

    # factors
    factors: list[Factor] = []
    seen: dict[tuple[str, str], str] = {}
    for name, raw_levels in spec.factors.items():
        try:
            section, fname = resolve_name(name)
        except ValueError as exc:
            problems.append((f"factors.{name}", str(exc)))
            continue
        if (section, fname) in seen:
            problems.append((f"factors.{name}", f"sets the same field ({section}.{fname}) as factor "
                             f"{seen[(section, fname)]!r}"))
            continue
        seen[(section, fname)] = name
        if not raw_levels:
            problems.append((f"factors.{name}", "needs at least one level"))
            continue
        if section == "deployment":
            levels = _deployment_levels(name, raw_levels, deployments, problems)
            factors.append(Factor(name=name, section=section, field=fname, levels=levels,
                                  raw_levels=list(raw_levels)))
            continue
        if section == "load":
            model, fname_leaf = load_field_model(fname)
        if section == "function":
            model: type[BaseModel] = FunctionSpec
            if fname == "profile" and spec.deployments:
                problems.append((f"factors.{name}", "with deployments, compare profiles as "
                                 "local deployments (deployments.NAME.function.profile)"))
                continue
            fixed = sorted(n for n, d in deployments.items() if fname in d.function)
            if fixed:
                problems.append((f"factors.{name}", f"the deployment(s) {', '.join(fixed)} fix "
                                 f"function.{fname}; a factor cannot vary it too"))
                continue
            if fname == "profile" and not PROVIDER_KINDS[spec.provider.kind].has_profiles:
                problems.append((f"factors.{name}", "only the local provider has sandbox profiles "
                                 f"(provider.kind is {spec.provider.kind!r})"))
                continue
        elif section == "load":
            pass
        elif fname == "kind":
            model = None  # type: ignore[assignment]
        else:
            owners = [k for k in kinds if fname in WORKLOAD_MODELS[k].model_fields]
            if not owners:
                problems.append((f"factors.{name}", f"the {'/'.join(kinds)} workload has no field "
                                 f"{fname!r}"))
                continue
            model = WORKLOAD_MODELS[owners[0]]
        levels = []
        in_workload = section == "workload" and model is not None
        for i, raw in enumerate(raw_levels):
            if model is None:
                if raw not in WORKLOAD_MODELS:
                    problems.append((f"factors.{name}[{i}]", f"must be one of {', '.join(WORKLOAD_MODELS)} (got {raw!r})"))
                    continue
                levels.append(raw)
                continue
            try:
                if in_workload:
                    value = validate_workload_value(owners, fname, raw)
                else:
                    value = _adapter(model, fname_leaf if section == "load" else fname).validate_python(raw)
            except ValidationError as exc:
                problems += format_errors(exc, ("factors", name, i))
                continue
            if (type(value), value) in {(type(v), v) for v in levels}:
                problems.append((f"factors.{name}[{i}]", f"{raw!r} repeats an earlier level ({value!r})"))
                continue
            levels.append(value)
        factors.append(Factor(name=name, section=section, field=fname, levels=levels,
                              raw_levels=list(raw_levels)))

    if deployments and not any(f.section == "deployment" for f in factors):
        problems.append((f"factors.{DEPLOYMENT_FACTOR}", "required with deployments: list the "
                         f"deployments to compare, e.g. {DEPLOYMENT_FACTOR}: "
                         f"[{', '.join(deployments)}]"))
    if deployments and (spec.load is not None or any(f.section == "load" for f in factors)):
        problems.append(("deployments", "a spec with a load section (bursts) runs on one "
                         "provider; compare deployments with one-at-a-time invocations, or run "
                         "one burst campaign per deployment"))
    loaded = LoadedSpec(spec=spec, source=source, factors=factors, rules=[], overrides=[], raw=data,
                        deployments=deployments)
    known = _known_names(loaded, kinds)

    # rules
    for i, text in enumerate(spec.design.rules):
        try:
            rule = Rule.parse(text)
        except RuleError as exc:
            problems.append((f"design.rules[{i}]", f"{exc} (rule: {text!r})"))
            continue
        unknown = sorted(rule.names - known)
        if unknown:
            problems.append((f"design.rules[{i}]", f"unknown name{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(map(repr, unknown))} in {text!r}; known names: {', '.join(sorted(known))}"))
            continue
        lint = _lint_mb(rule)
        if lint:
            problems.append((f"design.rules[{i}]", lint))
            continue
        loaded.rules.append(rule)

    # overrides
    factor_fields = {(f.section, f.field) for f in factors}
    for i, ov in enumerate(spec.overrides):
        try:
            rule = Rule.parse(ov.when)
        except RuleError as exc:
            problems.append((f"overrides[{i}].when", str(exc)))
            continue
        unknown = sorted(rule.names - known)
        if unknown:
            problems.append((f"overrides[{i}].when", f"unknown name(s) {', '.join(map(repr, unknown))}; "
                             f"known names: {', '.join(sorted(known))}"))
            continue
        sets: dict[tuple[str, str], Any] = {}
        for key, value in ov.set.items():
            try:
                section, fname = resolve_name(key)
            except ValueError as exc:
                problems.append((f"overrides[{i}].set.{key}", str(exc)))
                continue
            if section == "load":
                problems.append((f"overrides[{i}].set.{key}", "an override cannot set a load "
                                 "field; make it a factor or set it in load:"))
                continue
            if section == "deployment":
                problems.append((f"overrides[{i}].set.{key}", "an override cannot choose the "
                                 "deployment; make it a factor"))
                continue
            if (section, fname) in factor_fields:
                problems.append((f"overrides[{i}].set.{key}", "is a factor; an override cannot change "
                                 "a factor's level"))
                continue
            owners = [k for k in kinds if fname in WORKLOAD_MODELS[k].model_fields]
            if section == "workload" and (not owners or fname == "kind"):
                problems.append((f"overrides[{i}].set.{key}", f"the {'/'.join(kinds)} workload "
                                 f"has no field {fname!r}" if not owners else "cannot set the workload kind"))
                continue
            try:
                sets[(section, fname)] = (_adapter(FunctionSpec, fname).validate_python(value)
                                          if section == "function"
                                          else validate_workload_value(owners, fname, value))
            except ValidationError as exc:
                problems += format_errors(exc, ("overrides", i, "set", key))
        loaded.overrides.append(OverrideRule(rule=rule, sets=sets))

    # a burst spec warms up and goes cold through its load section
    if spec.load is not None or any(f.section == "load" for f in factors):
        if spec.design.warmup:
            problems.append(("design.warmup", "with a load section, warm up with load.warm_pool "
                             "(a warm pool sent together before each burst)"))
        if spec.design.cold_mode != "none":
            problems.append(("design.cold", "with a load section, choose cold or warm bursts with "
                             "load.start (cold, fresh, expire or warm)"))
        mi = spec.load.member_index if spec.load is not None else None
        if mi is not None and not any(mi in WORKLOAD_MODELS[k].model_fields for k in kinds):
            problems.append(("load.member_index", f"the {'/'.join(kinds)} workload has no field "
                             f"{mi!r} to set per member"))

    # blocking needs at least as many replications as blocks
    b = spec.design.blocking
    if b is not None and b.blocks > spec.design.replications:
        problems.append(("design.blocking.blocks", f"{b.blocks} blocks need at least {b.blocks} "
                         f"replications (design.replications is {spec.design.replications})"))
    # a periodic schedule is the design's time structure: not with blocks, not with bursts
    if spec.design.schedule is not None:
        if b is not None:
            problems.append(("design.schedule", "a schedule already spreads the design over "
                             "time; remove design.blocking (each slot is a block)"))
        if spec.load is not None:
            problems.append(("design.schedule", "periodic burst campaigns are not supported; "
                             "remove the load section or the schedule"))
    raise_errors(problems, source)
    return loaded


def _safe_resolve(name: str) -> tuple[str, str] | None:
    try:
        return resolve_name(name)
    except ValueError:
        return None


def _deployments(spec: Spec, problems: list[tuple[str, str]]) -> dict[str, Deployment]:
    """The spec's deployments, each provider's settings validated as that provider's (the
    errors name ``deployments.NAME.settings.FIELD``) and its function fields as the function's."""
    out: dict[str, Deployment] = {}
    common = set(CommonProviderSettings.model_fields)
    for name, d in spec.deployments.items():
        where = f"deployments.{name}"
        if not isinstance(name, str) or not re.match(DEPLOYMENT_NAME, name):
            problems.append((where, f"a deployment's name must match {DEPLOYMENT_NAME}"))
            continue
        kind = d.kind or spec.provider.kind
        base = spec.provider.settings if kind == spec.provider.kind else \
            {k: v for k, v in spec.provider.settings.items() if k in common}
        settings = {**base, **d.settings}
        try:
            PROVIDER_SETTINGS[kind].model_validate(settings)
        except ValidationError as exc:
            problems.extend(format_errors(exc, ("deployments", name, "settings"),
                                          PROVIDER_SETTINGS[kind]))
        fn: dict[str, Any] = {}
        for key, value in d.function.items():
            fname = FUNCTION_ALIASES.get(key, key)
            if fname not in FunctionSpec.model_fields:
                problems.append((f"{where}.function.{key}", "unknown function field; allowed: "
                                 f"{', '.join(FunctionSpec.model_fields)}"))
                continue
            if fname == "profile" and not PROVIDER_KINDS[kind].has_profiles:
                problems.append((f"{where}.function.{key}", "only local deployments have sandbox "
                                 f"profiles (this one is {kind!r})"))
                continue
            try:
                fn[fname] = _adapter(FunctionSpec, fname).validate_python(value)
            except ValidationError as exc:
                problems.extend(format_errors(exc, ("deployments", name, "function", key)))
        out[name] = Deployment(name=name, kind=kind, settings=settings, function=fn)
    return out


def _deployment_levels(name: str, raw_levels: list, deployments: dict[str, Deployment],
                       problems: list[tuple[str, str]]) -> list[str]:
    """The levels of the deployment factor: names of the spec's deployments, each once."""
    if not deployments:
        problems.append((f"factors.{name}", "needs a deployments: section naming each level "
                         "(kind, settings and function fields of each deployment)"))
        return []
    levels: list[str] = []
    for i, raw in enumerate(raw_levels):
        if raw not in deployments:
            problems.append((f"factors.{name}[{i}]", f"must be one of the deployments "
                             f"{', '.join(deployments)} (got {raw!r})"))
        elif raw in levels:
            problems.append((f"factors.{name}[{i}]", f"{raw!r} repeats an earlier level"))
        else:
            levels.append(raw)
    return levels


def _known_names(loaded: LoadedSpec, kinds: list[str]) -> set[str]:
    names = set(FUNCTION_ALIASES) | set(MB_AS_BYTES) | {"kind", DEPLOYMENT_FACTOR, PROVIDER_NAME}
    if loaded.spec.load is not None or any(f.section == "load" for f in loaded.factors):
        names |= set(LOAD_ALIASES)
    for k in kinds:
        names |= set(WORKLOAD_MODELS[k].model_fields)
    names |= {f.name for f in loaded.factors if f.name.isidentifier()}
    return names


def _lint_mb(rule: Rule) -> str | None:
    """Catch ``memory < 1024``: in rules ``memory`` is bytes, so a small bare number is a unit slip."""
    for node in ast.walk(rule.tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            names = [o.id for o in operands if isinstance(o, ast.Name) and o.id in MB_AS_BYTES]
            nums = [o.value for o in operands if isinstance(o, ast.Constant)
                    and isinstance(o.value, (int, float)) and not isinstance(o.value, bool)]
            if names and any(0 < n < MIB for n in nums):
                n = names[0]
                return (f"in rules {n!r} is in bytes (128 MB = 134217728 bytes), so comparing it with "
                        f"{nums[0]} is surely a unit slip; compare with a size such as 2GiB, or use "
                        f"{MB_AS_BYTES[n]} for the plain MB number (rule: {rule.text!r})")
    return None
