"""Which recorded settings differ between BASE and NEW: the spec fields (a results store keeps
the spec it ran, :meth:`faascope.store.reader.ResultsFile.campaign_meta`) and the campaign's seed,
replications, faascope version and machine. A comparison is read with what changed in mind —
and an "A/A" pair that is not identical says so."""
from __future__ import annotations

from typing import Any, Iterable

from faascope.store.reader import ResultsFile, is_results_path

#: campaign columns shown next to the spec's fields
CAMPAIGN_FIELDS = ("seed", "replications", "faascope_version")


def flatten(x: Any, prefix: str = "") -> dict[str, Any]:
    """{"function.memory_mb": 512, …}: nested mappings as dotted paths; lists stay values."""
    if isinstance(x, dict):
        out: dict[str, Any] = {}
        for k, v in x.items():
            out.update(flatten(v, f"{prefix}{k}."))
        return out if out or not prefix else {prefix[:-1]: {}}
    return {prefix[:-1]: x}


def recorded(path) -> dict[str, Any] | None:
    """The flattened settings of a results store (spec under ``spec.``, the campaign's own
    fields, the machine under ``machine.``); None for CSV/Parquet, which record none."""
    if not is_results_path(path):
        return None
    with ResultsFile(path, field="INPUT") as rf:
        camp = rf.campaign_meta()["campaign"]
    out = flatten(camp.get("spec") or {}, "spec.")
    out.update({f"campaign.{k}": camp.get(k) for k in CAMPAIGN_FIELDS})
    out.update(flatten(camp.get("machine") or {}, "machine."))
    return out


def differences(a: dict[str, Any], b: dict[str, Any],
                ignore: Iterable[str] = ()) -> list[dict[str, Any]]:
    """[{"field", "base", "new"}] for every path whose value differs (absent: None)."""
    skip = set(ignore)
    return [{"field": k, "base": a.get(k), "new": b.get(k)}
            for k in sorted(set(a) | set(b)) if k not in skip and a.get(k) != b.get(k)]


def between_sides(base_paths: list, new_paths: list, aa_paths: list = ()) -> dict[str, Any]:
    """What differs between the first BASE and the first NEW store, and which runs of a side (or
    A/A runs) differ from that side's first in their spec."""
    rec = {str(p): recorded(p) for p in [*base_paths, *new_paths, *aa_paths]}
    b0, n0 = rec[str(base_paths[0])], rec[str(new_paths[0])]
    if b0 is None or n0 is None:
        return {"fields": [], "note": "a CSV or Parquet input records no spec: no settings to "
                                      "compare"}
    out: dict[str, Any] = {"fields": differences(b0, n0), "note": None, "within_sides": []}
    for side, paths, first in (("base", base_paths[1:], b0), ("new", new_paths[1:], n0),
                               ("aa", list(aa_paths), b0)):
        for p in paths:
            r = rec[str(p)]
            if r is None:
                continue
            spec_diff = [d["field"] for d in differences(first, r) if d["field"].startswith("spec.")]
            if spec_diff:
                out["within_sides"].append({"side": side, "input": str(p), "fields": spec_diff})
    return out


def between_levels(path, by: str, base_level: str, new_level: str) -> dict[str, Any]:
    """In an interleaved campaign BASE and NEW are two levels of the factor ``by``: what each
    sets (for ``deployment``, every field of the two deployments that differs)."""
    if not is_results_path(path):
        return {"fields": [{"field": by, "base": base_level, "new": new_level}], "note": None}
    with ResultsFile(path, field="INPUT") as rf:
        camp = rf.campaign_meta()["campaign"]
    spec = camp.get("spec") or {}
    factor = next((f for f in camp.get("factors") or [] if f.get("name") == by), None)
    field = factor.get("field") if factor else None
    fields = [{"field": f"factor {by}" + (f" ({field})" if field and field not in (
        by, "deployment.deployment") else ""), "base": base_level, "new": new_level}]
    deps = spec.get("deployments") or {}
    if factor and factor.get("field") == "deployment.deployment" and base_level in deps \
            and new_level in deps:
        fields += [{"field": f"deployment's {d['field']}", "base": d["base"], "new": d["new"]}
                   for d in differences(flatten(deps[base_level]), flatten(deps[new_level]))]
    return {"fields": fields, "note": None}
