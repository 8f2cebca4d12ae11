"""``faascope tune --spec SPEC``: the same question for a workload spec (faascope's agent runs
the workload): the spec with its memory factor replaced by the sizes to compare (and arch when
asked), run as a campaign (``faascope run``'s driver: durable, resumable, a results store the
report reads) with ``cold: true`` (each cell's first invocation of every block and round forced
cold, the rest warm) and adaptive replication on the warm invocations; the answer is drawn from
the store like a deployed function's."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import yaml

from faascope.cost.pricing import Pricing
from faascope.cost.report import invocation_costs
from faascope.errors import BadInput
from faascope.specs.loader import read_spec_document
from faascope.store.reader import ResultsFile

MEMORY_NAMES = ("memory", "memory_mb", "function.memory_mb")


def tuning_spec(spec_path: Path, memories: list[int], arches: Optional[list[str]]) -> str:
    """The YAML of the derived spec."""
    spec = read_spec_document(spec_path, field="--spec")
    if not isinstance(spec, dict):
        raise BadInput(f"{spec_path} is not a spec", field="--spec")
    factors = {k: v for k, v in (spec.get("factors") or {}).items() if k not in MEMORY_NAMES}
    factors["memory"] = memories
    if arches:
        factors = {k: v for k, v in factors.items() if k not in ("arch", "function.arch")}
        factors["arch"] = arches
    spec["factors"] = factors
    spec["name"] = f"{spec.get('name', 'spec')}-tune"
    code = (spec.get("function") or {}).get("code") if isinstance(spec.get("function"), dict) else None
    if isinstance(code, dict) and isinstance(code.get("path"), str):
        # a user's function's package is named relative to its spec; the derived spec is
        # written elsewhere (beside the results), so it names the package absolutely
        code["path"] = str((spec_path.resolve().parent / code["path"]).resolve())
    design = dict(spec.get("design") or {})
    design.update(cold=True, warmup=0)  # true: each cell's first run of a block is cold
    design.setdefault("replications", 5)
    # rules naming memory levels of the old design still apply to the new levels
    spec["design"] = design
    return yaml.safe_dump(spec, sort_keys=False)


def samples_from_store(results: Path) -> tuple[list[dict], str]:
    """The campaign's measured invocations as tune samples (cost from faascope.cost on the best
    duration each row has), and the cost platform."""
    with ResultsFile(results) as rf:
        df = rf.flat(include_warmups=False)
    costs = invocation_costs(df, pricing=Pricing())
    out = []
    for i, r in df.iterrows():
        out.append({"round": 0, "memory_mb": int(r["config_memory_mb"]),
                    "arch": r.get("config_arch") or "x86_64",
                    "start": "cold" if int(r["cold_forced"] or 0) else "warm",
                    "ok": int(r["ok"] == 1), "error_type": r.get("error_type") or "",
                    "latency_seconds": r["latency_seconds"],
                    "client_latency_seconds": r["client_latency_seconds"],
                    "billed_duration_ms": r.get("billed_duration_ms"),
                    "init_duration_ms": r.get("init_duration_ms"),
                    "max_memory_used_mb": r.get("max_memory_used_mb"),
                    "cost_usd": costs.loc[i, "cost"]})
    platform = ",".join(sorted(set(costs["platform"].dropna()))) or "aws_lambda"
    return out, platform
