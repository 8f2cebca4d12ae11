"""An application's phases per cell: how its time splits into reading its input, computing and
writing its output (the ``app`` workload's ``read_s``, ``compute_s``, ``write_s``; the S3-vs-EFS
study's breakdown, Roy et al., IISWC 2021).

Means per cell with Student-t intervals over invocations (:mod:`faascope.analysis.per_cell`).
The means of the phases add up to the mean of their sum, so a stacked bar of the means is the
mean time of the three phases together.
"""
from __future__ import annotations

import pandas as pd

from faascope.analysis.per_cell import cell_means

PHASES = ["read_s", "compute_s", "write_s"]


def has_phases(df: pd.DataFrame) -> bool:
    """Whether some invocation has two or more phases (an app-shaped workload). A workload with
    one phase (a fileio write) is that phase; the report's main analysis already shows it."""
    cols = [c for c in PHASES if c in df.columns]
    if len(cols) < 2:
        return False
    present = df[cols].apply(pd.to_numeric, errors="coerce").notna().sum(axis=1)
    return bool((present >= 2).any())


def phase_means(df: pd.DataFrame, factors: list[str], alpha: float = 0.05) -> pd.DataFrame:
    """Per cell and phase: n, mean, CI, median (a phase the workload does not have is 0 s in a
    stacked bar, so missing phases of an app row count as absent, not as zero)."""
    return cell_means(df, factors, PHASES, alpha)
