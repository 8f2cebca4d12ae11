"""The periodic executor: a scheduled campaign's slots, each at its time (docs/schedules.md).

Slot k (block k of the plan, :mod:`faascope.designs.slots`) holds every cell ``replications``
times and is due at ``due[k]``. Its runs start together, one invocation at a time, at

    start[k] = max(due[k], start[j] + (1 - CATCH_UP) * (due[j+1] - due[j]), now)

where j is the last slot that started (in this run of the driver or an earlier one: the
``schedule_slots`` table remembers). So a slot never starts sooner after the slot before than
that slot's period (less 1 %), even after a restart, and a backlog is never sent back to back.
The 1 % lets a schedule that fell behind (a slow first deploy, a busy machine, sleeps that
overshoot) drift back to its due times over the next slots: without it, any delay would stay
in every later slot and add up until slots are missed. With ``late: miss`` (the default) a
slot whose start would be later than ``due[k] + grace`` is not run: it is recorded as missed (a
``schedule_slots`` row and a ``slot_missed`` event, in one transaction) with the reason (the
driver was not running; the slot before was still running; the driver was held up). With
``late: run`` it runs late, and every later slot keeps its distance from it.

Durability: a slot's row is written (``running``) before its first invocation, each invocation
is recorded in its own transaction, and the row is closed (``done``) after its last. A slot a
killed driver left running continues on resume if it still may (``late: run``, or within its
grace), and is otherwise missed for its runs that have no record; its recorded runs stay.
"""
from __future__ import annotations

import time
from itertools import groupby
from typing import Optional

from faascope.designs.slots import SlotPlan
from faascope.driver.campaign import Campaign
from faascope.driver.one_run import measure_one_run
from faascope.store.timestamps import iso_utc_from_ns

#: how often a wait for a slot looks at the stop flag (seconds)
WAIT_STEP_S = 0.5
#: the share of a period by which a late schedule may catch up per slot (see above)
CATCH_UP = 0.01


def min_spacing(plan: SlotPlan, slot: int) -> float:
    """The least time between the start of ``slot`` and the start of the next slot to run: its
    period (the gap to the slot due after it) less :data:`CATCH_UP`."""
    nxt = slot + 1 if slot + 1 < len(plan.due) else slot
    gap = plan.due[nxt] - plan.due[slot] if nxt != slot else (plan.every_s or 0.0)
    return (1 - CATCH_UP) * gap


def earliest_start(plan: SlotPlan, slot: int, last: Optional[tuple[int, float]]) -> float:
    """When ``slot`` may start: its due time, and never sooner after the last slot that started
    (``last``: that slot and its start) than :func:`min_spacing`."""
    t = plan.due[slot]
    if last is not None:
        prev_slot, prev_start = last
        t = max(t, prev_start + min_spacing(plan, prev_slot))
    return t


def _iso(t: float) -> str:
    return iso_utc_from_ns(int(t * 1e9))


class PeriodicExecutor:
    def __init__(self) -> None:
        self.started_unix = time.time()
        self._missed: list[dict] = []

    def run(self, campaign: Campaign) -> None:
        plan = campaign.plan.schedule
        assert plan is not None, "the periodic executor runs scheduled campaigns"
        store, cid = campaign.store, campaign.id
        store.add_schedule_tables()
        pending = campaign.pending()
        names = campaign.deploy_pending(pending)
        campaign.set_running()
        history = store.slots(cid)
        pending_blocks = {r["block"] for r in pending}
        # a slot a killed run left "running" whose runs are all recorded is done
        for slot, row in history.items():
            if row["status"] == "running" and slot not in pending_blocks:
                store.end_slot(cid, slot, None)
        if not history and plan.floating:
            # nothing ran yet: the first slot is due now that the functions are deployed, not
            # when the campaign was created (recorded, so a resumed campaign keeps it)
            plan = plan.moved_to(time.time())
            store.set_schedule(cid, {**plan.describe(),
                                     "replications_per_slot": campaign.plan.design_replications})
            campaign.plan.schedule = plan
        started = [(s, row["started_unix"]) for s, row in history.items()
                   if row["started_unix"] is not None and row["status"] != "missed"]
        last = max(started) if started else None
        try:
            for slot, runs in groupby(pending, key=lambda r: r["block"]):
                runs = list(runs)
                row = history.get(slot)
                start = self._start(campaign, plan, slot, last, row, len(runs))
                if start is None:
                    if campaign.stop.stop:
                        return
                    continue
                self._flush(campaign)
                if row is not None and row["status"] == "running":
                    # a slot cut short by a kill continues; it keeps its start for the spacing
                    start = float(row["started_unix"])
                    campaign.say(f"slot {slot + 1}/{len(plan.due)} continues ({len(runs)} "
                                 "run(s) left)")
                else:
                    store.begin_slot(cid, slot, plan.due[slot], start)
                    campaign.say(f"slot {slot + 1}/{len(plan.due)} started "
                                 f"{max(0.0, start - plan.due[slot]):.3f} s after its due time "
                                 f"{_iso(plan.due[slot])}")
                last = (slot, start)
                for run in runs:
                    if campaign.stop.stop:
                        return
                    self._invoke(campaign, run, names)
                store.end_slot(cid, slot, time.time())
        finally:
            self._flush(campaign)

    # ------------------------------------------------------------------ one slot
    def _start(self, campaign: Campaign, plan: SlotPlan, slot: int,
               last: Optional[tuple[int, float]], row: Optional[dict],
               n_runs: int) -> Optional[float]:
        """Wait for ``slot``'s time and return its start, or None when it is missed (queued
        for recording) or the campaign is asked to stop while waiting."""
        due, deadline = plan.due[slot], plan.due[slot] + plan.grace_s
        if row is not None and row["status"] == "running":
            # cut short by a killed run: its remaining runs continue now, if they still may
            now = time.time()
            if plan.late == "miss" and now > deadline:
                self._miss(slot, due, "the driver stopped during the slot and came back after "
                           "its grace", {"unrecorded": n_runs, "resumed_at": _iso(now)})
                return None
            return now
        at = max(earliest_start(plan, slot, last), time.time())
        if plan.late == "miss" and at > deadline:
            self._miss(slot, due, self._reason(last, plan, slot, deadline),
                       {"unrecorded": n_runs, "could_start": _iso(at)})
            return None
        # the missed slots before this one are written before waiting, not after it
        self._flush(campaign)
        while True:
            now = time.time()
            if campaign.stop.stop:
                return None
            if now >= at:
                break
            time.sleep(min(WAIT_STEP_S, at - now))
        now = time.time()
        if plan.late == "miss" and now > deadline:  # held up (suspended) while waiting
            self._miss(slot, due, "the driver was held up past the slot's grace",
                       {"unrecorded": n_runs, "could_start": _iso(now)})
            return None
        return now

    def _reason(self, last: Optional[tuple[int, float]], plan: SlotPlan, slot: int,
                deadline: float) -> str:
        if self.started_unix > deadline:
            return "the driver was not running"
        if last is None:
            return "the campaign was still starting (deploying its functions)"
        if last is not None and last[1] + min_spacing(plan, last[0]) > deadline:
            return "the slot before started late, and slots are never closer than their period"
        return "the slot before was still running"

    def _miss(self, slot: int, due: float, reason: str, detail: dict) -> None:
        self._missed.append({"slot": slot, "due_unix": due, "due": _iso(due), "reason": reason,
                             "detail": detail})

    def _flush(self, campaign: Campaign) -> None:
        """Record the queued missed slots (one transaction) and say so."""
        if not self._missed:
            return
        batch, self._missed = self._missed, []
        campaign.store.miss_slots(campaign.id, batch)
        slots = [m["slot"] + 1 for m in batch]
        shown = ", ".join(map(str, slots[:5])) + (f" … ({len(slots)} slots)" if len(slots) > 5 else "")
        campaign.say(f"[yellow]missed[/yellow] slot {shown}: {batch[0]['reason']}")

    @staticmethod
    def _invoke(campaign: Campaign, run: dict, names: dict[str, str]) -> None:
        measure_one_run(campaign, campaign.open_provider(), run,
                        campaign.plan.cells_by_key[run["cell_key"]], names[run["cell_key"]])
