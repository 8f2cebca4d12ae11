"""Timestamps as the results file stores them: ISO 8601 text, UTC with a ``Z`` (and the driver
machine's local time beside it, for time-of-day factors), microsecond resolution."""
from __future__ import annotations

import datetime as _dt


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def iso_utc_from_ns(ns: int) -> str:
    return _dt.datetime.fromtimestamp(ns / 1e9, _dt.timezone.utc).isoformat(
        timespec="microseconds").replace("+00:00", "Z")


def iso_local_from_ns(ns: int) -> str:
    return _dt.datetime.fromtimestamp(ns / 1e9).astimezone().isoformat(timespec="microseconds")
