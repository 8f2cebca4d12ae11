"""The slots of a periodic campaign (``design.schedule``, docs/schedules.md): when each is due.

A schedule is anchored at an instant (its ``start``, else the campaign's creation) that the
campaign records, so the slots of a resumed campaign are the slots it was planned with. Slot k is
due at ``anchor + k * every``, or at the k-th time of the cron expression at or after the anchor
(in the schedule's time zone, so ``0 9 * * 1-5`` means 09:00 there, summer time included). Slots
are due strictly before ``until`` and ``anchor + duration``, and there are at most ``slots``.

How the driver keeps to them (wait, run late, miss) is :mod:`faascope.driver.periodic`.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from croniter import croniter

from faascope.errors import BadInput
from faascope.specs.model import ScheduleSpec

#: the most slots a schedule may have (a 1-minute schedule for two years is about a million)
MAX_SLOTS = 1_000_000


@dataclass(frozen=True)
class SlotPlan:
    """The due times (Unix seconds) of a campaign's slots and how lateness is handled."""
    anchor_unix: float
    due: tuple[float, ...]
    late: str            # "miss" or "run"
    grace_s: float
    every_s: float | None
    cron: str | None
    tz: str
    #: whether the spec fixes the slots in time (start or until)
    absolute: bool = False

    @property
    def floating(self) -> bool:
        """Whether the slots are only relative to the anchor (``every`` without ``start`` or
        ``until``): their number does not depend on it, so the first slot can be due when the
        campaign is ready to run it instead of when it was created."""
        return self.every_s is not None and not self.absolute

    def moved_to(self, anchor_unix: float) -> "SlotPlan":
        """The same slots, anchored at ``anchor_unix`` (a floating schedule only)."""
        delta = anchor_unix - self.anchor_unix
        return replace(self, anchor_unix=anchor_unix, due=tuple(t + delta for t in self.due))

    def describe(self) -> dict:
        """What the plan JSON records (the due times are rebuilt from the anchor)."""
        return {"anchor_unix": self.anchor_unix, "slots": len(self.due),
                "first_due": _iso(self.due[0]), "last_due": _iso(self.due[-1]),
                "every_s": self.every_s, "cron": self.cron, "tz": self.tz, "late": self.late,
                "grace_s": self.grace_s}


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def slot_plan(schedule: ScheduleSpec, anchor_unix: float) -> SlotPlan:
    """The slots of ``schedule`` anchored at ``anchor_unix`` (its ``start`` wins when given)."""
    start = schedule.start.timestamp() if schedule.start is not None else anchor_unix
    ends = [e for e in (schedule.until.timestamp() if schedule.until else None,
                        start + schedule.duration if schedule.duration else None) if e is not None]
    end = min(ends) if ends else math.inf
    limit = min(schedule.slots or MAX_SLOTS, MAX_SLOTS)
    due: list[float] = []
    if schedule.every is not None:
        n = limit if end == math.inf else min(limit, math.ceil((end - start) / schedule.every))
        if n > MAX_SLOTS:
            raise BadInput(f"{n:,} slots, more than the {MAX_SLOTS:,} a schedule may have",
                           field="design.schedule")
        due = [start + k * schedule.every for k in range(max(n, 0))]
        due = [t for t in due if t < end]
    else:
        tz = ZoneInfo(schedule.tz)
        # croniter yields the next time strictly after its base: start just before the anchor
        it = croniter(schedule.cron, datetime.fromtimestamp(start - 1e-6, tz))
        while len(due) < limit:
            t = it.get_next(datetime).timestamp()
            if t >= end:
                break
            due.append(t)
            if len(due) > MAX_SLOTS:
                raise BadInput(f"more than {MAX_SLOTS:,} slots", field="design.schedule")
    if not due:
        raise BadInput("the schedule has no slot between its start and its end",
                       field="design.schedule")
    gaps = [b - a for a, b in zip(due, due[1:])]
    shortest = min(gaps) if gaps else (schedule.every or 60.0)
    grace = schedule.grace if schedule.grace is not None else shortest / 2
    return SlotPlan(anchor_unix=start, due=tuple(due), late=schedule.late, grace_s=float(grace),
                    every_s=schedule.every, cron=schedule.cron, tz=schedule.tz,
                    absolute=schedule.start is not None or schedule.until is not None)


def recorded_anchor(plan_json: str | dict | None) -> float | None:
    """The anchor a campaign's recorded plan (its JSON, as stored) was built with; None when the
    plan has no schedule."""
    if isinstance(plan_json, str):
        try:
            plan_json = json.loads(plan_json)
        except ValueError:
            return None
    sched = (plan_json or {}).get("schedule") if isinstance(plan_json, dict) else None
    anchor = (sched or {}).get("anchor_unix")
    return float(anchor) if anchor is not None else None
