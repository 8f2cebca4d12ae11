"""The factors: each name resolved to one field, its levels validated (normalised) and distinct;
the deployment factor's levels name deployments."""
from __future__ import annotations

import json

from pydantic import BaseModel, ValidationError

from faascope.provider_kinds import PROVIDER_KINDS
from faascope.specs.fields import (
    DEPLOYMENT_FACTOR,
    field_adapter,
    format_errors,
    load_field_model,
    resolve_name,
    validate_workload_value,
)
from faascope.specs.loaded import Deployment, Factor
from faascope.specs.model import SPEC_WORKLOADS, FunctionSpec, Spec
from faascope.specs.sections.provider import deployment_levels


def _same_level(v):
    """What makes two levels the same: type and value; a JSON level (an invoke payload, which
    is a mapping or a list) by its canonical JSON."""
    if isinstance(v, (dict, list)):
        return (type(v), json.dumps(v, sort_keys=True))
    return (type(v), v)


def check_factors(spec: Spec, kinds: list[str], deployments: dict[str, Deployment],
                  problems: list[tuple[str, str]]) -> list[Factor]:
    """The spec's factors, for cells of workload ``kinds`` on ``deployments``."""
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
            levels = deployment_levels(name, raw_levels, deployments, problems)
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
            owners = [k for k in kinds if fname in SPEC_WORKLOADS[k].model_fields]
            if not owners:
                problems.append((f"factors.{name}", f"the {'/'.join(kinds)} workload has no field "
                                 f"{fname!r}"))
                continue
            model = SPEC_WORKLOADS[owners[0]]
        levels = []
        in_workload = section == "workload" and model is not None
        for i, raw in enumerate(raw_levels):
            if model is None:
                if raw not in SPEC_WORKLOADS:
                    problems.append((f"factors.{name}[{i}]", f"must be one of {', '.join(SPEC_WORKLOADS)} (got {raw!r})"))
                    continue
                levels.append(raw)
                continue
            try:
                if in_workload:
                    value = validate_workload_value(owners, fname, raw)
                else:
                    value = field_adapter(model, fname_leaf if section == "load" else fname).validate_python(raw)
            except ValidationError as exc:
                problems += format_errors(exc, ("factors", name, i))
                continue
            if _same_level(value) in {_same_level(v) for v in levels}:
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
    return factors
