"""Several inputs, one table: what `analyze`, `report` and `compare` read when given more than one
results store, CSV or Parquet file (through :func:`faascope.analysis.dataset.load_dataset`).

Each input is read as `load_table` reads it alone (a store's warm-ups and failed invocations left
out), and the rows are stacked with a column ``source`` naming the input (its file name; the
path when two inputs share a name). Before stacking, the factors must mean the same thing in
every input, else the inputs are refused (exit 2) naming the factor:

- results stores record their factors (name, the spec field it sets, normalised levels): every
  store must have the same factor names, each setting the same field;
- in every input, a factor column the analysis uses must exist and hold the same kind of levels:
  numbers everywhere (stores record sizes as bytes and memory as MB, so they agree by
  construction), or text everywhere. A column of numbers in one input and of text in another
  (``10000`` vs ``10KB``) is a unit the inputs do not share.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from faascope.analysis.io import load_table
from faascope.errors import BadInput
from faascope.store.reader import ResultsFile, is_results_path

#: the column naming each row's input
SOURCE = "source"


@dataclass
class InputFile:
    """One input: its name (the ``source`` value), path, rows, and, for a results store, its
    recorded factors ({name: field}) and their levels."""

    name: str
    path: Path
    df: pd.DataFrame
    factors: dict[str, str] | None = None
    factor_levels: dict[str, list] = field(default_factory=dict)

    @property
    def is_store(self) -> bool:
        return self.factors is not None

    @property
    def factor_meta(self) -> list[dict]:
        """The recorded factors as a campaign lists them ({name, field, levels})."""
        return [{"name": n, "field": f, "levels": self.factor_levels.get(n, [])}
                for n, f in (self.factors or {}).items()]


def source_names(paths: Sequence[str | Path]) -> list[str]:
    """Each input's name: its file name, or its path where two inputs share a file name."""
    names = [Path(p).name for p in paths]
    return [str(p) if names.count(n) > 1 else n for p, n in zip(paths, names)]


def read_sources(paths: Sequence[str | Path], *, sep: str | None = None,
                 decimal: str | None = None) -> list[InputFile]:
    if len(set(map(str, paths))) != len(paths):
        dup = next(p for p in paths if list(map(str, paths)).count(str(p)) > 1)
        raise BadInput(f"{dup} is given twice", field="INPUT")
    out = []
    for name, p in zip(source_names(paths), paths):
        df = load_table(p, sep=sep, decimal=decimal)
        factors, levels = None, {}
        if is_results_path(p):
            with ResultsFile(p, field="INPUT") as rf:
                meta = rf.campaign_meta()["campaign"].get("factors") or []
            factors = {f["name"]: f.get("field") or f["name"] for f in meta}
            levels = {f["name"]: list(f.get("levels") or []) for f in meta}
        if SOURCE in df.columns:
            raise BadInput(f"{name} already has a column {SOURCE!r}; with several inputs that "
                           "column names each row's input (rename it first, e.g. with faascope "
                           "export and a CSV tool)", field="INPUT")
        out.append(InputFile(name, Path(p), df, factors, levels))
    return out


def _kind(values: pd.Series) -> str:
    """"number" when every non-missing value reads as a number, else "text"."""
    v = values.dropna()
    if v.dtype == object:
        v = v[v.astype(str).str.strip() != ""]
    if v.empty:
        return "empty"
    if pd.api.types.is_bool_dtype(v):
        return "text"  # booleans are recorded as true/false levels
    return "number" if pd.to_numeric(v, errors="coerce").notna().all() else "text"


def check_factors(sources: Sequence[InputFile], factors: Sequence[str]) -> None:
    """BadInput (exit 2) naming the factor when the inputs disagree on what it is."""
    stores = [s for s in sources if s.is_store]
    if stores:
        first = stores[0]
        for s in stores[1:]:
            for name in sorted(set(first.factors) ^ set(s.factors)):
                has, lacks = (first, s) if name in first.factors else (s, first)
                raise BadInput(f"factor {name!r} is a factor of {has.name} but not of "
                               f"{lacks.name}; inputs analysed together need the same factors",
                               field=f"factor {name}")
            for name in first.factors:
                if first.factors[name] != s.factors[name]:
                    raise BadInput(f"factor {name!r} sets {first.factors[name]} in {first.name} "
                                   f"but {s.factors[name]} in {s.name}: not the same factor",
                                   field=f"factor {name}")
    for name in factors:
        kinds = {}
        for s in sources:
            if name not in s.df.columns:
                raise BadInput(f"no column {name!r} in {s.name} (columns: "
                               f"{', '.join(map(str, s.df.columns[:30]))})", field=f"factor {name}")
            k = _kind(s.df[name])
            if k != "empty":
                kinds[s.name] = k
        if len(set(kinds.values())) > 1:
            num = next(n for n, k in kinds.items() if k == "number")
            txt = next(n for n, k in kinds.items() if k == "text")
            sample = next(str(v) for v in sources[[s.name for s in sources].index(txt)].df[name]
                          if pd.to_numeric(pd.Series([v]), errors="coerce").isna().all())
            raise BadInput(f"factor {name!r} holds numbers in {num} but text in {txt} (e.g. "
                           f"{sample!r}): the inputs do not share its unit; write it as a number "
                           "(sizes in bytes, memory in MB) everywhere", field=f"factor {name}")


def stack(sources: Sequence[InputFile]) -> pd.DataFrame:
    """The inputs' rows, one table, with the ``source`` column first; notes of every input kept
    (prefixed with its name)."""
    frames, notes = [], []
    for s in sources:
        df = s.df.copy()
        df.insert(0, SOURCE, s.name)
        frames.append(df)
        notes += [f"{s.name}: {n}" for n in s.df.attrs.get("notes", [])]
    out = pd.concat(frames, ignore_index=True, sort=False)  # mixed column types become object
    out.attrs["notes"] = notes
    out.attrs["sources"] = [s.name for s in sources]
    return out


def common_factors(paths: Sequence[str | Path]) -> list[str]:
    """The factors the results stores among ``paths`` recorded (in the first store's order);
    [] when none is a store."""
    for p in paths:
        if is_results_path(p):
            with ResultsFile(p, field="INPUT") as rf:
                return rf.factor_names()
    return []
