"""The factorial design reduced to its cells.

Every model faascope fits has only categorical predictors, so each row's design-matrix row is the
same within a cell. All least-squares quantities therefore follow exactly from per-cell counts,
means and within-cell sums of squares:

    ||y - X b||^2 = SS_within + sum_c n_c (mean_c - x_c b)^2

which is why ANOVA on a million rows costs one pass over the data plus a weighted fit on a few
dozen cells (no formula machinery, no N x p matrix). The within-cell sums of squares are computed
in two passes (about each cell's mean), so there is no cancellation even when latencies are large
and their spread small.

The response is centred before anything is summed: `offset` is one of the data values (the
median row), so y - offset is exact for values of one magnitude (Sterbenz), and every mean and
sum of squares is computed from the centred values. Responses around 1.7e15 ± 5 (nanosecond
timestamps) otherwise lose their effects to rounding (Type I SS off by 30 %, issue #19).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

Term = tuple[int, ...]  # indices into Design.factors, in the order the factors were given


@dataclass
class Design:
    factors: list[str]
    levels: dict[str, list[str]]
    y: np.ndarray            # (N,) response
    codes: np.ndarray        # (N, k) level index per factor
    row_cell: np.ndarray     # (N,) cell index; cells with data, in itertools.product order (first factor slowest)
    cell_codes: np.ndarray   # (C, k) level index per factor for each cell
    counts: np.ndarray       # (C,) rows per cell
    means: np.ndarray        # (C,) cell means
    ss_within: np.ndarray    # (C,) sum of squares about the cell mean
    offset: float = 0.0      # a data value; the statistics are computed from y - offset
    cmeans: np.ndarray | None = None  # (C,) cell means of y - offset (what the fits use)
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.cmeans is None:
            self.cmeans = self.means - self.offset

    @property
    def n(self) -> int:
        return int(self.y.shape[0])

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(self.levels[f]) for f in self.factors)

    @property
    def centred_grand_mean(self) -> float:
        return float(np.dot(self.counts, self.cmeans) / self.counts.sum())

    @property
    def grand_mean(self) -> float:
        return self.offset + self.centred_grand_mean

    @property
    def sst(self) -> float:
        """Total sum of squares about the grand mean (within + between cells)."""
        return float(self.ss_within.sum() + np.dot(self.counts, (self.cmeans - self.centred_grand_mean) ** 2))

    @property
    def resolution(self) -> float:
        """Spacing of double-precision numbers at the largest |response| (one ulp): no digit
        finer than this survives reading the data."""
        return float(np.spacing(np.max(np.abs(self.y)))) if self.n else 0.0

    @property
    def balanced(self) -> bool:
        return self.complete and bool(np.all(self.counts == self.counts[0]))

    @property
    def complete(self) -> bool:
        """Every combination of levels has data."""
        return len(self.counts) == int(np.prod(self.shape))

    def cell_of(self, codes: tuple[int, ...]) -> int | None:
        """Index of the cell with these level codes, or None when it has no data."""
        hit = np.flatnonzero((self.cell_codes == np.asarray(codes)).all(axis=1))
        return int(hit[0]) if len(hit) else None

    def cell_label(self, c: int) -> dict[str, str]:
        return {f: self.levels[f][self.cell_codes[c, j]] for j, f in enumerate(self.factors)}

    def with_response(self, y: np.ndarray) -> "Design":
        """The same design with another response (e.g. log latency or aligned ranks)."""
        return build_design_from_codes(self.factors, self.levels, np.asarray(y, dtype=float), self.codes)

    def rows_of_cells(self) -> list[np.ndarray]:
        """Row indices per cell (a stable grouping; one argsort)."""
        order = np.argsort(self.row_cell, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(self.counts)])
        return [order[bounds[c]:bounds[c + 1]] for c in range(len(self.counts))]


def build_design(data: pd.DataFrame, response: str, factors: list[str],
                 levels: dict[str, list[str]]) -> Design:
    codes = np.empty((len(data), len(factors)), dtype=np.int64)
    for j, f in enumerate(factors):
        col = data[f]
        if isinstance(col.dtype, pd.CategoricalDtype) and list(col.cat.categories) == list(levels[f]):
            codes[:, j] = col.cat.codes.to_numpy()  # prepare() output: no re-hashing
            continue
        cat = pd.Categorical(col.astype(str).to_numpy(), categories=levels[f])
        if (cat.codes < 0).any():
            raise ValueError(f"factor {f} has values outside its levels")
        codes[:, j] = cat.codes
    return build_design_from_codes(factors, levels, data[response].to_numpy(dtype=float), codes)


def build_design_from_codes(factors, levels, y, codes) -> Design:
    """Cells are the level combinations present in the data, in itertools.product order."""
    shape = tuple(len(levels[f]) for f in factors)
    full_index = np.ravel_multi_index(tuple(codes.T), shape)
    n_full = int(np.prod(shape))
    present_counts = np.bincount(full_index, minlength=n_full)
    present = np.flatnonzero(present_counts)
    compact = np.full(n_full, -1, dtype=np.int64)
    compact[present] = np.arange(len(present))
    row_cell = compact[full_index]
    n_cells = len(present)
    counts = present_counts[present]
    offset = float(np.partition(y, len(y) // 2)[len(y) // 2]) if len(y) else 0.0
    yc = y - offset
    cmeans = np.bincount(row_cell, weights=yc, minlength=n_cells) / counts
    dev = yc - cmeans[row_cell]
    # second pass: correct the mean for rounding, then sum squares about it
    cmeans = cmeans + np.bincount(row_cell, weights=dev, minlength=n_cells) / counts
    dev = yc - cmeans[row_cell]
    ss_within = np.bincount(row_cell, weights=dev * dev, minlength=n_cells)
    # a cell of identical values has no spread, whatever the rounding of its mean
    first = _first_rows(row_cell, n_cells)
    flat = np.bincount(row_cell, weights=(yc != yc[first][row_cell]), minlength=n_cells) == 0
    ss_within[flat] = 0.0
    cmeans[flat] = yc[first][flat]
    means = offset + cmeans
    means[flat] = y[first][flat]
    cell_codes = np.stack(np.unravel_index(present, shape), axis=1).astype(np.int64).reshape(n_cells, len(factors))
    return Design(list(factors), {f: list(levels[f]) for f in factors}, y, codes, row_cell,
                  cell_codes, counts, means, ss_within, offset=offset, cmeans=cmeans)


def _first_rows(row_cell: np.ndarray, n_cells: int) -> np.ndarray:
    first = np.full(n_cells, -1, dtype=np.int64)
    first[row_cell[::-1]] = np.arange(len(row_cell))[::-1]
    return first


def model_terms(n_factors: int, model: str) -> list[Term]:
    """Terms in the order of R's `terms()` for y ~ A*B*C*…: by degree, and within a degree in the
    order the formula's expansion produces them, which is the order of the terms' factor bit sets
    (A:B, A:C, B:C, A:D, B:D, C:D, … - not itertools.combinations' A:B, A:C, A:D, B:C, …). With
    unbalanced data the order changes Type I sums of squares and Tukey's model.tables means."""
    if model == "additive":
        return [(j,) for j in range(n_factors)]
    if model == "full":
        terms = [t for r in range(1, n_factors + 1) for t in itertools.combinations(range(n_factors), r)]
        return sorted(terms, key=lambda t: (len(t), sum(1 << j for j in t)))
    raise ValueError(f"unknown model {model!r}")


def term_name(design: Design, term: Term) -> str:
    return ":".join(design.factors[j] for j in term)


def sum_contrasts(n_levels: int) -> np.ndarray:
    """R's contr.sum: level i < L gets the unit vector e_i, the last level gets -1 everywhere."""
    m = np.zeros((n_levels, n_levels - 1))
    m[: n_levels - 1] = np.eye(n_levels - 1)
    m[n_levels - 1] = -1.0
    return m


def cell_design_matrix(design: Design, terms: list[Term],
                       codes: np.ndarray | None = None) -> tuple[np.ndarray, dict[Term, slice]]:
    """Cell-level model matrix (C x p) with sum contrasts, intercept first, then each term's columns
    (row-wise products of its factors' contrast columns), and each term's column slice. `codes`:
    the level combinations to make rows for (default the design's cells; e.g. every combination,
    empty ones included, for estimated marginal means)."""
    codes = design.cell_codes if codes is None else np.asarray(codes, dtype=np.int64)
    n_cells = len(codes)
    blocks = [np.ones((n_cells, 1))]
    slices: dict[Term, slice] = {}
    start = 1
    contr = [sum_contrasts(len(design.levels[f]))[codes[:, j]]
             for j, f in enumerate(design.factors)]
    for t in terms:
        block = contr[t[0]]
        for j in t[1:]:
            block = (block[:, :, None] * contr[j][:, None, :]).reshape(n_cells, -1)
        blocks.append(block)
        slices[t] = slice(start, start + block.shape[1])
        start += block.shape[1]
    return np.hstack(blocks), slices


def term_df(design: Design, term: Term) -> int:
    return int(np.prod([len(design.levels[design.factors[j]]) - 1 for j in term]))
