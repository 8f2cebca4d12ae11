"""A call that may have run (``MayHaveRun.*``: the request was sent, the reply was lost) stops the
run at its first record, and ``run --resume --rerun-may-have-run`` runs such calls again, each
new record replacing the old one in one transaction, the old kept in a ``may_have_run_rerun``
event (issue #29: a platform that died behind a proxy turned 186 of 256 invocations into
MayHaveRun in about a second, and --resume never reran them). Against the FAKE in-process
provider (tests/driver/driver_fakes.py) and the fake Lambda endpoint (burst_fakes.py)."""
from __future__ import annotations

import json
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import test_driver_fake as tdf
from driver_fakes import InProcessFakeProvider
from faascope.cli import cli
from faascope.driver.runner import run_campaign
from faascope.errors import Failure
from faascope.providers.invocation import MAY_HAVE_RUN
from faascope.store.reader import ResultsFile
from faascope.store.schema import MAY_HAVE_RUN_RERUN_EVENT, MAY_HAVE_RUN_STOP_EVENT


def _may_have_run_slots(db: Path) -> set[tuple]:
    with sqlite3.connect(db) as c:
        return set(c.execute("SELECT cell_key, replication, kind FROM invocations WHERE "
                             "status='client_error' AND substr(error_type, 1, ?) = ?",
                             (len(MAY_HAVE_RUN), MAY_HAVE_RUN)).fetchall())


def _events(db: Path, kind: str) -> list[dict]:
    with sqlite3.connect(db) as c:
        return [json.loads(d) for (d,) in c.execute(
            "SELECT detail_json FROM events WHERE kind=? ORDER BY id", (kind,))]


def _fake(after: int | None = None, delay_s: float = 0.0005) -> InProcessFakeProvider:
    return InProcessFakeProvider(delay_s=delay_s, may_have_run_after=after)


def test_the_run_stops_at_the_first_may_have_run_record_with_in_process_fake_provider(tmp_path):
    """A provider whose calls after the 5th all come back MayHaveRun (a platform that died
    behind a proxy): the run records the 6th and stops; it does not turn the rest of the
    campaign (34 more) into MayHaveRun records. The message says how to continue and rerun."""
    spec = tdf.write_spec(tmp_path, reps=3)  # 40 planned
    db = tmp_path / "r.db"
    fake = _fake(after=5)
    with pytest.raises(Failure) as exc:
        run_campaign(spec, db, provider_factory=lambda _: fake, progress=False)
    msg = exc.value.message
    assert "--rerun-may-have-run" in msg and "--resume" in msg and "read_timeout_s" in msg
    assert "6 of 40 invocations are recorded" in msg
    assert fake.invocations == 6
    assert len(tdf.records(db)) == 6
    assert len(_may_have_run_slots(db)) == 1
    stops = _events(db, MAY_HAVE_RUN_STOP_EVENT)
    assert len(stops) == 1 and stops[0]["error_type"] == "MayHaveRun.ConnectionClosedError"
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT status FROM campaign").fetchone()[0] == "interrupted"


def test_resume_without_the_flag_keeps_may_have_run_records_and_with_it_reruns_them(tmp_path):
    """--resume runs only what has no record (the MayHaveRun record stays, the campaign
    completes with it); --resume --rerun-may-have-run reruns exactly that invocation, the new
    record replaces the old (one record per planned run), the old one is kept whole in a
    may_have_run_rerun event naming the new record, and the analysis reads the new one."""
    spec = tdf.write_spec(tmp_path, reps=3)
    db = tmp_path / "r.db"
    with pytest.raises(Failure):
        run_campaign(spec, db, provider_factory=lambda _: _fake(after=5), progress=False)
    lost = _may_have_run_slots(db)
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        old = dict(c.execute("SELECT * FROM invocations WHERE status='client_error'").fetchone())
    with ResultsFile(db) as rf:  # before the rerun the analysis sees it as a client error
        flat = rf.flat(include_warmups=True)
    assert (flat["status"] == "client_error").sum() == 1

    plain = _fake()
    s = run_campaign(spec, db, resume=True, provider_factory=lambda _: plain, progress=False)
    assert s.complete and s.ran_now == 34 and plain.invocations == 34
    assert _may_have_run_slots(db) == lost          # not rerun without the flag
    assert tdf.records(db) == tdf.planned(db)

    again = _fake()
    s = run_campaign(spec, db, resume=True, rerun_may_have_run=True,
                     provider_factory=lambda _: again, progress=False)
    assert s.complete and s.ran_now == 1 and again.invocations == 1 and s.recorded == 40
    assert _may_have_run_slots(db) == set()
    assert tdf.records(db) == tdf.planned(db)       # one record per planned run, no duplicate
    reruns = _events(db, MAY_HAVE_RUN_RERUN_EVENT)
    assert len(reruns) == 1
    ev = reruns[0]
    assert (ev["cell_key"], ev["replication"], ev["kind"]) in lost
    assert ev["superseded"] == old                  # the old record, whole
    with sqlite3.connect(db) as c:
        new = c.execute("SELECT status, cell_key, replication, kind FROM invocations WHERE id=?",
                        (ev["invocation_id"],)).fetchone()
        resumed = [json.loads(d) for (d,) in c.execute(
            "SELECT detail_json FROM events WHERE kind='resumed' ORDER BY id")]
    assert new == ("ok", old["cell_key"], old["replication"], old["kind"])
    assert resumed[-1]["rerun_may_have_run"] == 1
    with ResultsFile(db) as rf:
        flat = rf.flat(include_warmups=True)
    assert len(flat) == 40 and (flat["status"] == "ok").all()
    # nothing left to rerun: the flag runs nothing more
    s = run_campaign(spec, db, resume=True, rerun_may_have_run=True,
                     provider_factory=lambda _: _fake(), progress=False)
    assert s.ran_now == 0 and len(_events(db, MAY_HAVE_RUN_RERUN_EVENT)) == 1


def test_a_rerun_that_may_have_run_again_stops_and_keeps_one_record(tmp_path):
    """The rerun comes back MayHaveRun again: its new record replaces the old (one record per
    planned run, the old in the event) and the run stops there."""
    spec = tdf.write_spec(tmp_path, reps=3)
    db = tmp_path / "r.db"
    with pytest.raises(Failure):
        run_campaign(spec, db, provider_factory=lambda _: _fake(after=2), progress=False)
    (key,) = _may_have_run_slots(db)
    dead = _fake(after=0)   # every call: MayHaveRun
    with pytest.raises(Failure, match="--rerun-may-have-run"):
        run_campaign(spec, db, resume=True, rerun_may_have_run=True,
                     provider_factory=lambda _: dead, progress=False)
    assert dead.invocations == 1           # the rerun (first in run order), then the stop
    assert len(tdf.records(db)) == 3 and _may_have_run_slots(db) == {key}
    (ev,) = _events(db, MAY_HAVE_RUN_RERUN_EVENT)
    assert (ev["cell_key"], ev["replication"], ev["kind"]) == key
    assert len(_events(db, MAY_HAVE_RUN_STOP_EVENT)) == 2


def test_rerun_may_have_run_needs_resume(tmp_path):
    spec = tdf.write_spec(tmp_path, reps=1)
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(tmp_path / "r.db"),
                                 "--rerun-may-have-run"])
    assert r.exit_code == 2 and "--rerun-may-have-run" in r.output and "--resume" in r.output
    assert not (tmp_path / "r.db").exists()


def _build_may_have_run_records(spec: Path, db: Path, rounds: int) -> set[tuple]:
    """A campaign with ``rounds`` MayHaveRun records (each run stops at its first)."""
    for i in range(rounds):
        with pytest.raises(Failure):
            run_campaign(spec, db, resume=i > 0, progress=False,
                         provider_factory=lambda _: _fake(after=3))
    return _may_have_run_slots(db)


def test_sigkill_during_reruns_loses_and_duplicates_nothing_with_in_process_fake_provider(tmp_path):
    """SIGKILL the runner (a subprocess) at random moments while it reruns MayHaveRun records:
    after every kill each planned run has at most one record, and every MayHaveRun record is
    either still there or replaced by a record that a may_have_run_rerun event holding the old
    one names (never lost, never both). Resumed with the flag, it ends with exactly the planned
    records and one event per rerun."""
    spec = tdf.write_spec(tmp_path, reps=20, warmup=1)  # 210 planned
    db = tmp_path / "r.db"
    lost = _build_may_have_run_records(spec, db, rounds=6)
    assert len(lost) == 6
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        originals = {(r["cell_key"], r["replication"], r["kind"]): dict(r) for r in c.execute(
            "SELECT * FROM invocations WHERE status='client_error'")}
    rng = random.Random(29)

    def check() -> None:
        recs = tdf.records(db)
        assert len(recs) == len(set((r[0], r[1], r[2]) for r in recs))   # no duplicate
        still = _may_have_run_slots(db)
        ev = _events(db, MAY_HAVE_RUN_RERUN_EVENT)
        replaced = {(e["cell_key"], e["replication"], e["kind"]) for e in ev}
        assert len(ev) == len(replaced)                                  # one event per rerun
        assert still | replaced == lost and not (still & replaced)       # nothing lost
        with sqlite3.connect(db) as c:
            for e in ev:
                key = (e["cell_key"], e["replication"], e["kind"])
                assert e["superseded"] == originals[key]
                row = c.execute("SELECT cell_key, replication, kind FROM invocations WHERE "
                                "id=?", (e["invocation_id"],)).fetchone()
                assert row == key

    kills = 0
    for _ in range(5):
        proc = tdf._run_fake(spec, db, "--resume", "--rerun-may-have-run", "--delay-ms", "4")
        target = tdf.count_records(db) + rng.randint(1, 40)
        deadline = time.time() + 30
        while tdf.count_records(db) < target and proc.poll() is None and time.time() < deadline:
            time.sleep(0.003)
        time.sleep(rng.uniform(0, 0.01))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        kills += 1
        check()
    proc = tdf._run_fake(spec, db, "--resume", "--rerun-may-have-run")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()[-2000:]
    check()
    assert kills >= 2
    assert tdf.records(db) == tdf.planned(db)
    assert _may_have_run_slots(db) == set()
    assert len(_events(db, MAY_HAVE_RUN_RERUN_EVENT)) == len(lost)
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_failed_rerun_write_keeps_the_old_record(tmp_path):
    """The old record leaves, the new one and its event arrive, in one transaction: a write that
    fails halfway (here the new row breaks a NOT NULL constraint) leaves the old record and no
    event."""
    from faascope.store.writer import ResultsStore

    spec = tdf.write_spec(tmp_path, reps=1)
    db = tmp_path / "r.db"
    with pytest.raises(Failure):
        run_campaign(spec, db, provider_factory=lambda _: _fake(after=1), progress=False)
    (key,) = _may_have_run_slots(db)
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        old = dict(c.execute("SELECT * FROM invocations WHERE status='client_error'").fetchone())
    bad = {k: v for k, v in old.items() if k != "id"}
    bad.update(status="ok", error_type=None, started_at=None)
    with ResultsStore(db) as st, pytest.raises(sqlite3.IntegrityError):
        st.record(bad, supersede=MAY_HAVE_RUN)
    assert _may_have_run_slots(db) == {key}
    assert _events(db, MAY_HAVE_RUN_RERUN_EVENT) == []
    # without supersede a second record of the slot is refused, as before
    from faascope.store.writer import DuplicateRecord
    good = dict(bad, started_at=old["started_at"])
    with ResultsStore(db) as st, pytest.raises(DuplicateRecord):
        st.record(good)
    with ResultsStore(db) as st:
        st.record(good, supersede=MAY_HAVE_RUN)
    assert _may_have_run_slots(db) == set() and len(_events(db, MAY_HAVE_RUN_RERUN_EVENT)) == 1


@pytest.mark.parametrize("dispatcher", ["go", "python"])
def test_a_burst_with_a_may_have_run_member_is_recorded_whole_then_the_run_stops_with_fake_lambda_endpoint(
        tmp_path, dispatcher, monkeypatch):
    """A burst of 10 whose 10th call loses its connection after it ran: the whole burst is
    recorded (10 records, one MayHaveRun), the next burst is not sent. With --rerun-may-have-run
    the member runs again as the burst's second attempt; its old record and member row are kept
    in the event."""
    from burst_fakes import FakeEndpointProvider, FakeLambda, spec_text

    monkeypatch.setenv("FAASCOPE_DISPATCHER", dispatcher)
    spec = tmp_path / "spec.yaml"
    db = tmp_path / "r.db"
    fake = FakeLambda(delay_s=0.005, drop_every=10)
    fake.start()
    try:
        spec.write_text(spec_text(fake.url, burst=10, reps=2))
        with pytest.raises(Failure, match="--rerun-may-have-run") as exc:
            run_campaign(spec, db, progress=False,
                         provider_factory=lambda _: FakeEndpointProvider(fake.url))
        assert "10 of 20 invocations are recorded" in exc.value.message
        assert fake.count == 10
        assert len(tdf.records(db)) == 10 and len(_may_have_run_slots(db)) == 1
        (stop,) = _events(db, MAY_HAVE_RUN_STOP_EVENT)
        assert stop["count"] == 1 and " burst " in stop["burst"]

        fake.drop_every = 0   # the platform is back
        s = run_campaign(spec, db, progress=False, resume=True, rerun_may_have_run=True,
                         provider_factory=lambda _: FakeEndpointProvider(fake.url))
    finally:
        fake.stop()
    assert s.complete and s.recorded == 20 and fake.count == 21
    assert _may_have_run_slots(db) == set() and tdf.records(db) == tdf.planned(db)
    (ev,) = _events(db, MAY_HAVE_RUN_RERUN_EVENT)
    assert ev["superseded"]["error_type"].startswith(MAY_HAVE_RUN)
    assert ev["superseded_member"]["attempt"] == 1
    with sqlite3.connect(db) as c:
        attempt = c.execute("SELECT attempt FROM burst_members WHERE cell_key=? AND "
                            "replication=? AND kind=?", (ev["cell_key"], ev["replication"],
                                                         ev["kind"])).fetchone()[0]
    assert attempt == 2
