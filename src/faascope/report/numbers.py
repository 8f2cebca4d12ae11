"""Numbers as the report prints them: durations and other measured values auto-scaled with an SI
prefix (``36.4 µs``, ``1.25 s``), money with enough digits to tell cells apart, never
``3.6e-05 s``. The figures use the same prefixes (plotly's SI exponent format and matplotlib's
EngFormatter), so a table and a figure agree."""
from __future__ import annotations

import math

from faascope.analysis.intervals import without_ci
from faascope.units import si_prefix as prefix_for  # one choice of prefix for tables, axes and the terminal

def si(value: float | None, unit: str, digits: int = 3, ref: float | None = None) -> str:
    """``value`` with an SI prefix and `digits` significant digits: si(3.6e-05, "s") = "36.0 µs".
    ``ref``: scale as that value would be (to print a CI in the unit of its centre)."""
    if value is None or not math.isfinite(value):
        return "–"
    f, p = prefix_for(value if ref is None else ref)
    x = value / f
    # significant digits of the scaled value, without scientific notation
    mag = math.floor(math.log10(abs(x))) if x else 0
    dec = max(0, digits - 1 - mag)
    return f"{x:.{dec}f} {p}{unit}"


#: the mark of an interval's lower end clipped at zero. The intervals of durations, rates and
#: prices are on the log scale and stay positive (faascope.analysis.intervals); this mark is the
#: one guard, shared by every table, should any other interval of a non-negative quantity reach
#: below zero
CLIPPED = "0*"
CLIPPED_NOTE = ("0* = the interval reaches below zero; a duration or a price cannot, so it is shown from 0.")


def si_ci(centre: float | None, ci, unit: str, digits: int = 3, nonnegative: bool = True,
          why: str | None = None) -> str:
    """"1.23 s [1.20, 1.26]": a centre and its interval, all in the centre's prefix; a lower end
    below zero of a quantity that cannot be negative is shown as 0* (:data:`CLIPPED`). Without an
    interval, the centre and `why` there is none."""
    head = si(centre, unit, digits)
    if not ci or centre is None or not math.isfinite(centre) or not all(
            v is not None and math.isfinite(v) for v in ci):
        return without_ci(head, why)
    f, p = prefix_for(centre)
    num = head.rsplit(" ", 1)[0]
    dec = len(num.split(".")[1]) if "." in num else 0
    lo = CLIPPED if nonnegative and ci[0] < 0 else f"{ci[0] / f:.{dec}f}"
    return f"{head} [{lo}, {ci[1] / f:.{dec}f}]"


def money(value: float | None, digits: int = 3) -> str:
    """US dollars with `digits` significant digits: $0.0123, $1.23, $1,234."""
    if value is None or not math.isfinite(value):
        return "–"
    if value == 0:
        return "$0"
    mag = math.floor(math.log10(abs(value)))
    dec = max(0, digits - 1 - mag)
    return f"${value:,.{dec}f}"


def money_ci(centre: float | None, ci, digits: int = 3, why: str | None = None) -> str:
    """"$1.23 [1.20, 1.26]" (as :func:`si_ci`)."""
    head = money(centre, digits)
    if not ci or centre is None or not math.isfinite(centre) or centre == 0:
        return without_ci(head, why)
    mag = math.floor(math.log10(abs(centre)))
    dec = max(0, digits - 1 - mag)
    lo = CLIPPED if ci[0] < 0 else f"{ci[0]:,.{dec}f}"
    return f"{head} [{lo}, {ci[1]:,.{dec}f}]"


def ratio(v: float | None) -> str:
    """1.4×, 39×, 4,639×."""
    if v is None or not math.isfinite(v):
        return "–"
    return f"{v:.2g}×" if v < 10 else f"{v:,.0f}×"


def fmt_duration(seconds: float | None) -> str:
    """A span of wall-clock time: "2 h 5 min 3 s", "4 d 1 h 2 min" (at most three parts)."""
    if seconds is None or not math.isfinite(seconds):
        return "–"
    s = int(round(seconds))
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    parts = [f"{d} d"] * bool(d) + [f"{h} h"] * bool(h) + [f"{m} min"] * bool(m) + [f"{s} s"] * (bool(s) or not (d or h or m))
    return " ".join(parts[:3])
