"""What a run killed after its last record left undone is finished by --resume: the teardown
(functions deleted, found in the campaign's events), the ``complete`` event (exactly once), and
the ``bursts`` rows a kill left ``running`` (closed as interrupted). FAKE providers:
tests/driver/driver_fakes.py (in process) and tests/driver/burst_fakes.py (a loopback endpoint)."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from burst_fakes import FakeEndpointProvider, FakeLambda, spec_text
from driver_fakes import InProcessFakeProvider
from faascope.driver.campaign import Campaign
from faascope.driver.runner import run_campaign
from faascope.store.writer import ResultsStore

SPEC = """
name: resume-teardown
provider: {kind: local}
workload: {kind: noop}
factors: {memory: [128, 256, 512]}
design: {replications: 2, seed: 5}
"""


class Killed(BaseException):
    """Stands for SIGKILL at that point: nothing after it runs (not an Exception, so no handler
    of the code under test catches it)."""


def events(db: Path, kind: str) -> int:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT count(*) FROM events WHERE kind=?", (kind,)).fetchone()[0]


def status(db: Path) -> str:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT status FROM campaign").fetchone()[0]


@pytest.mark.parametrize("kill_in", ["settle", "teardown"])
def test_resume_after_the_last_record_tears_down_and_completes_once_with_in_process_fake_provider(
        tmp_path, monkeypatch, kill_in):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    db = tmp_path / "r.db"
    first = InProcessFakeProvider()
    if kill_in == "settle":
        # killed after the last record, before the campaign was marked complete
        def settle(self):
            raise Killed
        monkeypatch.setattr(Campaign, "_settle", settle)
    else:
        # killed after "complete" was written, while deleting the first function
        def teardown(name):
            raise Killed
        first.teardown = teardown
    with pytest.raises(Killed):
        run_campaign(spec, db, provider_factory=lambda _: first, progress=False)
    monkeypatch.undo()
    deployed = {n for c, n in first.calls if c == "deploy"}
    assert len(deployed) == 3 and first.invocations == 6
    assert not any(c == "teardown" for c, _ in first.calls)

    second = InProcessFakeProvider()
    s = run_campaign(spec, db, resume=True, provider_factory=lambda _: second, progress=False)
    assert s.complete and s.recorded == 6 and s.ran_now == 0
    assert second.invocations == 0
    assert {n for c, n in second.calls if c == "teardown"} == deployed   # deleted on resume
    assert status(db) == "complete"
    assert events(db, "complete") == 1
    assert events(db, "deleted") == 3

    # resuming again finds nothing to do: no provider call, still one "complete"
    third = InProcessFakeProvider()
    s = run_campaign(spec, db, resume=True, provider_factory=lambda _: third, progress=False)
    assert s.complete and third.calls == []
    assert events(db, "complete") == 1


def test_a_resumed_run_deletes_functions_deployed_by_the_run_before_with_in_process_fake_provider(
        tmp_path):
    """Interrupted after the first cells: the resumed run deploys only what its pending runs
    need, yet deletes every function of the campaign at the end."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("seed: 5", "seed: 5, randomize: false"))
    db = tmp_path / "r.db"
    first = InProcessFakeProvider()
    real_invoke = first.invoke

    def invoke(name, payload):  # killed before the sixth: only the last cell is pending
        if first.invocations == 5:
            raise Killed
        return real_invoke(name, payload)
    first.invoke = invoke
    with pytest.raises(Killed):
        run_campaign(spec, db, provider_factory=lambda _: first, progress=False)
    deployed = {n for c, n in first.calls if c == "deploy"}
    second = InProcessFakeProvider()
    s = run_campaign(spec, db, resume=True, provider_factory=lambda _: second, progress=False)
    assert s.complete and s.recorded == 6
    assert len({n for c, n in second.calls if c == "deploy"}) == 1
    assert {n for c, n in second.calls if c == "teardown"} == deployed
    assert events(db, "complete") == 1


def test_a_burst_cut_by_a_kill_is_closed_on_resume_with_fake_lambda_endpoint(tmp_path,
                                                                             monkeypatch):
    fake = FakeLambda(delay_s=0.002)
    fake.start()
    try:
        spec = tmp_path / "spec.yaml"
        spec.write_text(spec_text(fake.url, burst=5, reps=3))
        db = tmp_path / "r.db"
        real_end = ResultsStore.end_burst
        ended = []

        def end_burst(self, *a, **kw):  # killed after the second burst's records, before its end
            if len(ended) == 1:
                raise Killed
            ended.append(a)
            return real_end(self, *a, **kw)
        monkeypatch.setattr(ResultsStore, "end_burst", end_burst)
        with pytest.raises(Killed):
            run_campaign(spec, db, progress=False,
                         provider_factory=lambda _: FakeEndpointProvider(fake.url))
        monkeypatch.undo()
        with sqlite3.connect(db) as c:
            assert c.execute("SELECT count(*) FROM bursts WHERE status='running'").fetchone()[0] == 1
        s = run_campaign(spec, db, resume=True, progress=False,
                         provider_factory=lambda _: FakeEndpointProvider(fake.url))
        assert s.complete and s.recorded == 15
        with sqlite3.connect(db) as c:
            st = dict(c.execute("SELECT status, count(*) FROM bursts GROUP BY status").fetchall())
        assert st == {"complete": 2, "interrupted": 1}, st
    finally:
        fake.stop()
