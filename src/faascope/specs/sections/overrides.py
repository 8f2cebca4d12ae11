"""The overrides: each ``when`` a rule of known names, each ``set`` a function or workload field
that no factor varies, its value validated."""
from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from faascope.specs.fields import field_adapter, format_errors, resolve_name, validate_workload_value
from faascope.specs.loaded import Factor, OverrideRule
from faascope.specs.model import SPEC_WORKLOADS, FunctionSpec, Spec
from faascope.specs.rules import Rule, RuleError
from faascope.specs.sections.names import unknown_names


def check_overrides(spec: Spec, factors: list[Factor], kinds: list[str], known: set[str],
                    problems: list[tuple[str, str]]) -> list[OverrideRule]:
    """The spec's overrides, for cells of workload ``kinds``; ``known``: the names a when may use."""
    # overrides
    overrides: list[OverrideRule] = []
    factor_fields = {(f.section, f.field) for f in factors}
    for i, ov in enumerate(spec.overrides):
        try:
            rule = Rule.parse(ov.when)
        except RuleError as exc:
            problems.append((f"overrides[{i}].when", str(exc)))
            continue
        unknown = unknown_names(rule, known)
        if unknown:
            problems.append((f"overrides[{i}].when", unknown))
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
            owners = [k for k in kinds if fname in SPEC_WORKLOADS[k].model_fields]
            if section == "workload" and (not owners or fname == "kind"):
                problems.append((f"overrides[{i}].set.{key}", f"the {'/'.join(kinds)} workload "
                                 f"has no field {fname!r}" if not owners else "cannot set the workload kind"))
                continue
            try:
                sets[(section, fname)] = (field_adapter(FunctionSpec, fname).validate_python(value)
                                          if section == "function"
                                          else validate_workload_value(owners, fname, value))
            except ValidationError as exc:
                problems += format_errors(exc, ("overrides", i, "set", key))
        overrides.append(OverrideRule(rule=rule, sets=sets))
    return overrides
