"""The spec's field names and the checks every section shares: factor and rule names resolved to
their section and field (``memory`` -> ``function.memory_mb``), a field's validator, and
pydantic's errors turned into ``(field path, message)`` problems that one :class:`BadInput`
reports (exit status 2)."""
from __future__ import annotations

from typing import Annotated, Any, Iterable

from pydantic import BaseModel, TypeAdapter, ValidationError

from faascope.errors import BadInput
from faascope.specs.model import (
    ArrivalSpec,
    FunctionSpec,
    LoadSpec,
    StaggerSpec,
    SPEC_WORKLOADS,
)

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
    for kind, model in SPEC_WORKLOADS.items():
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


def safe_resolve(name: str) -> tuple[str, str] | None:
    try:
        return resolve_name(name)
    except ValueError:
        return None


def field_adapter(model: type[BaseModel], fname: str) -> TypeAdapter:
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
        if fname in SPEC_WORKLOADS[kind].model_fields:
            try:
                return field_adapter(SPEC_WORKLOADS[kind], fname).validate_python(value)
            except ValidationError as exc:
                first = first or exc
    if first is None:
        raise KeyError(fname)
    raise first


# --------------------------------------------------------------------------------------------
# error formatting
# --------------------------------------------------------------------------------------------
def field_path(parts: Iterable[Any]) -> str:
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
        path = field_path(prefix + loc)
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
        elif kind == "int_type" and isinstance(got, (bool, str, float)):
            # a strict count (design.replications, seed, warmup …): YAML's true and "3" are
            # not silently read as 1 and 3
            how = ("not true/false" if isinstance(got, bool) else
                   "written without quotes" if isinstance(got, str) else "with no fraction")
            msg = f"must be a whole number, {how} (got {got!r})"
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
