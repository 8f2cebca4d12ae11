"""The Go burst dispatcher (agent/cmd/faascope-dispatch) driven by the Python driver
(faascope.driver.go_dispatch): what it reports becomes the same results the Python sender gives,
never-sent and may-have-run failures are told apart, and a SIGKILLed dispatcher leaves a campaign
that resumes with nothing sent twice. Servers here are FAKE (loopback sockets, tests/driver/
burst_fakes.py); the real platform is in test_burst_local.py."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from burst_fakes import FakeEndpointProvider, FakeLambda, spec_text
from faascope.driver.dispatch import Member
from faascope.driver.go_dispatch import choose_dispatcher, dispatch_go, request_line
from faascope.driver.runner import run_campaign
from faascope.errors import Failure
from faascope.providers.lambda_api import LambdaRequests
from go_binaries import skip_unless_built

pytestmark = skip_unless_built()


def members(n: int, offsets=None) -> list[Member]:
    return [Member(row={}, member=i, batch=0, offset_s=(offsets[i] if offsets else 0.0), copy=0,
                   function="fn") for i in range(n)]


def factory(endpoint: str) -> LambdaRequests:
    return FakeEndpointProvider(endpoint).async_requests()


def go(endpoint: str, ms: list[Member], **kw) -> tuple[dict, dict]:
    got: dict = {}
    out = asyncio.run(dispatch_go(factory(endpoint), ms, b'{"workload": {"kind": "noop"}}',
                                  on_result=lambda m, r: got.__setitem__(m.member, r), **kw))
    return out, got


def test_the_default_is_the_go_dispatcher_and_the_environment_can_choose(monkeypatch):
    monkeypatch.delenv("FAASCOPE_DISPATCHER", raising=False)
    assert choose_dispatcher()[0] == "go"
    monkeypatch.setenv("FAASCOPE_DISPATCHER", "python")
    assert choose_dispatcher()[0] == "python"
    monkeypatch.setenv("FAASCOPE_DISPATCHER", "threads")
    with pytest.raises(Failure):
        choose_dispatcher()


def test_request_lines_carry_the_signed_request_unchanged():
    f = factory("http://127.0.0.1:9351")
    prep = f.prepare("fn-1", b'{"x": 1}')
    line = request_line(3, 0.25, prep)
    assert line["addr"] == "127.0.0.1:9351" and line["host"] == "127.0.0.1:9351"
    assert line["target"] == "/2015-03-31/functions/fn-1/invocations" and line["offset_ns"] == 250_000_000
    assert dict(line["headers"])["Authorization"].startswith("AWS4-HMAC-SHA256")
    prep = factory("https://lambda.us-east-1.amazonaws.com").prepare("fn", b"{}")
    line = request_line(0, 0, prep)
    assert line["addr"] == "lambda.us-east-1.amazonaws.com:443" and line["scheme"] == "https"
    assert line["host"] == "lambda.us-east-1.amazonaws.com"  # as botocore signed it


def test_replies_become_the_same_results_as_the_python_sender_gives():
    fake = FakeLambda(delay_s=0.005, fail_every=4)
    url = fake.start()
    try:
        out, got = go(url, members(40, [0.0] * 20 + [0.2] * 20))
    finally:
        fake.stop()
    assert out["sent"] == 40 and out["stopped"] is None and out["ready"]["connected"] == 40
    assert {r.status for r in got.values()} == {"ok", "function_error"}
    assert sum(r.status == "function_error" for r in got.values()) == 10
    for i, r in got.items():
        assert r.send_ns and r.headers_ns and r.end_ns and r.send_ns <= r.headers_ns <= r.end_ns
        assert r.attempts == 1 and r.retries == 0 and r.platform["connection"] == "reused"
        if r.status == "ok":
            assert r.response["timings"]["received_ns"] >= r.send_ns  # one clock
            assert r.platform["instance_id"]  # the X-Faascope-* headers reach the result
    first = [got[i].send_ns for i in range(20)]
    second = [got[i].send_ns for i in range(20, 40)]
    # the second group 200 ms after the first, each group sent together (margins, not exact)
    assert max(first) < min(second)
    assert 0.1 < (min(second) - min(first)) / 1e9 < 0.4
    assert (max(first) - min(first)) / 1e9 < 0.1


def test_never_sent_and_may_have_run_are_told_apart():
    # a server that accepts the pre-opened connections and closes them unread, then stops
    # listening: nothing was ever read, so nothing can have run
    closer = socket.socket()
    closer.bind(("127.0.0.1", 0))
    closer.listen(16)
    port = closer.getsockname()[1]

    def close_unread():
        for _ in range(3):
            c, _ = closer.accept()
            c.close()
        closer.close()

    threading.Thread(target=close_unread, daemon=True).start()
    # (warm=False: a warm-up request on the pre-opened connections would already find them
    # closed, and then nothing is attempted at all: see the next case)
    out, got = go(f"http://127.0.0.1:{port}", members(3), lead_s=0.3, warm=False)
    assert {r.error_type for r in got.values()} == {"EndpointConnectionError"}
    assert all(r.send_ns is None and r.status == "client_error" for r in got.values())

    # with the warm-up the closed connections are found before the burst: not one connection
    # could be opened, so nothing is sent and the driver reports the endpoint unreachable
    closer = socket.socket()
    closer.bind(("127.0.0.1", 0))
    closer.listen(16)
    port = closer.getsockname()[1]
    threading.Thread(target=close_unread, daemon=True).start()
    out, got = go(f"http://127.0.0.1:{port}", members(3))
    assert out["stopped"] == "unreachable" and got == {} and out["sent"] == 0

    # a server that reads each request, then dies before replying: it may have run
    reader = socket.socket()
    reader.bind(("127.0.0.1", 0))
    reader.listen(16)
    port = reader.getsockname()[1]

    def read_then_die():
        conns = [reader.accept()[0] for _ in range(3)]
        for c in conns:
            c.recv(65536)
            c.close()

    threading.Thread(target=read_then_die, daemon=True).start()
    out, got = go(f"http://127.0.0.1:{port}", members(3), lead_s=0.05, warm=False)
    reader.close()
    assert {r.error_type for r in got.values()} == {"MayHaveRun.ConnectionClosedError"}
    assert all(r.send_ns is not None for r in got.values())


def dispatcher_pids() -> list[int]:
    me = os.getpid()
    pids = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            stat = (p / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if ppid == me and comm.startswith("faascope-dispat"):
            pids.append(int(p.name))
    return pids


class CountingLambda(FakeLambda):
    """The fake endpoint, counting how often each member arrived (its index is in the path)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.seen: dict[int, int] = {}

    async def invoke(self, request):
        body = await request.read()
        try:
            i = int(json.loads(body)["workload"]["path"].rsplit("-", 1)[1])
        except (ValueError, KeyError, TypeError, IndexError):
            i = None
        if i is not None:
            self.seen[i] = self.seen.get(i, 0) + 1
        return await super().invoke(request)


def test_a_sigkilled_dispatcher_leaves_a_resumable_campaign_with_nothing_sent_twice(tmp_path):
    fake = CountingLambda(delay_s=0.01)
    url = fake.start()
    killed_at: list[int] = []

    def killer():
        deadline = time.time() + 30
        while time.time() < deadline and sum(fake.seen.values()) < 12:
            time.sleep(0.01)
        for pid in dispatcher_pids():
            killed_at.append(time.time_ns())
            os.kill(pid, signal.SIGKILL)

    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text(
        url, burst=30, reps=1, extra_load="  stagger: {batch_size: 5, delay: 150ms}",
        workload="{kind: fileio, op: write, file_size: 4KiB, io_size: 4KiB, path: \"m-{index}\"}"))
    db = tmp_path / "r.db"
    run = lambda **kw: run_campaign(spec, db, progress=False,  # noqa: E731
                                    provider_factory=lambda loaded: FakeEndpointProvider(url), **kw)
    try:
        t = threading.Thread(target=killer, daemon=True)
        t.start()
        with pytest.raises(Failure, match="dispatcher died"):
            run()
        t.join()
        assert killed_at
        with sqlite3.connect(db) as c:
            recs = c.execute("SELECT i.error_type, m.scheduled_ns, m.member FROM invocations i JOIN "
                             "burst_members m ON m.replication = i.replication").fetchall()
            status = c.execute("SELECT status FROM bursts").fetchall()
            ev = c.execute("SELECT count(*) FROM events WHERE kind='dispatcher_died'").fetchone()[0]
        assert status == [("interrupted",)] and ev == 1
        died = [r for r in recs if r[0] == "MayHaveRun.DispatcherDied"]
        # members past their instant without a reply may have been sent: recorded, not resent;
        # members whose instant had not come are left for --resume
        assert all(r[1] <= killed_at[0] + 50_000_000 for r in died)
        assert 12 <= len(recs) < 30
        before = dict(fake.seen)
        s = run(resume=True)
        assert s.complete and s.recorded == 30
        with sqlite3.connect(db) as c:
            slots = c.execute("SELECT replication, count(*) FROM invocations GROUP BY 1 "
                              "HAVING count(*) > 1").fetchall()
            attempts = c.execute("SELECT attempt, status FROM bursts ORDER BY attempt").fetchall()
        assert slots == [] and attempts == [(1, "interrupted"), (2, "complete")]
        # nothing reached the endpoint twice, and the resumed attempt sent only members that had
        # not been recorded (neither replied nor "may have run")
        assert max(fake.seen.values()) == 1
        resent = {i for i in fake.seen if i not in before}
        assert resent and not (resent & set(before))
        assert len(resent) == 30 - len(recs)
    finally:
        fake.stop()
