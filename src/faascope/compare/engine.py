"""`faascope compare`'s answer: read the inputs (analysis/sources.py checks that their factors mean
the same thing), gather each cell's values by side and by unit (run or block), test each cell
with the unit the design allows (compare/between.py), describe it (compare/stats.py), decide
what changed, and add what differs between the sides' settings (compare/specdiff.py) and the
timeline (compare/timeline.py).

Three designs, from the most to the least informative (docs/analysis.md, "Comparing
campaigns"):

- **interleaved** (``--by FACTOR``): one campaign whose factor takes BASE and NEW, run in
  randomised blocks; the unit is the block (paired t on log block means);
- **runs**: BASE and NEW given as several runs each (``a1.db,a2.db,a3.db b1.db,b2.db,b3.db``);
  the unit is the run (Welch on log run means), or, with too few runs a side, the runs are
  compared against the drift of A/A runs (``--aa``) or of BASE's own runs;
- one run a side and nothing else: the drift between runs cannot be estimated, so no change is
  tested (unless the user assumes no drift, ``--assume-no-drift``, and says so loudly).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from faascope.analysis.cv_test import holm
from faascope.analysis.dataset import Origin, select
from faascope.analysis.io import as_level_strings
from faascope.analysis.sources import check_factors, common_factors, read_sources
from faascope.compare import between as bt
from faascope.compare import specdiff
from faascope.compare.minimums import minimum, too_few
from faascope.compare.stats import MIN_PER_SIDE, cell_values, summary, within_run
from faascope.compare.timeline import METHOD as TIMELINE_METHOD
from faascope.compare.timeline import timeline as build_timeline
from faascope.errors import BadInput
from faascope.store.measures import describe

#: the loud sentence for one run a side without an A/A estimate
NO_DRIFT_ESTIMATE = (
    "ONE RUN PER SIDE: runs on one host drift more than the noise within a run (two runs of one "
    "spec differed by 24.9 %, 'significant' at p = 0.019 by a per-invocation test), and the "
    "drift cannot be estimated from one run per side. No change below is tested, and the exit "
    "status is 0 whatever the differences. For evidence: run BASE and NEW interleaved in one "
    "campaign and compare with --by (examples/ab-interleaved-local.yaml), or give 3+ runs a "
    "side (a1.db,a2.db,a3.db b1.db,b2.db,b3.db), or A/A runs of BASE's spec (--aa).")
ASSUMED = ("NO DRIFT ASSUMED (--assume-no-drift): cells without a between-run test are decided "
           "by the per-invocation Welch test of one run against the other, which treats the "
           "runs as one population; between runs of one spec on one host that is false often "
           "enough (24.9 % apart, p = 0.019) that its verdicts, marked *, are not evidence")


@dataclass
class Cell:
    """One cell's values: pooled per side, and per unit (run or block)."""

    levels: tuple
    base: np.ndarray
    new: np.ndarray
    base_units: list[np.ndarray] = field(default_factory=list)
    new_units: list[np.ndarray] = field(default_factory=list)
    drift_units: list[np.ndarray] = field(default_factory=list)
    #: units are blocks, aligned by index (both sides present in each)
    paired: bool = False


def split_sides(inputs: Sequence[str]) -> list[list[str]]:
    """Each positional input is a side: one path, or several joined by commas (a path that
    exists as given is taken whole, commas and all)."""
    from pathlib import Path

    out = []
    for text in inputs:
        if Path(text).exists() or "," not in text:
            out.append([text])
        else:
            parts = [p.strip() for p in text.split(",") if p.strip()]
            if not parts:
                raise BadInput(f"no input in {text!r}", field="INPUT")
            out.append(parts)
    return out


def _frames(sources, response: str, factors: Sequence[str], filters: Sequence[str],
            notes: list[str]):
    """Each input's rows as ``analyze`` and ``report`` select them (analysis/dataset.py: the
    store's measurements only, the filters, the invocations that have the measure, levels as
    text), without scenarios or a factor check (a run may hold one level of a factor)."""
    out = {}
    for s in sources:
        if response not in s.df.columns:
            raise BadInput(f"no column {response!r} in {s.name}", field="--response")
        origin = Origin("store" if s.is_store else "table", s.path, len(s.df),
                        list(map(str, s.df.columns)), factor_meta=s.factor_meta)
        ds = select(s.df, origin, response=response, factors=list(factors), scenario=[],
                    filters=filters, factors_given=False)
        notes += [f"{s.name}: {n}" for n in ds.notes if not n.startswith("--filter")]
        out[s.name] = ds.data
    return out


def compare_inputs(sides: Sequence[Sequence[str]], *, by: Optional[str] = None,
                   base_level: Optional[str] = None, new_level: Optional[str] = None,
                   block: str = "block", aa: Sequence[str] = (), assume_no_drift: bool = False,
                   response: str = "latency_seconds", factors: Optional[list[str]] = None,
                   threshold: float = 0.10, alpha: float = 0.05, higher_is_better: Optional[bool] = None,
                   timeline: bool = False, filters: Sequence[str] = (), n_boot: int = 2000,
                   seed: int = 0) -> dict:
    if not 0 < alpha < 1:
        raise BadInput("must be between 0 and 1", field="--alpha")
    if threshold < 0:
        raise BadInput("must not be negative", field="--threshold")
    # which way is better: the measures table's, or the user's (a foreign rate must say)
    measure = describe(response, higher_is_better)
    higher_is_better = measure.higher_is_better
    sides = [list(s) for s in sides]
    if by is None and len(sides) < 2:
        raise BadInput("give at least two inputs: BASE NEW [MORE…] (or one interleaved "
                       "campaign with --by FACTOR)", field="INPUT")
    if by is not None:
        if len(sides) != 1:
            raise BadInput("an interleaved comparison reads one campaign (or several, joined by "
                           "commas) whose factor takes BASE and NEW; give one input",
                           field="--by")
        if aa:
            raise BadInput("A/A runs estimate the drift between separate runs; an interleaved "
                           "campaign's blocks already account for it", field="--aa")
    paths = [p for s in sides for p in s] + list(aa)
    sources = read_sources(paths)
    if factors is None:
        factors = common_factors(paths)
        if not factors:
            raise BadInput("name the columns that make a cell with --factors A,B (a CSV or "
                           "Parquet file does not say which columns are factors)", field="--factors")
    check_factors(sources, factors)
    notes: list[str] = []
    frames = _frames(sources, response, factors, filters, notes)
    names = [s.name for s in sources]
    if by is not None:
        out = _interleaved(sources, frames, by, base_level, new_level, block, factors, response,
                           notes)
    else:
        nb, nn = len(sides[0]), len(sides[-1])
        out = _runs(names[:nb], names[len(names) - len(aa) - nn:len(names) - len(aa)],
                    names[len(names) - len(aa):], frames, factors, response, notes)
        out["spec_diff"] = specdiff.between_sides(sides[0], sides[-1], list(aa))
    cells, skipped = out.pop("cells"), out.pop("skipped")
    out["comparison"] = decide(cells, skipped, design=out["design"], alpha=alpha,
                               threshold=threshold, higher_is_better=higher_is_better,
                               n_boot=n_boot, seed=seed, assume_no_drift=assume_no_drift)
    out.update(response=response, inputs=names, notes=notes,
               measure={"unit": measure.unit, "better": measure.better,
                        "direction": measure.direction_text})
    if by is None and (timeline or len(paths) - len(aa) > 2):
        runs = names[:len(names) - len(aa)]
        values = [cell_values(frames[n], response, out["factors"]) if len(frames[n]) else {}
                  for n in runs]
        keys = set().union(*values)
        groups = {k: [v.get(k, np.empty(0)) for v in values] for k in keys}
        out["timeline"] = _jsonable(build_timeline(groups, runs, alpha))
        out["timeline_method"] = TIMELINE_METHOD
    return _jsonable(out)


# ------------------------------------------------------------------------------ the designs
def _runs(base_names, new_names, aa_names, frames, factors, response, notes) -> dict:
    def per_run(names):
        return [cell_values(frames[n], response, factors) if len(frames[n]) else {}
                for n in names]

    b, n, a = per_run(base_names), per_run(new_names), per_run(aa_names)
    cells, skipped = [], []
    for key in sorted(set().union(*b, *n)):
        bu = [r[key] for r in b if key in r]
        nu = [r[key] for r in n if key in r]
        if not bu or not nu:
            skipped.append({"levels": key, "why": "only in base" if not nu else "only in new"})
            continue
        cells.append(Cell(key, np.concatenate(bu), np.concatenate(nu), bu, nu,
                          [r[key] for r in a if key in r]))
    return {"design": "runs", "factors": list(factors), "base": " + ".join(base_names),
            "new": " + ".join(new_names), "base_runs": list(base_names),
            "new_runs": list(new_names), "aa_runs": list(aa_names),
            "cells": cells, "skipped": skipped}


def _interleaved(sources, frames, by, base_level, new_level, block, factors, response,
                 notes) -> dict:
    cell_factors = [f for f in factors if f != by]
    for s in sources:
        for col in (by, block):
            if col not in frames[s.name].columns:
                raise BadInput(f"no column {col!r} in {s.name}" + (
                    "; an interleaved comparison needs each row's block (design.blocking in "
                    "the spec; a CSV names the column with --block)" if col == block else ""),
                    field="--by" if col == by else "--block")
    store = next((s for s in sources if s.is_store and by in s.factor_levels), None)
    if store is not None:
        order = [str(v).lower() if isinstance(v, bool) else str(v)
                 for v in store.factor_levels[by]]
    else:
        seen = set()
        for s in sources:
            seen |= set(as_level_strings(frames[s.name][by]).dropna())
        order = sorted(seen)
    present = set()
    for s in sources:
        present |= set(as_level_strings(frames[s.name][by]).dropna())
    order = [v for v in order if v in present] + sorted(present - set(order))
    if base_level is None or new_level is None:
        if len(order) != 2:
            raise BadInput(f"{by!r} has {len(order)} levels ({', '.join(order)}); name BASE and "
                           "NEW with --base-level and --new-level", field="--by")
        base_level = base_level or order[0]
        new_level = new_level or (order[1] if order[0] == base_level else order[0])
    for flag, lv in (("--base-level", base_level), ("--new-level", new_level)):
        if lv not in present:
            raise BadInput(f"{by!r} has no level {lv!r} (levels: {', '.join(order)})", field=flag)
    if base_level == new_level:
        raise BadInput("BASE and NEW are the same level", field="--new-level")
    blocks: dict[tuple, dict[tuple, dict[str, np.ndarray]]] = {}
    for s in sources:
        df = frames[s.name]
        if not len(df):
            continue
        lv = as_level_strings(df[by])
        for side, level in (("base", base_level), ("new", new_level)):
            part = df[lv == level]
            if not len(part):
                continue
            for key, per_block in cell_values(part, response, cell_factors, [block]).items():
                for b, v in per_block.items():
                    blocks.setdefault(key, {}).setdefault((s.name, *b), {})[side] = v
    cells, skipped = [], []
    for key in sorted(blocks):
        per = blocks[key]
        both = [b for b in sorted(per) if len(per[b]) == 2]
        one = len(per) - len(both)
        if one:
            notes.append(f"{', '.join(key) or 'the campaign'}: {one} block(s) without both "
                         f"{by}={base_level} and {by}={new_level} left out of the paired test")
        base = [per[b]["base"] for b in per if "base" in per[b]]
        new = [per[b]["new"] for b in per if "new" in per[b]]
        if not base or not new:
            skipped.append({"levels": key, "why": "only in base" if not new else "only in new"})
            continue
        cells.append(Cell(key, np.concatenate(base), np.concatenate(new),
                          [per[b]["base"] for b in both], [per[b]["new"] for b in both],
                          paired=True))
    first = next(s for s in sources)
    return {"design": "interleaved", "by": by, "factors": cell_factors,
            "base": f"{by}={base_level}", "new": f"{by}={new_level}",
            "base_level": base_level, "new_level": new_level,
            "spec_diff": specdiff.between_levels(first.path, by, base_level, new_level),
            "cells": cells, "skipped": skipped}


# ---------------------------------------------------------------------------- the decision
def between_test(c: Cell, alpha: float) -> dict:
    """The test of one cell whose unit is a block or a run (compare/between.py), or why there
    is none."""
    bm = np.array([np.mean(u) for u in c.base_units])
    nm = np.array([np.mean(u) for u in c.new_units])
    dm = np.array([np.mean(u) for u in c.drift_units])
    out = {"method": None, "units_base": len(bm), "units_new": len(nm), "units_drift": None,
           "why": None}
    if c.paired:
        why = too_few("blocks", len(bm))
        if why:
            why += ": run the campaign in blocks (design.blocking in the spec)"
        method, run = "blocks", (lambda: bt.paired_log_t(bm, nm, alpha))
        units = [bm, nm]
    elif len(bm) >= minimum("runs") and len(nm) >= minimum("runs"):
        why, method, run = None, "runs", (lambda: bt.welch_log_t(bm, nm, alpha))
        units = [bm, nm]
    else:
        # the drift: A/A runs when given, else the side with more runs (BASE on a tie)
        if len(c.drift_units):
            drift_units, source = c.drift_units, "aa"
        elif len(nm) > len(bm):
            drift_units, source, dm = c.new_units, "new", nm
        else:
            drift_units, source, dm = c.base_units, "base", bm
        out["units_drift"], out["drift_from"] = len(dm), source
        if len(dm) < minimum("drift_runs"):
            sides = "one run" if len(bm) == len(nm) == 1 else f"{len(bm)} and {len(nm)} runs"
            why = (f"{sides} per side: the between-run drift cannot be estimated (needs ≥ "
                   f"{minimum('runs')} runs a side, or ≥ {minimum('drift_runs')} A/A runs: "
                   f"--aa" + (f"; {len(dm)} given" if source == "aa" else "") + ")")
        else:
            fewest = min(len(u) for u in [*c.base_units, *c.new_units, *drift_units])
            why = too_few("drift_run_values", fewest)
        method, run = "drift", (lambda: bt.drift_log_t(bm, nm, dm, alpha))
        units = [bm, nm, dm]
    out["method"] = method
    if why is None and any(np.any(u <= 0) for u in units):
        why = "a unit's mean is not positive: the ratio NEW / BASE is not defined"
    if why is None:
        res = bt.scalar(run())
        if res["t"] is None:  # the units agree exactly: no variation to test against
            why = "the units do not vary: nothing to test the difference against"
        else:
            out.update(ratio=res["ratio"], ratio_ci=res["ratio_ci"], t=res["t"], df=res["df"],
                       p=res["p"], rel_change=res["ratio"] - 1,
                       rel_ci=[res["ratio_ci"][0] - 1, res["ratio_ci"][1] - 1])
            if "drift_band" in res:
                out["drift_band"] = res["drift_band"]
    out["why"] = why
    return out


def _verdict(rel, higher_is_better, threshold, significant):
    if rel is None:
        return False, False
    worse = ((-rel) if higher_is_better else rel) > threshold
    better = (rel if higher_is_better else -rel) > threshold
    return bool(significant and worse), bool(significant and better)


def decide(cells: list[Cell], skipped: list[dict], *, design: str, alpha: float,
           threshold: float, higher_is_better: bool, n_boot: int, seed: int,
           assume_no_drift: bool) -> dict:
    """Every cell described, tested by its units where the design allows, adjusted with Holm
    over the tested cells, and given a verdict."""
    rows = []
    for c in cells:
        if len(c.base) < MIN_PER_SIDE or len(c.new) < MIN_PER_SIDE:
            skipped.append({"levels": c.levels, "why": f"fewer than {MIN_PER_SIDE} values "
                            f"(base {len(c.base)}, new {len(c.new)})"})
            continue
        sb, sn = summary(c.base), summary(c.new)
        w = within_run(c.base, c.new, alpha, n_boot, seed)
        row = {"levels": c.levels, "base": sb, "new": sn, "exact": w.pop("exact"),
               "mean_diff": w["mean_diff"], "median_diff": w["median_diff"],
               "mean_rel_change": w["mean_diff"] / sb["mean"] if sb["mean"] else None,
               "median_rel_change": w["median_diff"] / sb["median"] if sb["median"] else None,
               "cv_change": (None if sb["cv"] is None or sn["cv"] is None
                             else sn["cv"] - sb["cv"]),
               "p99_rel_change": (sn["p99"] / sb["p99"] - 1 if sb["p99"] != 0 else None),
               "within_run": {k: v for k, v in w.items()
                              if k not in ("mean_diff", "median_diff")}}
        if row["exact"]:
            row["between"] = {"method": None, "why": "no variation within either side"}
            row["decided_by"], row["p"] = "exact", None
        else:
            row["between"] = between_test(c, alpha)
            if row["between"]["why"] is None:
                row["decided_by"], row["p"] = row["between"]["method"], row["between"]["p"]
            elif assume_no_drift and design == "runs" and w["p"] is not None \
                    and w["mean_diff_ci"] is not None:
                row["decided_by"], row["p"] = "within_run_assumed", w["p"]
            else:
                row["decided_by"], row["p"] = None, None
        rows.append(row)
    for r, adj in zip(rows, holm([r["p"] for r in rows])):
        r["p_holm"] = adj
    for r, adj in zip(rows, holm([r["within_run"]["p"] for r in rows])):
        r["within_run"]["p_holm"] = adj
    for r in rows:
        by = r["decided_by"]
        if by == "exact":
            rel, sig = r["mean_rel_change"], r["mean_diff"] != 0
        elif by in ("blocks", "runs", "drift"):
            rel, sig = r["between"]["rel_change"], r["p_holm"] < alpha
        elif by == "within_run_assumed":
            rel, sig = r["mean_rel_change"], r["p_holm"] < alpha
        else:
            rel, sig = None, False
        r["significant"] = bool(sig)
        r["regression"], r["improvement"] = _verdict(rel, higher_is_better, threshold, sig)
        r["verdict"] = _verdict_text(r)
    tested = sum(r["decided_by"] is not None for r in rows)
    warning = None
    if design == "runs" and any(r["decided_by"] in (None, "within_run_assumed") for r in rows
                                if not r["exact"]):
        warning = ASSUMED if assume_no_drift else NO_DRIFT_ESTIMATE
    return {"cells": rows, "skipped": skipped, "alpha": alpha, "threshold": threshold,
            "higher_is_better": higher_is_better, "n_boot": n_boot, "seed": seed,
            "regressions": sum(r["regression"] for r in rows),
            "improvements": sum(r["improvement"] for r in rows),
            "tested": tested, "untested": len(rows) - tested, "warning": warning,
            "assume_no_drift": assume_no_drift,
            "methods": methods(design, alpha, threshold, higher_is_better, n_boot, seed,
                               len(rows))}


def _verdict_text(r: dict) -> str:
    by, b = r["decided_by"], r["between"]
    star = "*" if by == "within_run_assumed" else ""
    if r["regression"]:
        return "REGRESSION" + star + (" (exact)" if by == "exact" else "")
    if r["improvement"]:
        return "improvement" + star + (" (exact)" if by == "exact" else "")
    if by == "exact":
        return "no difference (constant)" if r["exact"] == "constant" else \
            "exact difference, within the threshold"
    if by is None:
        return "no test"
    if r["significant"]:
        return "changed, within the threshold" + star
    if by == "drift":
        lo, hi = b["drift_band"]
        who = {"aa": "A/A", "base": "BASE runs’", "new": "NEW runs’"}[b["drift_from"]]
        return (f"within the {who} drift "
                f"({100 * lo:+.1f} %, {100 * hi:+.1f} %)")
    return "no change shown" + star


def methods(design, alpha, threshold, higher_is_better, n_boot, seed, cells) -> dict:
    conf = f"{100 * (1 - alpha):g} %"
    out = {
        "blocks": "interleaved campaign: per block, the log of NEW's mean minus the log of "
                  f"BASE's; paired t over the blocks holding both, {conf} CI of the ratio NEW / "
                  "BASE (R's t.test(log(new), log(base), paired = TRUE))",
        "runs": "each run is one unit: Welch's t on the log run means, {conf} CI of the ratio "
                "(R's t.test(log(new), log(base)))".replace("{conf}", conf),
        "drift": "too few runs a side for their own variance: the difference of the sides' "
                 "mean log run means against the spread of the A/A runs (--aa), else of the "
                 "side with more runs, s·√(1/k_base + 1/k_new) with k_drift − 1 df; assumes "
                 "the other side's runs vary as those do; 'within the drift' is the band "
                 "± t·s·√(1/k_base + 1/k_new) the log ratio stays within when nothing changed",
        "within_run": "per invocation, one population per side: difference of means with "
                      "Welch's t (R's t.test(new, base)), Holm over the cells; difference of "
                      f"medians with a bootstrap percentile interval ({n_boot} resamples, seed "
                      f"{seed}); not evidence between runs (they drift)",
        "exact": "no variation within either side (analyze's criterion): the difference is "
                 "stated exactly, with no test",
        "multiple_comparisons": f"Holm's step-down adjustment over the {cells} compared "
                                "cells' p-values (family-wise error ≤ α)",
        "regression": f"Holm-adjusted p < {alpha:g} (or an exact difference) and the mean "
                      f"{'fell' if higher_is_better else 'rose'} by more than "
                      f"{100 * threshold:g} % of BASE's",
        "minimums": "intervals and tests only from the sample sizes whose simulated coverage is "
                    "≥ 0.93 (compare/minimums.py); below, 'too few (n = …; needs ≥ …)'",
        "cv": "sd (n − 1) / mean", "p99": "99th percentile, linear interpolation (R type 7)"}
    drop = {"interleaved": ("runs", "drift"), "runs": ("blocks",)}[design]
    return {k: v for k, v in out.items() if k not in drop}


def _jsonable(x):
    """Levels tuples as lists and non-finite floats as None (JSON has neither)."""
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x
