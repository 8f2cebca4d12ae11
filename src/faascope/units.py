"""Exact sizes and durations.

Sizes are integers in bytes. Decimal units are powers of 1000 and binary units powers of 1024,
exactly as IEC 80000-13 says, whatever other tools do:

    B = 1    kB = KB = 1000      KiB = 1024
             MB = 1000**2        MiB = 1024**2
             GB = 1000**3        GiB = 1024**3
             TB = 1000**4        TiB = 1024**4

Units are matched case-insensitively (``10kb`` is 10,000 bytes, ``10kib`` 10,240). Fractions are
allowed when the result is a whole number of bytes (``1.5KiB`` = 1,536; ``1.5B`` is an error).
Ambiguous spellings that other tools read in different ways (``128k``, ``1M``, ``1G``: dd reads
``128k`` as 131,072, others as 128,000) are rejected with a message saying what to write instead.
Bare integers are bytes.

One exception, because it is what the platforms mean: a function's memory is given in Lambda's
"MB", which is really MiB (``MemorySize=128`` is 134,217,728 bytes). :func:`memory_mb_to_bytes`
does that conversion; the spec's ``memory_mb`` and ``ephemeral_mb`` are such numbers.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

UNITS: dict[str, int] = {
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_AMBIGUOUS = {"k", "m", "g", "t", "ki", "mi", "gi", "ti"}

# a number followed by a unit (possibly with spaces between)
SIZE_RE = re.compile(r"^\s*(?P<num>\d+(?:\.\d+)?|\.\d+)\s*(?P<unit>[A-Za-z]*)\s*$")

MIB = 1024**2


class SizeError(ValueError):
    """A size that could not be read; the message says what is allowed."""


def parse_size(value: object) -> int:
    """Return ``value`` in bytes: an int (bytes) or a string like ``512B``, ``10KB``, ``1GiB``."""
    if isinstance(value, bool):
        raise SizeError(f"expected a size, got the boolean {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise SizeError(f"a size cannot be negative: {value}")
        return value
    if isinstance(value, float):
        if value.is_integer() and value >= 0:
            return int(value)
        raise SizeError(f"a size in bytes must be a whole number, got {value!r}")
    if not isinstance(value, str):
        raise SizeError(f"expected a size such as 512B, 10KB or 1GiB, got {value!r}")
    m = SIZE_RE.match(value)
    if not m:
        raise SizeError(
            f"cannot read {value!r} as a size; write a number and one of the units "
            f"{', '.join(sorted(UNITS, key=UNITS.get))} (e.g. 512B, 10KB, 128KiB, 1GiB)"
        )
    num, unit = m.group("num"), m.group("unit").lower()
    if unit == "":
        factor = 1
    elif unit in UNITS:
        factor = UNITS[unit]
    elif unit in _AMBIGUOUS:
        dec = unit[0].upper() + "B"
        binary = unit[0].upper() + "iB"
        raise SizeError(
            f"{value!r} is ambiguous (tools disagree whether {unit!r} means 1000 or 1024); "
            f"write {num}{dec} (decimal) or {num}{binary} (binary)"
        )
    else:
        raise SizeError(
            f"unknown size unit {m.group('unit')!r} in {value!r}; allowed units: "
            "B, KB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024)"
        )
    try:
        exact = Decimal(num) * factor
    except InvalidOperation as exc:  # pragma: no cover - the regex already guarantees a number
        raise SizeError(f"cannot read {value!r} as a size") from exc
    if exact != exact.to_integral_value():
        raise SizeError(f"{value!r} is not a whole number of bytes ({exact} B)")
    return int(exact)


def format_size(n: int) -> str:
    """A short, exact spelling of ``n`` bytes that :func:`parse_size` reads back to ``n``.

    Uses the largest unit that divides ``n`` exactly (at equal magnitude decimal before binary:
    128,000 is ``128KB``, 131,072 is ``128KiB``); falls back to plain bytes.
    """
    if n == 0:
        return "0B"
    for unit, factor in (("TB", 1000**4), ("TiB", 1024**4), ("GB", 1000**3), ("GiB", 1024**3),
                         ("MB", 1000**2), ("MiB", 1024**2), ("KB", 1000), ("KiB", 1024)):
        if n % factor == 0:
            return f"{n // factor}{unit}"
    return f"{n}B"


#: SI prefixes from nano to giga, the range a measured duration, size or rate needs
SI_PREFIXES = [(1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]


def si_prefix(value: float, largest: float = 1e9, smallest: float = 1e-9) -> tuple[float, str]:
    """The (factor, prefix) that puts |value| in [1, 1000), between ``smallest`` and ``largest``
    (the one choice of prefix every printed figure and axis in faascope makes)."""
    a = abs(value)
    usable = [(f, p) for f, p in SI_PREFIXES if smallest <= f <= largest]
    if a == 0 or not math.isfinite(a):
        return 1.0, ""
    for f, p in usable:
        if a >= f * (1 - 5e-13):
            return f, p
    return usable[-1]


def time_unit(seconds: float) -> tuple[float, str]:
    """(factor, unit) of a duration: s, ms or µs (no ks: a long run is still in seconds; no ns:
    nothing faascope times is that short)."""
    f, p = si_prefix(seconds, largest=1.0, smallest=1e-6)
    return f, f"{p}s"


def format_duration(seconds: float, half: float | None = None) -> str:
    """``seconds`` to 3 significant digits in the unit that suits it: µs below a millisecond, ms
    below a second, else s (``0.000861`` → ``861 µs``, ``0.0314`` → ``31.4 ms``); with
    ``half``, ``± half`` in the same unit (``36.4 µs ± 2.1``). None or NaN is ``–``."""
    if seconds is None or not math.isfinite(seconds):
        return "–"
    f, unit = time_unit(seconds)
    x = seconds / f
    text = f"{x:.3g} {unit}" if abs(x) < 1000 else f"{x:.0f} {unit}"  # never 1.5e+03 s
    if half is not None and math.isfinite(half):
        text += f" ± {significant(half / f, 2)}"
    return text


def memory_mb_to_bytes(mb: int) -> int:
    """Lambda's "MB" (memory and ephemeral storage) is MiB: 128 MB = 134,217,728 bytes."""
    return int(mb) * MIB


def parse_memory_mb(value: object) -> int:
    """A function memory or ephemeral-storage size as Lambda's MB (= MiB).

    Integers are taken as Lambda MB (MiB). Strings with a binary unit (``2GiB``, ``128MiB``) are
    converted exactly and must be a whole number of MiB. Decimal-unit strings (``128MB``) are
    rejected as ambiguous: the platforms' "MB" is MiB, so write ``128`` or ``128MiB``.
    """
    if isinstance(value, bool):
        raise SizeError(f"expected a memory size in MB (MiB), got the boolean {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        s = value.strip()
        if s.isdigit():
            return int(s)
        m = SIZE_RE.match(s)
        unit = m.group("unit").lower() if m else ""
        if m and unit in ("kb", "mb", "gb", "tb"):
            raise SizeError(
                f"{value!r} is ambiguous: Lambda's \"MB\" is really MiB (128 MB = 134,217,728 "
                f"bytes); write a plain number of MB such as 128, or a binary size such as "
                f"128MiB or 2GiB"
            )
        n = parse_size(s)
        if n % MIB:
            raise SizeError(f"{value!r} is not a whole number of MiB")
        return n // MIB
    raise SizeError(f"expected a memory size in MB (MiB) such as 128 or 2GiB, got {value!r}")


DURATION_RE = re.compile(r"^\s*(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>ms|s|m|min|h|d)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0,
                   None: 1.0}


def parse_duration(value: object) -> float:
    """Seconds from a number (seconds) or a string like ``500ms``, ``30s``, ``15m``, ``1h``, ``1d``."""
    if isinstance(value, bool):
        raise ValueError(f"expected a duration, got the boolean {value!r}")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"a duration cannot be negative: {value}")
        return float(value)
    if isinstance(value, str):
        m = DURATION_RE.match(value)
        if m:
            return float(m.group("num")) * _DURATION_UNITS[m.group("unit")]
    raise ValueError(
        f"cannot read {value!r} as a duration; write seconds or a number with ms, s, m, h or d "
        "(e.g. 30s, 15m, 1h)"
    )


def format_seconds(seconds: float, digits: int = 3) -> str:
    """A duration auto-scaled to ns, µs, ms or s with ``digits`` significant digits, saying which
    (``0.000132`` -> ``132 µs``)."""
    if seconds != seconds:  # NaN
        return "–"
    a = abs(seconds)
    for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if a >= factor:
            return f"{significant(seconds / factor, digits)} {unit}"
    return f"{significant(seconds / 1e-9, digits)} ns" if a else "0 s"


def significant(v: float, digits: int) -> str:
    """``v`` to ``digits`` significant digits, never in scientific notation (230, not 2.3e+02)."""
    s = f"{v:.{digits}g}"
    return f"{v:.0f}" if "e" in s else s


def format_bytes(n: float, digits: int = 3) -> str:
    """A byte count auto-scaled to decimal units (B, kB, MB, GB) with ``digits`` significant
    digits (``317500000`` -> ``318 MB``); for display only (:func:`format_size` is exact)."""
    a = abs(n)
    for factor, unit in ((1000**3, "GB"), (1000**2, "MB"), (1000, "kB")):
        if a >= factor:
            return f"{significant(n / factor, digits)} {unit}"
    return f"{significant(n, digits)} B"


def format_rate(bytes_per_s: float, digits: int = 3) -> str:
    """Bytes per second auto-scaled (``885000000`` -> ``885 MB/s``)."""
    return format_bytes(bytes_per_s, digits) + "/s"


#: units that are durations, and their factor to seconds (faascope.store.measures uses the same)
TIME_FACTORS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def format_measure(value: float | None, unit: str, half: float | None = None) -> str:
    """A measured value in its unit, auto-scaled and saying which: durations as
    :func:`format_duration` (``227 µs``), bytes and bytes per second with decimal SI prefixes
    (``109 MB/s``), operations per second as ``/s``, anything else to 4 significant digits; with
    ``half``, ``± half`` in the same scale. None or NaN is ``–``."""
    if value is None or not math.isfinite(value):
        return "–"
    if unit in TIME_FACTORS:
        f = TIME_FACTORS[unit]
        return format_duration(value * f, None if half is None else half * f)
    if unit in ("B", "B/s", "1/s"):
        factor, prefix = si_prefix(value, largest=1e12 if unit != "1/s" else 1e9, smallest=1.0)
        shown = {"B": f"{prefix}B", "B/s": f"{prefix}B/s", "1/s": f"{prefix}/s"}[unit]
        text = f"{significant(value / factor, 3)} {shown}"
    else:
        factor = 1.0
        text = f"{value:.4g}" + (f" {unit}" if unit else "")
    if half is not None and math.isfinite(half):
        text += f" ± {significant(half / factor, 2)}"
    return text
