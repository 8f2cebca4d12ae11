"""`analyze()`: the whole analysis of one data set, as the dict that `--format json` prints."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from faascope.analysis import cells as cells_mod
from faascope.analysis.anova import SS_TYPES, fit_anova
from faascope.analysis.decisions import decide
from faascope.analysis.design import build_design, build_design_from_codes
from faascope.analysis.diagnostics import check_assumptions, robust_checks
from faascope.analysis.intervals import interval_note
from faascope.analysis.io import prepare
from faascope.analysis.predictability import CRITERIA, cv_draws, cv_test, predictability
from faascope.analysis.tukey import tukey_all
from faascope.errors import BadInput

MODELS = ("full", "additive")
TRANSFORMS = ("none", "log")


def check_options(model, alpha, ss_type, transform, cv_threshold_pp, target_rel_halfwidth, n_boot,
                   cv_criterion="difference", cv_ratio=1.5):
    if model not in MODELS:
        raise BadInput(f"unknown model {model!r}; use full or additive", field="--model")
    if not (0 < alpha < 1):
        raise BadInput(f"alpha must be between 0 and 1, got {alpha}", field="--alpha")
    if str(ss_type).upper() not in SS_TYPES:
        raise BadInput(f"unknown sum-of-squares type {ss_type!r}; use 1, 2 or 3", field="--ss-type")
    if transform not in TRANSFORMS:
        raise BadInput(f"unknown transform {transform!r}; use none or log", field="--transform")
    if cv_threshold_pp < 0:
        raise BadInput("must not be negative", field="--cv-threshold")
    if not target_rel_halfwidth > 0:
        raise BadInput("must be positive", field="--target-rel-halfwidth")
    if n_boot < 0:
        raise BadInput("must not be negative", field="--bootstrap")
    if cv_criterion not in CRITERIA:
        raise BadInput(f"unknown criterion {cv_criterion!r}; use difference or ratio", field="--cv-criterion")
    if not (cv_ratio > 1 and math.isfinite(cv_ratio)):
        raise BadInput(f"must be a number above 1 (a ratio of CVs), got {cv_ratio}", field="--cv-ratio")


#: warn when the data's resolution (one ulp at the largest |y|) exceeds this share of their SD
PRECISION_WARN = 1e-6


def _precision_warning(design, response: str) -> str | None:
    """Digits lost when the values were stored as doubles: large values with a small spread
    (nanosecond timestamps). The fit itself is centred (design.py), so this is about the input."""
    if design.n < 2:
        return None
    sd = float(np.sqrt(design.sst / (design.n - 1)))
    res = design.resolution
    if sd == 0 or res <= PRECISION_WARN * sd:
        return None
    big = float(np.max(np.abs(design.y)))
    return (f"Precision: {response!r} is around {big:.3g} but varies by only {sd:.3g} (SD). Double precision "
            f"stores numbers of that size in steps of {res:.3g} ({100 * res / sd:.2g}% of the SD): any finer digit of "
            "the input was lost when it was read, and sums of squares computed from the raw values would lose "
            "the effects to rounding. faascope centres the values before fitting, so its results are exact for "
            "the values as stored; subtract a baseline (e.g. the first timestamp) before exporting to keep every "
            "digit.")


def _statement(design, status: str | None, response: str) -> str | None:
    """The plain statement given instead of F tests when there is nothing to test."""
    if status == "constant":
        vals = np.unique(design.y)
        what = f"every one of the {design.n} values is {vals[0]:g}" if len(vals) == 1 else (
            f"the {design.n} values differ by at most {np.ptp(design.y):.3g}, within rounding of their size")
        return (f"The response {response!r} is constant ({what}): there is no variation for the factors to "
                "explain, so no F test, p-value or Tukey comparison is given.")
    if status == "perfect_fit":
        return (f"A perfect fit: within every cell the values of {response!r} are identical (residual sum of squares "
                "0 up to rounding) while the cell means differ. With no residual variation there is nothing to "
                "test the effects against, so no F test, p-value or Tukey comparison is given; the sums of "
                "squares and cell means describe the data exactly. Replicate runs that vary are needed for a test.")
    return None


def cell_stats(df: pd.DataFrame, response: str, factors: list[str], alpha: float = 0.05,
               levels: dict[str, list[str]] | None = None, n_boot: int = 2000, seed: int = 0,
               target_rel_halfwidth: float = 0.05) -> list[dict]:
    """Per-cell statistics only (the "cells" list of the JSON)."""
    data, lv = prepare(df, response, factors, levels)
    design = build_design(data, response, factors, lv)
    return cells_mod.cell_stats_design(design, alpha, n_boot, seed, target_rel_halfwidth)


def ecdf(df: pd.DataFrame, response: str, factors: list[str],
         levels: dict[str, list[str]] | None = None) -> list[dict]:
    """Empirical CDF per cell: [{"levels": {...}, "x": sorted values, "F": i/n}]."""
    data, lv = prepare(df, response, factors, levels, min_rows=1)
    design = build_design(data, response, factors, lv)
    out = []
    for c, idx in enumerate(design.rows_of_cells()):
        x = np.sort(design.y[idx])
        out.append({"levels": design.cell_label(c), "x": x, "F": np.arange(1, len(x) + 1) / len(x)})
    return out


def analyze(df: pd.DataFrame, response: str, factors: list[str], model: str = "full",
            alpha: float = 0.05, *, ss_type: str = "II", transform: str = "none",
            levels: dict[str, list[str]] | None = None, tukey_ordered: bool = False,
            robust: bool = True, compare: str | None = None, cv_threshold_pp: float = 10.0,
            target_rel_halfwidth: float = 0.05, n_boot: int = 2000, seed: int = 0,
            bootstrap_max_n: int = 5000, cv_criterion: str = "difference", cv_ratio: float = 1.5,
            higher_is_better: bool = False) -> dict:
    """Analyse `response` against `factors` in `df`; returns the `--format json` structure.

    `levels` fixes the order of some factors' levels (default: numeric order when every level is
    a number, else sorted text, like R's factor()). `compare` is the factor the decision table
    ranks (default: the first factor). `cv_criterion` is "difference" (|ΔCV| ≥ cv_threshold_pp) or
    "ratio" (CV ratio ≥ cv_ratio), each where the CV test separates the levels (predictability.py,
    cv_test.py; `n_boot` re-allocations, 2000 when 0).
    `higher_is_better`: the decision table's best level is the one with the highest mean
    (throughput), and its orderings run from the highest down ("a > b = c").
    """
    factors = list(factors)
    check_options(model, alpha, ss_type, transform, cv_threshold_pp, target_rel_halfwidth, n_boot,
                   cv_criterion, cv_ratio)
    compare = factors[0] if compare is None else compare
    if compare not in factors:
        raise BadInput(f"{compare!r} is not one of the factors ({', '.join(factors)})", field="--compare")
    additive = model == "additive"
    data, lv = prepare(df, response, factors, levels, min_rows=1 if additive else 2, allow_empty_cells=additive)
    raw = build_design(data, response, factors, lv)
    if transform == "log":
        if not np.all(raw.y > 0):
            raise BadInput(f"--transform log needs a positive response; {response!r} has "
                           f"{int((raw.y <= 0).sum())} value(s) ≤ 0", field="--transform")
        primary = raw.with_response(np.log(raw.y))
    else:
        primary = raw
    ss_key = SS_TYPES[str(ss_type).upper()]

    cells = cells_mod.cell_stats_design(raw, alpha, n_boot, seed, target_rel_halfwidth, bootstrap_max_n)
    try:
        fit = fit_anova(primary, model, ss_key, alpha)
    except ValueError as exc:  # an additive model on a design that is not connected, or too few rows
        why = ("some effects are confounded by the missing cells" if "rank deficient" in str(exc) else
               "add rows (replications) or drop a factor")
        raise BadInput(f"the {model} model cannot be fitted: {exc}; {why}", field="--factors") from exc
    tukey = tukey_all(fit, alpha, tukey_ordered)
    statement = _statement(primary, fit.status, response)

    diag_summary, normal_cells, warnings = check_assumptions(primary, alpha)
    for c, nrm in zip(cells, normal_cells):
        c["normality"] = nrm
    if statement:
        warnings.insert(0, statement)
    precision = _precision_warning(raw, response)
    if precision:
        warnings.append(precision)
    robust_out = None
    if robust and fit.tested:
        robust_out, rw = robust_checks(primary, model, alpha, ss_key, fit.rows, transform)
        warnings += rw

    cell_cv = np.array([c["cv"] if c["cv"] is not None else np.nan for c in cells], dtype=float)
    draws = cv_draws(raw, n_boot, seed, bootstrap_max_n)
    test = cv_test(raw, n_boot, seed)   # one set of permutations serves both
    pred = predictability(raw, cell_cv, draws, alpha, cv_threshold_pp, cv_criterion, cv_ratio, test)
    decisions = decide(fit, cell_cv, draws, factors.index(compare), alpha, cv_threshold_pp, raw.means,
                       cv_criterion, cv_ratio, higher_is_better=higher_is_better, transform=transform,
                       cv_design=raw, test=test)

    small = [c for c in cells if c["ci_halfwidth_rel"] is not None and c["ci_halfwidth_rel"] > target_rel_halfwidth]
    if small:
        worst = max(small, key=lambda c: c["ci_halfwidth_rel"])
        warnings.append(
            f"{len(small)} of {len(cells)} cells have a {100 * (1 - alpha):g}% CI of the mean wider than "
            f"±{100 * target_rel_halfwidth:g}% of the mean (worst: "
            f"{', '.join(f'{k}={v}' for k, v in worst['levels'].items())}, "
            f"±{100 * worst['ci_halfwidth_rel']:.3g}%; about {worst['n_for_target']} replications would reach the target).")
    notes = [
        "Quantiles use numpy's 'linear' method (R type 7).",
        "Median CI: order statistics with binomial coverage (exact ranks); null when n is too small.",
        interval_note(n_boot),
        ("Balanced design: Type I, II and III sums of squares coincide." if raw.balanced else
         f"Unbalanced design: Type {ss_key} sums of squares; they need not add up to the total, so "
         "pct_variation need not sum to 100. Tukey uses R's TukeyHSD conventions (model.tables "
         "means, Tukey-Kramer standard errors)."),
    ]
    if not raw.complete:
        missing = [", ".join(f"{f}={v}" for f, v in zip(factors, combo))
                   for combo in itertools.product(*(lv[f] for f in factors))
                   if raw.cell_of(tuple(lv[f].index(v) for f, v in zip(factors, combo))) is None]
        notes.append(f"{len(missing)} level combination(s) have no data ({'; '.join(missing[:5])}"
                     f"{'; …' if len(missing) > 5 else ''}); the additive model is fitted to the cells "
                     "present, and the aligned-rank test, which needs every cell, is skipped.")
    if robust and not fit.tested:
        notes.append("Robustness checks skipped: with no F test there is nothing to check.")
    if transform == "log":
        notes.append("ANOVA and Tukey are on log(response): Tukey differences are log ratios "
                     "(exp(meandiff) = ratio of geometric means); cell statistics stay on the original scale. "
                     "The decision table compares the levels on the log scale too: its means are geometric "
                     "(exp of the estimated marginal means of log(response)).")

    return {
        "response": response, "factors": factors, "model": model, "alpha": alpha, "n": raw.n,
        "cells": cells, "anova": fit.rows, "tukey": tukey, "anova_statement": statement,
        "fit_status": fit.status,
        "ss_type": ss_key, "balanced": raw.balanced, "transform": transform,
        "levels": lv, "total_sum_sq": primary.sst, "grand_mean": primary.grand_mean,
        "quantile_method": "linear (R type 7)", "tukey_ordered": tukey_ordered,
        "diagnostics": diag_summary, "robust": robust_out,
        "predictability": {"criterion": cv_criterion, "threshold_pp": cv_threshold_pp,
                           "ratio_threshold": cv_ratio, "factors": pred},
        "decisions": decisions, "compare": compare,
        "target_rel_halfwidth": target_rel_halfwidth,
        "warnings": warnings, "notes": notes,
    }


def describe(df: pd.DataFrame, response: str, alpha: float = 0.05, *, cold: pd.Series | None = None,
             n_boot: int = 2000, seed: int = 0, target_rel_halfwidth: float = 0.05,
             bootstrap_max_n: int = 5000) -> dict:
    """The data described, not compared: a campaign with no factors (one configuration measured
    again and again, the most common first campaign) or a scenario where every factor has one
    level. One cell's statistics (percentiles, mean and median with their CIs, CV), and the same
    for cold and warm invocations apart when ``cold`` (True/False per row) says which were
    cold: a mixture of the two is not one distribution. The keys of ``analyze()``'s output, with
    no ANOVA, Tukey or decisions, and ``described`` true."""
    y = pd.to_numeric(df[response], errors="coerce").to_numpy(dtype=float)
    if len(y) == 0:
        raise BadInput("no rows to describe", field="INPUT")

    def stats_of(values: np.ndarray, label: dict) -> dict:
        design = build_design_from_codes(["all"], {"all": ["all"]}, values,
                                         np.zeros((len(values), 1), dtype=np.int64))
        row = cells_mod.cell_stats_design(design, alpha, n_boot, seed, target_rel_halfwidth,
                                          bootstrap_max_n)[0]
        row["levels"] = label
        return row

    cells = [stats_of(y, {})]
    groups, notes, warnings = [], [], []
    if cold is not None:
        c = cold.reindex(df.index)
        for name, want in (("cold", True), ("warm", False)):
            sel = (c == want).fillna(False).to_numpy(dtype=bool)
            if sel.any():
                groups.append(stats_of(y[sel], {"start": name}))
        unknown = int(c.isna().sum())
        if groups:
            n_cold = int((c == True).sum())  # noqa: E712 - a nullable boolean column
            notes.append(f"{n_cold} of {len(y)} invocations were cold starts"
                         + (f" ({unknown} unknown)" if unknown else "")
                         + "; cold and warm are described apart below the whole.")
    rel = cells[0].get("ci_halfwidth_rel")
    if rel is not None and rel > target_rel_halfwidth:
        warnings.append(f"The {100 * (1 - alpha):g}% CI of the mean is ±{100 * rel:.3g}% of the mean, wider than "
                        f"±{100 * target_rel_halfwidth:g}%; about {cells[0]['n_for_target']} replications would "
                        "reach it.")
    return {"response": response, "factors": [], "model": None, "alpha": alpha, "n": int(len(y)),
            "cells": cells, "cold_warm": groups, "anova": [], "tukey": [], "anova_statement": None,
            "fit_status": None, "decisions": [], "compare": None, "described": True,
            "target_rel_halfwidth": target_rel_halfwidth, "quantile_method": "linear (R type 7)",
            "warnings": warnings,
            "notes": ["No factor varies here: the data are described (percentiles, CIs, CV), not "
                      "compared."] + notes}


def clean_json(obj):
    """Replace NaN/inf by None and numpy scalars by Python ones (strict JSON)."""
    if isinstance(obj, dict):
        return {str(k): clean_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean_json(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [clean_json(v) for v in obj.tolist()]
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    return obj
