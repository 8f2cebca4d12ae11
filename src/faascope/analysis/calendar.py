"""Calendar factors derived at analysis time, in a time zone the user chooses (``--tz``).

A campaign records when each invocation started in UTC (``started_at``); whether it ran in
business hours depends on whose business, so the calendar is derived when analysing, not when
measuring. From a timestamp column (``started_at`` of a results file; ``occurred_at``,
``collected_at``, ``timestamp`` … of a table; or ``--time-column``), converted to the zone with
the IANA time-zone database (:mod:`zoneinfo`, summer time included):

- ``hour``: 0 … 23, the local hour;
- ``day_of_week``: Monday … Sunday;
- ``day_period``: night 00:00–06:00, morning 06:00–12:00, afternoon 12:00–18:00, evening
  18:00–24:00;
- ``week_period``: WEEKDAY (Monday to Friday) or WEEKEND;
- ``business_hours``: BUSINESS_HOUR from 09:00 to 18:00 on weekdays, OFF_HOUR otherwise: the
  2024 study of local file-system I/O on Lambda and Cloud Functions, whose labels these are (its
  ``time_of_day`` column, derived in UTC: tests/analysis/test_calendar.py checks all 11,404 of
  its rows).

Every interval includes its start and excludes its end (09:00:00 is business hours, 18:00:00
is not). A timestamp without a zone is read as UTC. :data:`DEFINITIONS` is what the analysis and
the report state.
"""
from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from faascope.errors import BadInput

CALENDAR_COLUMNS = ("hour", "day_of_week", "day_period", "week_period", "business_hours")
#: timestamp columns tried, in order, when no --time-column is given
TIME_CANDIDATES = ("started_at", "occurred_at", "collected_at", "timestamp", "time",
                   "client_send_at", "sent_at", "created_at", "recorded_at")
BUSINESS_START_H, BUSINESS_END_H = 9, 18
DAY_PERIODS = ((0, "night"), (6, "morning"), (12, "afternoon"), (18, "evening"))
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

DEFINITIONS = {
    "hour": "the local hour, 0-23",
    "day_of_week": "Monday ... Sunday",
    "day_period": "night 00:00-06:00, morning 06:00-12:00, afternoon 12:00-18:00, "
                  "evening 18:00-24:00",
    "week_period": "WEEKDAY = Monday to Friday, WEEKEND = Saturday and Sunday",
    "business_hours": f"BUSINESS_HOUR = {BUSINESS_START_H:02d}:00-{BUSINESS_END_H:02d}:00 on "
                      "weekdays, OFF_HOUR otherwise (the 2024 study's definition)",
}


def check_tz(tz: str, field: str = "--tz") -> ZoneInfo:
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise BadInput(f"unknown time zone {tz!r}; use an IANA name such as UTC, "
                       "Europe/Berlin or America/Sao_Paulo", field=field) from None


def time_column(df: pd.DataFrame, given: str | None = None) -> str:
    if given is not None:
        if given not in df.columns:
            raise BadInput(f"no column {given!r}; available columns: "
                           f"{', '.join(map(str, df.columns))}", field="--time-column")
        return given
    for c in TIME_CANDIDATES:
        if c in df.columns:
            return c
    raise BadInput("calendar factors need a timestamp column (such as "
                   f"{', '.join(TIME_CANDIDATES[:3])}); name it with --time-column",
                   field="--time-column")


def _instants(values: pd.Series, column: str) -> pd.Series:
    """The column as UTC instants (naive timestamps are UTC)."""
    if pd.api.types.is_numeric_dtype(values):
        raise BadInput(f"{column!r} holds numbers, not dates and times; name a column of ISO "
                       "8601 timestamps with --time-column", field="--time-column")
    try:
        out = pd.to_datetime(values.astype(str).str.strip(), utc=True, format="ISO8601")
    except (ValueError, TypeError) as exc:
        raise BadInput(f"cannot read {column!r} as dates and times ({exc})",
                       field="--time-column") from None
    if out.isna().any():
        raise BadInput(f"{int(out.isna().sum())} row(s) of {column!r} have no time",
                       field="--time-column")
    return out


def add_calendar(df: pd.DataFrame, tz: str, column: str | None = None,
                 only: tuple[str, ...] = CALENDAR_COLUMNS) -> tuple[pd.DataFrame, dict]:
    """``df`` with the calendar columns ``only`` derived in ``tz`` (replacing columns of the
    same names), and what was done: the zone, the column, the definitions, what it replaced."""
    zone = check_tz(tz)
    col = time_column(df, column)
    local = _instants(df[col], col).dt.tz_convert(zone)
    hour = local.dt.hour.to_numpy()
    weekday = local.dt.day_of_week.to_numpy() < 5
    derived = {
        "hour": hour,
        "day_of_week": np.array(DAYS)[local.dt.day_of_week.to_numpy()],
        "day_period": np.array([name for start, name in DAY_PERIODS for _ in range(6)])[hour],
        "week_period": np.where(weekday, "WEEKDAY", "WEEKEND"),
        "business_hours": np.where(weekday & (hour >= BUSINESS_START_H) & (hour < BUSINESS_END_H),
                                   "BUSINESS_HOUR", "OFF_HOUR"),
    }
    replaced = [c for c in only if c in df.columns]
    out = df.assign(**{c: derived[c] for c in only})
    return out, {"tz": tz, "time_column": col, "columns": list(only), "replaced": replaced,
                 "definitions": {c: DEFINITIONS[c] for c in only}}


def calendar_note(info: dict) -> str:
    """One sentence stating how the calendar columns were derived."""
    defs = "; ".join(f"{c}: {d}" for c, d in info["definitions"].items())
    repl = (f" (replacing the input's {', '.join(info['replaced'])})" if info["replaced"] else "")
    return (f"Calendar factors derived from {info['time_column']} in {info['tz']}{repl}: {defs}. "
            "Intervals include their start and exclude their end; times without a zone are UTC.")


_FILTER_COLUMN = re.compile(r"^\s*([^!=<>]+?)\s*(?:!=|<=|>=|=|<|>)")


def wanted(names: list[str], filters: tuple[str, ...] | list[str] = ()) -> tuple[str, ...]:
    """The calendar columns named among factors/scenarios and filter expressions."""
    cols = set(names)
    for f in filters:
        m = _FILTER_COLUMN.match(f)
        if m:
            cols.add(m.group(1))
    return tuple(c for c in CALENDAR_COLUMNS if c in cols)


def with_calendar(df: pd.DataFrame, tz: str | None, column: str | None, names: list[str],
                  filters: tuple[str, ...] | list[str] = ()) -> tuple[pd.DataFrame, dict | None]:
    """What ``--tz``/``--time-column`` do (analyze and report): every calendar column in ``tz``;
    without it, those ``names`` or ``filters`` use and the input lacks, in UTC; None as the
    second value when nothing was derived."""
    if tz is not None:
        return add_calendar(df, tz, column)
    missing = tuple(c for c in wanted(names, filters) if c not in df.columns)
    if missing:
        return add_calendar(df, "UTC", column, only=missing)
    if column is not None:
        raise BadInput("--time-column applies to calendar factors: give --tz, or name one of "
                       f"{', '.join(CALENDAR_COLUMNS)}", field="--time-column")
    return df, None
