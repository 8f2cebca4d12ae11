"""Periodic campaigns (design.schedule, docs/schedules.md): the slots' due times, and the driver
keeping to them: a slot runs once or is recorded as missed (a durable event), never closer to
the slot before than its period, across restarts.

The in-process tests use the FAKE provider of tests/driver/driver_fakes.py (their names say so);
the kill-and-restart test runs the real `faascope run` against the real local platform. Timing
assertions have margins for a loaded 2-core machine: a lower bound on spacing that bunching
would break by far (a backlog sent back to back is milliseconds apart), never an upper bound
on how late something may be, except where the test makes the slot late by seconds on purpose.
"""
from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from driver_fakes import InProcessFakeProvider
from faascope.designs.plan import build_plan
from faascope.designs.slots import slot_plan
from faascope.driver.periodic import CATCH_UP, earliest_start
from faascope.driver.runner import run_campaign
from faascope.errors import BadInput
from faascope.specs.loader import load_spec
from faascope.specs.model import ScheduleSpec
from go_binaries import skip_unless_built


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).isoformat()


# ----------------------------------------------------------------------------- due times
def test_every_with_duration_has_duration_over_period_slots_at_whole_periods():
    # the 2024 study: a write every minute for four days = 5,760 slots
    p = slot_plan(ScheduleSpec(every="1m", duration="4d"), 1_000_000.0)
    assert len(p.due) == 5760
    assert p.due[0] == 1_000_000.0 and p.due[-1] == 1_000_000.0 + 5759 * 60
    assert p.grace_s == 30.0 and p.late == "miss" and p.floating


def test_until_and_slots_bound_the_schedule_whichever_comes_first():
    start = datetime(2026, 1, 5, 8, 0, tzinfo=timezone.utc)
    until = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    p = slot_plan(ScheduleSpec(every="15m", start=start, until=until), 0.0)
    assert [iso(t)[11:16] for t in p.due] == ["08:00", "08:15", "08:30", "08:45"]  # until excluded
    assert not p.floating
    p = slot_plan(ScheduleSpec(every="15m", start=start, until=until, slots=2), 0.0)
    assert len(p.due) == 2


def test_cron_times_are_in_the_schedules_time_zone_across_a_summer_time_change():
    # 09:00 on weekdays in Berlin: 08:00 UTC in winter, 07:00 UTC after 2026-03-29
    start = datetime(2026, 3, 26, 0, 0, tzinfo=timezone.utc)  # a Thursday
    p = slot_plan(ScheduleSpec(cron="0 9 * * 1-5", tz="Europe/Berlin", start=start, slots=3), 0.0)
    assert [iso(t) for t in p.due] == ["2026-03-26T08:00:00+00:00", "2026-03-27T08:00:00+00:00",
                                       "2026-03-30T07:00:00+00:00"]
    # grace: half the shortest gap (one day), unless given
    assert p.grace_s == 12 * 3600


def test_a_cron_time_equal_to_the_start_is_the_first_slot():
    start = datetime(2026, 1, 5, 8, 0, tzinfo=timezone.utc)
    p = slot_plan(ScheduleSpec(cron="*/30 * * * *", start=start, duration="1h"), 0.0)
    assert [iso(t)[11:16] for t in p.due] == ["08:00", "08:30"]


@pytest.mark.parametrize("schedule, field", [
    ({"every": "1m"}, "design.schedule"),                                   # no end
    ({"every": "1m", "cron": "* * * * *", "slots": 2}, "design.schedule"),  # both
    ({"cron": "0 25 * * *", "slots": 2}, "design.schedule.cron"),
    ({"every": "1m", "slots": 2, "until": "2026-01-01T00:00:00"}, "design.schedule.until"),
    ({"every": "1m", "slots": 2, "tz": "Mars/Olympus"}, "design.schedule.tz"),
    ({"every": "1m", "slots": 2, "late": "later"}, "design.schedule.late"),
])
def test_bad_schedules_are_refused_naming_the_field(tmp_path, schedule, field):
    spec = tmp_path / "s.yaml"
    spec.write_text(json.dumps({"name": "x", "provider": {"kind": "local"},
                                "workload": {"kind": "noop"},
                                "design": {"schedule": schedule}}))
    with pytest.raises(BadInput) as e:
        load_spec(spec)
    assert field in str(e.value.message)


def test_a_schedule_with_blocking_or_bursts_is_refused(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(json.dumps({"name": "x", "provider": {"kind": "local"},
                                "workload": {"kind": "noop"}, "load": {"burst_size": 2},
                                "design": {"replications": 2, "blocking": {"blocks": 2, "interval": 5},
                                           "schedule": {"every": 1, "slots": 2}}}))
    with pytest.raises(BadInput) as e:
        load_spec(spec)
    assert "design.blocking" in str(e.value.message) and "load section" in str(e.value.message)


def test_each_slot_is_a_block_with_every_cell_replications_times(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(json.dumps({"name": "x", "provider": {"kind": "local"},
                                "workload": {"kind": "noop"}, "factors": {"memory": [128, 256]},
                                "design": {"replications": 2, "seed": 1,
                                           "schedule": {"every": "1m", "slots": 3}}}))
    plan = build_plan(load_spec(spec), anchor_unix=0.0)
    assert plan.replications == 6 and plan.design_replications == 2 and plan.blocks == 3
    per_slot = {}
    for r in plan.runs:
        per_slot.setdefault(r.block, []).append(r.cell_key)
    assert sorted(per_slot) == [0, 1, 2]
    assert all(len(v) == 4 and len(set(v)) == 2 for v in per_slot.values())
    # the run order is slot by slot
    assert [r.block for r in plan.runs] == sorted(r.block for r in plan.runs)


def test_plan_shows_the_schedule(tmp_path):
    from click.testing import CliRunner

    from faascope.cli import cli

    spec = _spec(tmp_path, {"every": "1m", "duration": "4d", "late": "run"},
                 factors={"memory": [128, 256]})
    r = CliRunner().invoke(cli, ["plan", str(spec), "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["schedule"]["slots"] == 5760 and d["schedule"]["every_s"] == 60.0
    assert d["schedule"]["late"] == "run" and d["schedule"]["replications_per_slot"] == 1
    assert d["invocations"] == 2 * 5760 and d["blocks"] == 5760
    assert d["estimate"]["seconds"] >= 5759 * 60       # the slots span four days
    r = CliRunner().invoke(cli, ["plan", str(spec)])
    assert "Schedule: 5760 slot(s) every 1 min" in " ".join(r.output.split()), r.output


def test_the_earliest_start_keeps_the_period_after_the_last_slot_that_started():
    p = slot_plan(ScheduleSpec(every=10, slots=5), 100.0)
    assert earliest_start(p, 1, None) == 110.0
    # slot 0 started 4 s late: slot 1 may not start before 104 + 10 * (1 - CATCH_UP)
    assert earliest_start(p, 1, (0, 104.0)) == pytest.approx(104.0 + 10 * (1 - CATCH_UP))
    # after a missed slot, one period after the last that started (not the gap to it)
    assert earliest_start(p, 3, (0, 104.0)) == 130.0


# ----------------------------------------------------------------------------- the driver
def _spec(tmp_path: Path, schedule: dict, factors: dict | None = None) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(json.dumps({"name": "periodic", "provider": {"kind": "local"},
                                "workload": {"kind": "noop"}, "factors": factors or {},
                                "design": {"replications": 1, "seed": 2, "schedule": schedule}}))
    return spec


def _slots(db: Path) -> dict[int, dict]:
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        return {r["slot"]: dict(r) for r in c.execute("SELECT * FROM schedule_slots")}


def _events(db: Path, kind: str) -> list[dict]:
    with sqlite3.connect(db) as c:
        return [json.loads(d) for (d,) in c.execute(
            "SELECT detail_json FROM events WHERE kind=? ORDER BY id", (kind,))]


def _sends(db: Path) -> dict[int, list[float]]:
    with sqlite3.connect(db) as c:
        out: dict[int, list[float]] = {}
        for block, ns in c.execute("SELECT block, client_send_ns FROM invocations ORDER BY order_index"):
            out.setdefault(block, []).append(ns / 1e9)
        return out


def test_slots_due_before_the_driver_ran_are_recorded_missed_and_the_rest_keep_their_period_with_in_process_fake_provider(tmp_path):
    period = 0.5
    start = time.time() - 10 * period - 0.01   # slots 0-9 are past their grace
    spec = _spec(tmp_path, {"every": period, "slots": 16, "start": iso(start)},
                 factors={"memory": [128, 256]})
    db = tmp_path / "r.db"
    s = run_campaign(spec, db, provider_factory=lambda _: InProcessFakeProvider(), progress=False)
    assert s.complete and not s.interrupted
    slots = _slots(db)
    missed = sorted(k for k, v in slots.items() if v["status"] == "missed")
    ran = sorted(k for k, v in slots.items() if v["status"] == "done")
    assert sorted(missed + ran) == list(range(16))          # every slot: run or missed
    assert set(range(10)) <= set(missed) and len(ran) >= 3
    events = _events(db, "slot_missed")
    assert sorted(e["slot"] for e in events) == missed      # one durable event each
    assert all(e["reason"] == "the driver was not running" for e in events if e["slot"] < 10)
    sends = _sends(db)
    assert sorted(sends) == ran and all(len(v) == 2 for v in sends.values())  # both cells, once
    assert s.recorded == 2 * len(ran) and s.missed == 2 * len(missed)
    starts = [slots[k]["started_unix"] for k in ran]
    assert all(b - a >= period * (1 - CATCH_UP) - 1e-6 for a, b in zip(starts, starts[1:]))
    firsts = [sends[k][0] for k in ran]
    assert all(b - a >= period / 2 for a, b in zip(firsts, firsts[1:])), firsts  # never bunched


def test_late_run_runs_every_slot_late_one_period_apart_instead_of_back_to_back_with_in_process_fake_provider(tmp_path):
    period = 0.5
    start = time.time() - 3 * period            # three slots are already late
    spec = _spec(tmp_path, {"every": period, "slots": 5, "start": iso(start), "late": "run"})
    db = tmp_path / "r.db"
    t0 = time.time()
    s = run_campaign(spec, db, provider_factory=lambda _: InProcessFakeProvider(), progress=False)
    assert s.complete and s.recorded == 5 and s.missed == 0
    slots = _slots(db)
    assert [slots[k]["status"] for k in range(5)] == ["done"] * 5 and not _events(db, "slot_missed")
    starts = [slots[k]["started_unix"] for k in range(5)]
    assert all(b - a >= period * (1 - CATCH_UP) - 1e-6 for a, b in zip(starts, starts[1:]))
    assert slots[0]["late_s"] > 2 * period                      # run late, and said so
    # the backlog took about four periods, not a burst (bound: it cannot be shorter)
    assert time.time() - t0 >= 4 * period * (1 - CATCH_UP)


# ----------------------------------------------------------------------------- killed and restarted
def _run(spec: Path, db: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "faascope", "run", str(spec), "--results",
                             str(db), "--no-progress", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _recorded(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
            return c.execute("SELECT count(*) FROM invocations").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.slow
@skip_unless_built()
def test_a_periodic_campaign_killed_and_restarted_runs_each_slot_once_or_records_it_missed(
        tmp_path, platform_dir, request):
    """Done when (issue #18): SIGKILL at random moments (waiting, deploying, invoking), restart
    with --resume after random pauses, one of them long enough that slots are missed; in the
    end every slot ran exactly once or is recorded as missed, and no two slots ran closer than
    their period."""
    period, n = 2.0, 20
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: periodic-kill
provider:
  kind: local
  settings: {{data_dir: "{platform_dir}"}}
workload: {{kind: noop}}
design:
  replications: 1
  schedule: {{every: {period}s, slots: {n}}}
""")
    db = tmp_path / "r.db"
    rng = random.Random(18)
    kills = 0
    proc = _run(spec, db)
    request.addfinalizer(lambda: proc.poll() is None and proc.kill())
    # kill it (up to) three times at a random moment after it recorded something new; the
    # first pause is longer than the grace, so slots are missed
    for pause in (2.5 * period, rng.uniform(0, 1), rng.uniform(0, 1)):
        seen = _recorded(db)
        deadline = time.time() + 60
        while _recorded(db) <= seen and time.time() < deadline and proc.poll() is None:
            time.sleep(0.05)
        time.sleep(rng.uniform(0, period))
        if proc.poll() is not None:
            break
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        time.sleep(pause)
        proc = _run(spec, db, "--resume")
        request.addfinalizer(lambda p=proc: p.poll() is None and p.kill())
    out, _ = proc.communicate(timeout=180)
    assert proc.returncode == 0, out
    # on a busy machine a restart can take longer than the slots left: at least one kill
    assert kills >= 1

    slots = _slots(db)
    with sqlite3.connect(db) as c:
        planned = c.execute("SELECT count(*) FROM planned_runs").fetchone()[0]
        per_run = c.execute("SELECT max(k) FROM (SELECT count(*) AS k FROM invocations "
                            "GROUP BY cell_key, replication, kind)").fetchone()[0]
        status = c.execute("SELECT status FROM campaign").fetchone()[0]
    assert planned == n and status == "complete"
    assert per_run == 1                                       # nothing ran twice
    sends = _sends(db)
    missed = {k for k, v in slots.items() if v["status"] == "missed"}
    assert set(sends) | missed == set(range(n))               # each slot ran or was missed …
    assert not set(sends) & missed                            # … never both
    assert all(slots[k]["status"] == "done" for k in sends)
    assert sorted(e["slot"] for e in _events(db, "slot_missed")) == sorted(missed)
    assert missed, "the long pause must have cost at least one slot"
    assert len(sends) >= kills       # each killed run had recorded a new slot
    # spacing: what the driver enforces (its recorded starts), and what the platform saw (the
    # sends); bunching after a restart would put them milliseconds apart
    ran = sorted(sends)
    starts = [slots[k]["started_unix"] for k in ran]
    assert all(b - a >= period * (1 - CATCH_UP) - 1e-6 for a, b in zip(starts, starts[1:])), starts
    firsts = [sends[k][0] for k in ran]
    assert all(b - a >= period / 2 for a, b in zip(firsts, firsts[1:])), firsts
    assert len(_events(db, "resumed")) == kills


def _stop_if_running(db: Path) -> None:
    """Never leave a detached runner behind a failed test: it would outlive the platform
    fixture and start a platform of its own."""
    from faascope.driver.detach import runner_alive, stop_runner

    if runner_alive(db):
        stop_runner(db, 60, abandon=True)


@pytest.mark.slow
@skip_unless_built()
def test_detach_status_stop_and_resume_detached(tmp_path, platform_dir, request):
    """`run --detach` returns at once with a runner in its own session; `status` sees it, a
    second runner of the same file is refused (exit 2), `stop` ends it cleanly (SIGTERM, the
    campaign is interrupted and resumable), a SIGKILLed runner is reported as killed, and a
    resumed detached run completes."""
    from click.testing import CliRunner

    from faascope.cli import cli

    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: periodic-detach
provider:
  kind: local
  settings: {{data_dir: "{platform_dir}"}}
workload: {{kind: noop}}
design:
  replications: 1
  schedule: {{every: 1s, slots: 8}}
""")
    db = tmp_path / "r.db"
    request.addfinalizer(lambda: _stop_if_running(db))
    cli_run = CliRunner().invoke
    r = cli_run(cli, ["run", str(spec), "--results", str(db), "--detach"])
    assert r.exit_code == 0, r.output
    state = json.loads((tmp_path / "r.db.run.json").read_text())
    assert state["state"] == "running" and f"pid {state['pid']}" in r.output

    st = json.loads(cli_run(cli, ["status", str(db), "--format", "json"]).output)
    assert st["running"] and st["runner"]["pid"] == state["pid"]   # (the campaign may be new)
    # one runner per results file
    r = cli_run(cli, ["run", str(spec), "--results", str(db), "--resume"])
    assert r.exit_code == 2 and "already running" in r.output

    deadline = time.time() + 60
    while _recorded(db) < 1 and time.time() < deadline:
        time.sleep(0.1)
    r = cli_run(cli, ["stop", str(db)])
    assert r.exit_code == 0 and "stopped the runner" in r.output, r.output
    st = json.loads(cli_run(cli, ["status", str(db), "--format", "json"]).output)
    assert not st["running"] and st["status"] == "interrupted"
    assert st["runner"]["state"] == "ended" and st["runner"]["exit_code"] == 1
    text = cli_run(cli, ["status", str(db)]).output
    assert "continue with: faascope run" in text and "--resume --detach" in text
    assert "stopping after the invocation in flight" in (tmp_path / "r.db.log").read_text()

    # resumed detached, then SIGKILLed: status says it was killed
    r = cli_run(cli, ["run", str(spec), "--results", str(db), "--resume", "--detach"])
    assert r.exit_code == 0, r.output
    pid = json.loads((tmp_path / "r.db.run.json").read_text())["pid"]
    import os
    os.kill(pid, signal.SIGKILL)
    deadline = time.time() + 30
    while json.loads(cli_run(cli, ["status", str(db), "--format", "json"]).output)["running"]:
        assert time.time() < deadline
        time.sleep(0.1)
    assert "was killed" in cli_run(cli, ["status", str(db)]).output

    r = cli_run(cli, ["run", str(spec), "--results", str(db), "--resume", "--detach"])
    assert r.exit_code == 0, r.output
    deadline = time.time() + 120
    while json.loads(cli_run(cli, ["status", str(db), "--format", "json"]).output)["running"]:
        assert time.time() < deadline, "the detached run did not finish"
        time.sleep(0.5)
    st = json.loads(cli_run(cli, ["status", str(db), "--format", "json"]).output)
    assert st["status"] == "complete" and st["runner"]["outcome"] == "complete"
    assert st["recorded"] + st["slots"]["missed_invocations"] == 8
    assert cli_run(cli, ["stop", str(db)]).output.startswith("nothing to stop")
    # at boot (`@reboot … --resume --detach`) a finished campaign is no error: the runner
    # ends at once (before or just after it took its lock), complete
    r = cli_run(cli, ["run", str(spec), "--results", str(db), "--resume", "--detach"])
    assert r.exit_code == 0, r.output
    deadline = time.time() + 60
    while json.loads(cli_run(cli, ["status", str(db), "--format", "json"]).output)["running"]:
        assert time.time() < deadline
        time.sleep(0.2)
    st = json.loads(cli_run(cli, ["status", str(db), "--format", "json"]).output)
    assert st["runner"]["outcome"] == "complete" and st["runner"]["exit_code"] == 0


class Killed(BaseException):
    """Stands for SIGKILL at that point (not an Exception: no handler of the code under test
    catches it)."""


@pytest.mark.parametrize("pause, continues", [(0.0, True), (2.5, False)])
def test_a_slot_cut_by_a_kill_continues_within_its_grace_or_its_rest_is_missed_with_in_process_fake_provider(
        tmp_path, pause, continues):
    period = 2.0   # a grace of 1.8 s: the immediate resume is well within it, 2.5 s is not
    spec = _spec(tmp_path, {"every": period, "slots": 4, "grace": 1.8},
                 factors={"memory": [128, 256]})
    db = tmp_path / "r.db"

    class KillOnFifth(InProcessFakeProvider):
        def invoke(self, name, payload):
            if self.invocations == 5:          # slot 2 (third), its second invocation
                raise Killed
            return super().invoke(name, payload)

    with pytest.raises(Killed):
        run_campaign(spec, db, provider_factory=lambda _: KillOnFifth(), progress=False)
    cut = _slots(db)[2]
    assert cut["status"] == "running" and len(_sends(db)[2]) == 1
    time.sleep(pause)
    s = run_campaign(spec, db, resume=True, provider_factory=lambda _: InProcessFakeProvider(),
                     progress=False)
    assert s.complete
    slots, sends = _slots(db), _sends(db)
    if continues:
        assert slots[2]["status"] == "done" and len(sends[2]) == 2
        assert slots[2]["started_unix"] == cut["started_unix"]   # it keeps its start
        assert not _events(db, "slot_missed")
    else:
        assert slots[2]["status"] == "missed" and len(sends[2]) == 1   # the recorded run stays
        ev = _events(db, "slot_missed")
        assert [e["slot"] for e in ev][0] == 2 and ev[0]["unrecorded"] == 1
        assert "stopped during the slot" in ev[0]["reason"]
        assert s.missed >= 1
    # slot 3 (due one period after slot 2) never ran sooner than a period after slot 2's start
    if slots[3]["status"] == "done":
        assert slots[3]["started_unix"] - slots[2].get("started_unix", cut["started_unix"]) \
            >= period * (1 - CATCH_UP) - 1e-6
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT max(k) FROM (SELECT count(*) AS k FROM invocations GROUP BY "
                         "cell_key, replication, kind)").fetchone()[0] == 1
