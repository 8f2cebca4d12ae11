"""Sending a burst's members on their schedule: one asyncio loop, requests prepared (serialised
and signed) ahead of their time, an error budget that can stop the sending.

This is the Python sender (aiohttp); the default for bursts is the Go dispatcher
(:mod:`faascope.driver.go_dispatch`), which sends the same prepared requests with one socket
write each at their instants (docs/concurrency.md, "Dispatch spread")."""
from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from faascope.providers.invocation import InvokeResult


@dataclass
class Member:
    row: dict
    member: int
    batch: int
    offset_s: float
    copy: int
    function: str
    scheduled_ns: int = 0
    prep: Any = None
    index: int = 0  # burst * burst_size + member: distinct across the cell's bursts


class Budget:
    def __init__(self, planned: int, max_failed_fraction: float, stop_sending: bool,
                 min_failed: int = 1):
        self.planned = planned
        self.limit = max_failed_fraction * planned
        self.stop_sending = stop_sending
        self.min_failed = min_failed
        self.failed = 0

    def add(self, res: InvokeResult) -> None:
        if res.status != "ok":
            self.failed += 1

    @property
    def exceeded(self) -> bool:
        return self.failed > self.limit and self.failed >= self.min_failed


def preparer(factory, payload: bytes, member_field: Optional[str] = None) -> Callable[[Member], Any]:
    """A function preparing (serialising and signing) a member's request: ``payload`` with the
    member's index in ``workload[member_field]`` and in place of ``{index}``."""
    per_member = member_field is not None or b"{index}" in payload

    def member_payload(m: Member) -> bytes:
        body = payload
        if member_field is not None:
            d = json.loads(body)
            d["workload"][member_field] = m.index
            body = json.dumps(d).encode()
        return body.replace(b"{index}", str(m.index).encode())

    def prepare(m: Member):
        return factory.prepare(m.function, member_payload(m) if per_member else payload)

    return prepare


async def dispatch(inv, members: list[Member], payload: bytes, *, lead_s: float,
                   on_result: Callable[[Member, InvokeResult], None],
                   budget: Optional[Budget] = None, stop: Any = None,
                   sign_ahead_s: float = 60.0, member_field: Optional[str] = None) -> dict:
    """Send ``members`` on their schedule (offsets from a start ``lead_s`` from now); calls
    ``on_result`` as each reply arrives; returns {start_ns, sent, stopped}."""
    loop = asyncio.get_running_loop()
    prepare = preparer(inv.factory, payload, member_field)
    members = sorted(members, key=lambda m: (m.offset_s, m.member))
    # prepare (serialise + sign) what is due soon; the rest just before its time
    idx = 0
    while idx < len(members) and members[idx].offset_s < sign_ahead_s:
        members[idx].prep = prepare(members[idx])
        idx += 1
    start_loop = loop.time() + lead_s
    start_ns = time.time_ns() + int(lead_s * 1e9)
    for m in members:
        m.scheduled_ns = start_ns + int(round(m.offset_s * 1e9))
    tasks: list[asyncio.Task] = []
    stopped = None

    async def one(m: Member) -> None:
        res = await inv.send(m.prep)
        m.prep = None
        if budget is not None:
            budget.add(res)
        on_result(m, res)

    for offset, grp in itertools.groupby(members, key=lambda m: m.offset_s):
        grp = list(grp)
        if budget is not None and budget.stop_sending and budget.exceeded:
            stopped = "error_budget"
            break
        if stop is not None and stop.stop:
            stopped = "interrupted"
            break
        while idx < len(members) and members[idx].offset_s < offset + sign_ahead_s:
            members[idx].prep = prepare(members[idx])
            idx += 1
        for m in grp:
            if m.prep is None:
                m.prep = prepare(m)
        delay = start_loop + offset - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        for m in grp:
            tasks.append(loop.create_task(one(m)))
    if tasks:
        await asyncio.gather(*tasks)
    return {"start_ns": start_ns, "sent": len(tasks), "stopped": stopped}
