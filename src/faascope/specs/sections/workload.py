"""The base workload: a known kind (unless a factor varies it), known fields, valid values
(normalised in place)."""
from __future__ import annotations

from pydantic import ValidationError

from faascope.specs.fields import format_errors, safe_resolve, validate_workload_value, workload_fields
from faascope.specs.model import SPEC_WORKLOADS, Spec


def check_workload(spec: Spec, problems: list[tuple[str, str]]) -> list[str]:
    """The workload kinds the spec's cells may have (one, or all when a factor varies the kind)."""
    # base workload: known kind (unless a factor), known keys, valid values
    wf = workload_fields()
    kind = spec.workload.get("kind")
    kind_is_factor = any(safe_resolve(n) == ("workload", "kind") for n in spec.factors)
    if kind is None and not kind_is_factor:
        problems.append(("workload.kind", f"required; one of {', '.join(SPEC_WORKLOADS)}"))
    elif kind is not None and kind not in SPEC_WORKLOADS:
        problems.append(("workload.kind", f"must be one of {', '.join(SPEC_WORKLOADS)} (got {kind!r})"))
    kinds = [kind] if kind in SPEC_WORKLOADS and not kind_is_factor else list(SPEC_WORKLOADS)
    for key, value in spec.workload.items():
        if key == "kind":
            continue
        owners = [k for k in kinds if key in SPEC_WORKLOADS[k].model_fields]
        if not owners:
            allowed = sorted({f for k in kinds for f in SPEC_WORKLOADS[k].model_fields})
            problems.append((f"workload.{key}", f"unknown field for workload kind "
                             f"{'/'.join(kinds)}; allowed fields: {', '.join(allowed)}"))
            continue
        try:
            # normalised in place (sizes as bytes, durations as ms), as factor levels are, so
            # that rules, overrides and payloads see one spelling of every value
            spec.workload[key] = validate_workload_value(owners, key, value)
        except ValidationError as exc:
            problems += format_errors(exc, ("workload", key))
    return kinds
