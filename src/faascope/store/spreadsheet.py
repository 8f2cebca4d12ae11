"""CSV that a spreadsheet opens as data, never as formulas (OWASP, "CSV Injection").

A text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is run as a
formula by Excel, LibreOffice and Google Sheets (``=HYPERLINK(...)``, ``@SUM(...)``, DDE). Text in
a results file comes from outside faascope's control (a function's error message and log tail,
factor levels, a platform's request id), so every CSV faascope writes neutralises such cells as
OWASP recommends: a single quote in front, which the spreadsheet shows as text and does not
evaluate. Numbers are left alone: numeric columns are never touched, and a text cell that is
just a number (``-3``, ``+1.5e3``: no formula can hide in it) stays as it is, so a negative
number still reads as a number.

Records end in CRLF, as RFC 4180 has them: Python's csv writer quotes a cell that holds a
character of the line terminator, so with pandas' ``\n`` a bare carriage return inside a cell
was written unquoted, and spreadsheets (and Python's csv reader) broke the row there: the
rest of the cell, ``=1+1`` say, became a new row's first cell, a formula again.
"""
from __future__ import annotations

import re
from typing import Any, Optional

import pandas as pd

#: the first characters that make a spreadsheet read a cell as a formula (OWASP CSV Injection)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: a plain decimal number, which a spreadsheet reads as a number whatever its sign
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def neutralise(value: Any) -> Any:
    """``value`` with a single quote in front when it is text a spreadsheet would evaluate."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def formula_safe(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells (and column names) are :func:`neutralise`\\ d; numeric
    columns are returned as they are."""
    out = df.copy()
    for col in df.columns:
        dtype = df[col].dtype
        if dtype == object or isinstance(dtype, (pd.StringDtype, pd.CategoricalDtype)):
            out[col] = df[col].astype(object).map(neutralise)
    out.columns = [neutralise(c) for c in df.columns]
    return out


#: RFC 4180's record separator (see the module's docstring for why it matters here)
LINE_END = "\r\n"


def to_csv(df: pd.DataFrame, target: Optional[Any] = None) -> Optional[str]:
    """``df`` as CSV (no index) with :func:`formula_safe` cells and RFC 4180 line ends, written
    to ``target`` (a path or a text stream), or returned as text when ``target`` is None."""
    return formula_safe(df).to_csv(target, index=False, lineterminator=LINE_END)
