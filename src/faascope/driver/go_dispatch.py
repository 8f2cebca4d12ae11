"""Sending a burst through the Go dispatcher (``agent/cmd/faascope-dispatch``), the default sender.

Why: the asyncio/aiohttp sender (:mod:`faascope.driver.dispatch`) spends ~0.2-0.3 ms of Python per
request on one core, so 1000 members "sent at once" leave over ~0.2-0.3 s (docs/concurrency.md,
"Dispatch spread"). Here Python only prepares: each member's request is serialised and signed by
its provider (:meth:`~faascope.providers.base.Provider.async_requests`, SigV4 by the boto3
client's own signer, so no credentials ever reach the dispatcher), and handed over as a JSON line
with its offset. The dispatcher opens one connection per member ahead of the burst (TCP, and TLS
for https), waits for the start, writes each request with one ``write`` at its instant, reads the
replies and reports each member as a JSON line; Python reads the replies with the provider's
``parse`` and records them exactly as the Python sender's results (same ``on_result``).

Signatures stay fresh as in the Python sender: members due within ``sign_ahead_s`` (60 s) are
signed before the start; later ones are signed and handed over ``sign_ahead_s`` before their
instant (SigV4 requests are accepted for 5 minutes), so the dispatcher never signs.

Timestamps are wall-clock Unix ns (CLOCK_REALTIME: Go's ``time.Now().UnixNano()``, the clock of
``time.time_ns()`` here and of the agent's ``received_ns``): ``send_ns`` just before the
request's one ``write`` (on loopback the receiver may read it before the write returns),
``headers_ns`` when the reply's headers were parsed (Lambda sends them once the function has
returned: the first byte, which the dispatcher also reports as ``first_byte_ns``), ``end_ns``
when the body had been read.

Durability (docs/reliability.md): a member the dispatcher could not connect is ``never_sent``
(``EndpointConnectionError`` / ``ConnectTimeoutError``); once a byte was written, a failure is
``MayHaveRun.<error>``. If the dispatcher dies mid-burst (crash, SIGKILL), every member without a
reply whose instant had passed when its death was seen is recorded as
``MayHaveRun.DispatcherDied`` (it may have been sent), the rest stay pending, and the burst ends
``interrupted``: ``--resume`` sends only members that cannot have run.
"""
from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from typing import Any, Callable, Optional

from yarl import URL

from faascope.binaries import dispatch_binary
from faascope.driver.dispatch import Budget, Member, preparer
from faascope.errors import Failure
from faascope.providers.invocation import MAY_HAVE_RUN, InvokeResult, Prepared, RequestFactory, Timing

__all__ = ["DISPATCHER_ENV", "choose_dispatcher", "dispatch_go", "request_line"]

#: ``python`` forces the asyncio sender, ``go`` the Go dispatcher (an error without its binary);
#: unset or ``auto``: the Go dispatcher when it is built, else the asyncio sender
DISPATCHER_ENV = "FAASCOPE_DISPATCHER"

#: the longest line the dispatcher may report (a reply body with a log tail)
_LINE_LIMIT = 64 << 20


def choose_dispatcher() -> tuple[str, str]:
    """(``go`` or ``python``, why): the fastest sender available (see :data:`DISPATCHER_ENV`)."""
    want = (os.environ.get(DISPATCHER_ENV) or "auto").strip().lower()
    if want == "python":
        return "python", f"{DISPATCHER_ENV}=python"
    if want not in ("auto", "go"):
        raise Failure(f"{DISPATCHER_ENV} must be go, python or auto, not {want!r}")
    try:
        dispatch_binary()
    except Failure as exc:
        if want == "go":
            raise
        return "python", f"the Go dispatcher is not built ({exc})"
    return "go", "default (fastest): one socket write per member at its instant"


def request_line(k: int, offset_s: float, prep: Prepared, warm: Optional[Prepared] = None) -> dict:
    """The dispatcher's input line for one prepared request; ``warm``: the request that runs
    nothing (DryRun) it sends first on the connection it opens ahead for this member."""
    url = prep.url if isinstance(prep.url, URL) else URL(str(prep.url), encoded=True)
    host = url.raw_host or ""
    port = url.port or (443 if url.scheme == "https" else 80)
    addr = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    # the Host header as botocore signs it and aiohttp sends it: the port only when not default
    host_header = url.raw_authority.rsplit("@", 1)[-1]
    if url.explicit_port is not None and url.explicit_port == {"http": 80, "https": 443}.get(url.scheme):
        host_header = host_header.rsplit(":", 1)[0]
    return {"k": k, "offset_ns": int(round(offset_s * 1e9)), "scheme": url.scheme, "addr": addr,
            "host": host_header, "method": prep.method, "target": url.raw_path_qs or "/",
            "headers": [[str(a), str(b)] for a, b in prep.headers.items()],
            "body": base64.b64encode(b"" if prep.method == "GET" else prep.body).decode(),
            **({"warm": request_line(k, 0.0, warm)} if warm is not None else {})}


class _CIHeaders(dict):
    """The reply's headers as a case-insensitive mapping (lower-case keys, first value kept)."""

    def __init__(self, pairs):
        super().__init__()
        for k, v in pairs or []:
            self.setdefault(k.lower(), v)

    def get(self, key, default=None):
        return super().get(key.lower(), default)

    def __getitem__(self, key):
        return super().__getitem__(key.lower())

    def __contains__(self, key):
        return super().__contains__(str(key).lower())


def member_result(factory: RequestFactory, prep: Prepared, line: dict) -> InvokeResult:
    """An :class:`InvokeResult` from the dispatcher's report of one member."""
    t = Timing(send_ns=line.get("send_ns"), headers_ns=line.get("headers_ns"),
               end_ns=line.get("end_ns"), connection=line.get("connection") or "")
    if line.get("transport") == "replied":
        body = base64.b64decode(line.get("body") or "")
        res = factory.parse(prep, int(line["status"]), _CIHeaders(line.get("headers")), body, t)
    else:
        err = line.get("error") or {}
        res = InvokeResult(status="client_error", error_type=err.get("type") or "DispatchError",
                           error_message=(err.get("message") or "")[:500], send_ns=t.send_ns,
                           headers_ns=t.headers_ns, end_ns=t.end_ns, attempts=1, retries=0)
    if t.connection:
        res.platform = dict(res.platform or {}, connection=t.connection)
    return res


async def dispatch_go(factory: RequestFactory, members: list[Member], payload: bytes, *,
                      on_result: Callable[[Member, InvokeResult], None],
                      budget: Optional[Budget] = None, stop: Any = None,
                      sign_ahead_s: float = 60.0, member_field: Optional[str] = None,
                      preconnect: int = -1, connect_timeout_s: float = 10.0,
                      read_timeout_s: float = 960.0, lead_s: Optional[float] = None,
                      connect_ahead_s: float = 2.0, abort_if_unreachable: bool = True,
                      warm: bool = True,
                      ca_file: Optional[str] = None, binary: Optional[str] = None) -> dict:
    """Send ``members`` on their schedule through the Go dispatcher; calls ``on_result`` as each
    reply arrives (as :func:`~faascope.driver.dispatch.dispatch` does); returns
    {start_ns, sent, stopped, dispatcher, ready, done}. ``stopped``: None, ``error_budget``,
    ``interrupted``, ``unreachable`` (nothing was sent: no connection could be opened) or
    ``dispatcher_died``. ``preconnect``: how many members get a connection opened ahead of their
    instant (-1: all); the others connect at their instant. ``warm``: each connection opened
    ahead first carries a request that runs nothing (a DryRun invoke, an agent's health check), so
    the server's per-connection set-up is done before the burst, as with the Python sender's
    ``preconnect`` (Lambda API only)."""
    prepare = preparer(factory, payload, member_field)
    members = sorted(members, key=lambda m: (m.offset_s, m.member))
    n = len(members)
    out: dict[str, Any] = {"start_ns": None, "sent": 0, "stopped": None, "dispatcher": "go",
                           "ready": None, "done": None}
    if not n:
        return out
    lead = lead_s if lead_s is not None else 0.02 + 20e-6 * n
    preps: dict[int, Prepared] = {}
    idx = 0
    lines = []
    def line(k: int) -> dict:
        m = members[k]
        preps[k] = prepare(m)
        # only the Lambda API's DryRun: preparing has no side effect there (the http provider's
        # prepare routes round robin, so an extra one would move members to other agents)
        ahead = warm and factory.protocol == "lambda" and (preconnect < 0 or k < preconnect)
        return request_line(k, m.offset_s, preps[k],
                            factory.prepare(m.function, b"{}", dry_run=True) if ahead else None)

    while idx < n and members[idx].offset_s < sign_ahead_s:
        lines.append(line(idx))
        idx += 1
    cfg = {"total": n, "lead_ns": int(lead * 1e9), "connect_ahead_ns": int(connect_ahead_s * 1e9),
           "connect_timeout_ns": int(connect_timeout_s * 1e9),
           "read_timeout_ns": int(read_timeout_s * 1e9), "preconnect": preconnect,
           "abort_if_unreachable": abort_if_unreachable, "ca_file": ca_file or ""}
    proc = await asyncio.create_subprocess_exec(
        binary or str(dispatch_binary()), stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, limit=_LINE_LIMIT)
    stderr_task = asyncio.ensure_future(proc.stderr.read())
    got: set[int] = set()
    unsent: set[int] = set()
    handed = idx
    stop_sent: list[str] = []

    def write(obj: dict) -> None:
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    async def send_stop(reason: str) -> None:
        if not stop_sent:
            stop_sent.append(reason)
            write({"stop": reason})
            try:
                await proc.stdin.drain()
            except (ConnectionError, BrokenPipeError):
                pass

    write({"config": cfg})
    for ln in lines:
        write(ln)
    write({"go": True})
    if handed == n:
        write({"end": True})
    try:
        await proc.stdin.drain()
    except (ConnectionError, BrokenPipeError):
        pass
    lines.clear()

    async def feed() -> None:
        """Sign and hand over the members due later, ``sign_ahead_s`` before their instant."""
        nonlocal handed
        while handed < n and not stop_sent:
            m = members[handed]
            due = out["start_ns"] / 1e9 + m.offset_s - sign_ahead_s
            if time.time() < due:
                await asyncio.sleep(min(0.5, due - time.time()))
                continue
            write(line(handed))
            handed += 1
            if handed == n:
                write({"end": True})
            try:
                await proc.stdin.drain()
            except (ConnectionError, BrokenPipeError):
                return  # the dispatcher is gone: the reader sees it

    async def watch_stop() -> None:
        while not stop_sent:
            if stop is not None and stop.stop:
                await send_stop("interrupted")
                return
            await asyncio.sleep(0.05)

    helpers: list[asyncio.Task] = [asyncio.ensure_future(watch_stop())]
    died = True
    try:
        while True:
            raw = await proc.stdout.readline()
            if not raw:
                break
            line = json.loads(raw)
            if "ready" in line:
                out["ready"] = r = line["ready"]
                if r.get("unreachable"):
                    out["stopped"] = "unreachable"
                    continue
                out["start_ns"] = start = int(r["start_ns"])
                for m in members:
                    m.scheduled_ns = start + int(round(m.offset_s * 1e9))
                if handed < n:
                    helpers.append(asyncio.ensure_future(feed()))
            elif "k" in line:
                k = int(line["k"])
                m = members[k]
                res = member_result(factory, preps.pop(k), line)
                got.add(k)
                if budget is not None:
                    budget.add(res)
                on_result(m, res)
                if budget is not None and budget.stop_sending and budget.exceeded:
                    await send_stop("error_budget")
            elif "unsent" in line:
                unsent.update(int(k) for k in line["unsent"])
            elif "done" in line:
                out["done"] = line["done"]
                died = False
                break
    finally:
        for h in helpers:
            h.cancel()
        if proc.stdin is not None:
            proc.stdin.close()
        if died:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
        await proc.wait()
        err = (await stderr_task).decode(errors="replace").strip()
    out["sent"] = len(got)
    if died:
        # the dispatcher is gone (and so cannot send any more): members without a reply whose
        # instant had passed may have been sent; later ones cannot have been
        seen = time.time_ns()
        out["stopped"] = "dispatcher_died"
        out["error"] = f"the dispatcher exited with {proc.returncode}" + (f": {err[-500:]}" if err else "")
        if out["start_ns"] is not None:
            for k, m in enumerate(members):
                if k in got or k in unsent or k >= handed or m.scheduled_ns > seen:
                    continue
                res = InvokeResult(status="client_error", error_type=MAY_HAVE_RUN + "DispatcherDied",
                                   error_message=("the dispatcher died after this member's instant "
                                                  "and before its reply: it may have been sent; "
                                                  + out["error"])[:500], attempts=1, retries=0)
                if budget is not None:
                    budget.add(res)
                on_result(m, res)
                got.add(k)
        out["sent"] = len(got)
        return out
    if out["stopped"] is None and (unsent or handed < n):
        out["stopped"] = stop_sent[0] if stop_sent else (out["done"] or {}).get("stopped") or "interrupted"
    return out
