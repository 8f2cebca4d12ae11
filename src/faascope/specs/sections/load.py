"""The load section (bursts): how a burst spec warms up and goes cold, and the per-member field."""
from __future__ import annotations

from faascope.specs.loaded import Factor
from faascope.specs.model import SPEC_WORKLOADS, Spec


def check_load(spec: Spec, factors: list[Factor], kinds: list[str],
               problems: list[tuple[str, str]]) -> None:
    """A burst spec's warm-up, cold mode and member_index."""
    # a burst spec warms up and goes cold through its load section
    if spec.load is not None or any(f.section == "load" for f in factors):
        if spec.design.warmup:
            problems.append(("design.warmup", "with a load section, warm up with load.warm_pool "
                             "(a warm pool sent together before each burst)"))
        if spec.design.cold_mode != "none":
            problems.append(("design.cold", "with a load section, choose cold or warm bursts with "
                             "load.start (cold, fresh, expire or warm)"))
        mi = spec.load.member_index if spec.load is not None else None
        if mi is not None and not any(mi in SPEC_WORKLOADS[k].model_fields for k in kinds):
            problems.append(("load.member_index", f"the {'/'.join(kinds)} workload has no field "
                             f"{mi!r} to set per member"))
