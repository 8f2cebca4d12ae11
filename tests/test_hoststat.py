"""The share of CPU time the hypervisor took (faascope.hoststat), from /proc/stat's steal column,
and how the fidelity report says it."""
from __future__ import annotations

import os

from rich.console import Console

from faascope import hoststat
from faascope.fidelity import compare, render

# two readings of a 2-CPU VM's /proc/stat 10 s apart (clock ticks of 10 ms: 2,000 in all), with
# 440 ticks stolen: the proportions of the `top` sample taken during the 2026-11-28 battery
BEFORE = """cpu  1000 0 500 8000 100 0 10 200 0 0
cpu0 500 0 250 4000 50 0 5 100 0 0
cpu1 500 0 250 4000 50 0 5 100 0 0
intr 1
"""
AFTER = """cpu  1200 0 750 8950 250 0 20 640 50 0
cpu0 600 0 375 4475 125 0 10 320 25 0
cpu1 600 0 375 4475 125 0 10 320 25 0
"""


def test_steal_is_its_share_of_all_cpu_time_between_two_readings():
    b, a = hoststat.read_cpu_times(BEFORE), hoststat.read_cpu_times(AFTER)
    # guest time (the 9th column) is already in user: not counted twice
    assert (b.total, b.steal) == (9810, 200) and a.total - b.total == 2000
    assert hoststat.steal_fraction(b, a) == 440 / 2000
    assert hoststat.steal_fraction(a, b) is None       # not an interval
    assert hoststat.read_cpu_times("cpu  1 2 3\n") is None   # no steal column
    assert hoststat.read_cpu_times("intr 1\n") is None


def test_a_stretch_of_work_is_measured_on_this_machine():
    log = hoststat.StealLog()
    with log.measure("spin"):
        t = os.times()
        while os.times().elapsed - t.elapsed < 0.2:
            pass
    assert list(log.fractions) == ["spin"]
    f = log.fractions["spin"]
    assert f is None or 0 <= f <= 1


def test_the_fidelity_report_warns_of_campaigns_the_hypervisor_slowed():
    machine = {"cpus": 2, "cpu_steal": {"tmp": 0.012, "warm": 0.22, "cold": None}}
    note = compare.steal_note(machine)
    assert "during 1 campaign(s) (warm 22% of all CPU time in the run kept)" in note and "tmp" not in note
    assert not compare.steal_note({"cpu_steal": {"tmp": 0.049}}) and not compare.steal_note({})
    ev = compare.evaluate([], {}, {})

    def table(steal: dict) -> str:
        con = Console(record=True, width=250)
        render.render_table(ev, {"workdir": "/x", "platform": {}, "machine": {"cpus": 2, "cpu_steal": steal}}, con)
        return con.export_text()

    assert "warning: the hypervisor took CPU time from this machine during 1 campaign(s)" in table(
        machine["cpu_steal"])
    out = table({"tmp": 0.012, "warm": 0.03})
    assert "warning" not in out and "The hypervisor took at most 3.0% of this machine's CPU" in out


def test_a_finding_says_which_of_its_campaigns_the_hypervisor_slowed():
    from faascope.fidelity import findings, findings_battery
    # every sample a finding compares comes from one campaign the battery knows
    keys = {k for f in findings.FINDINGS for p in f.parts for k in (p.a, p.b) if k}
    assert all(findings_battery.campaign_of(k) for k in keys), sorted(
        k for k in keys if not findings_battery.campaign_of(k))
    assert findings_battery.campaign_of("object/burst4") == "findings-roy"
    assert findings_battery.campaign_of("object/put") == "object"
    found = [findings.FindingResult(f, []) for f in findings.FINDINGS]
    findings_battery.note_steal(found, {"warm": 0.22, "cold": 0.01, "findings-cv": 0.04})
    notes = {r.finding.id: r.note for r in found if r.note}
    assert notes == {"stellar_cold_10x_warm": "the hypervisor took 22% of this machine's CPU time "
                                              "during the warm campaign: its timings are stretched by it"}


def fake_proc_stat(monkeypatch, steal_per_stretch):
    """Make /proc/stat advance 1,000 ticks a reading, the hypervisor taking the given share of each
    stretch between two readings (a measured stretch reads it twice, before and after)."""
    shares = iter(steal_per_stretch)
    state = {"total": 0, "steal": 0, "open": False}

    def read(text=None):
        if state["open"]:
            state["total"] += 1000
            state["steal"] += round(1000 * next(shares))
        state["open"] = not state["open"]
        return hoststat.CpuTimes(total=state["total"], steal=state["steal"])

    monkeypatch.setattr(hoststat, "read_cpu_times", read)


def test_a_stretch_the_hypervisor_slowed_runs_again_once(monkeypatch):
    fake_proc_stat(monkeypatch, [0.22, 0.01])
    log, ran = hoststat.StealLog(), []
    got = log.run("warm", lambda k: ran.append(k) or f"run{k}", limit=0.05, repeats=1)
    assert (got, ran) == ("run2", [1, 2])
    assert log.fractions == {"warm": 0.01} and log.repeated == {"warm": [0.22]}

    # slowed every time: the last run is kept, and said to be slowed
    fake_proc_stat(monkeypatch, [0.30, 0.20])
    log, ran = hoststat.StealLog(), []
    assert log.run("cold", ran.append, limit=0.05, repeats=1) is None and ran == [1, 2]
    assert log.fractions == {"cold": 0.2} and log.repeated == {"cold": [0.3]}
    assert compare.stolen(log.fractions) == {"cold": 0.2}

    # under the limit, or nothing to read (no steal column): one run
    fake_proc_stat(monkeypatch, [0.049])
    log, ran = hoststat.StealLog(), []
    log.run("tmp", ran.append, limit=0.05, repeats=1)
    assert ran == [1] and not log.repeated
    monkeypatch.setattr(hoststat, "read_cpu_times", lambda text=None: None)
    log, ran = hoststat.StealLog(), []
    log.run("tmp", ran.append, limit=0.05, repeats=1)
    assert ran == [1] and not log.repeated and log.fractions == {"tmp": None}


def test_the_battery_repeats_a_slowed_campaign_into_a_file_of_its_own(monkeypatch, tmp_path):
    from faascope.fidelity import battery, findings_battery
    fake_proc_stat(monkeypatch, [0.4, 0.0])
    runs = []
    monkeypatch.setattr(battery, "run_campaign", lambda spec, db, **kw: runs.append((spec.name, db.name)))
    monkeypatch.setattr(battery, "failures", lambda db: "")
    # findings-cv rests on the disk too (battery.DISK_BOUND): no disk probe to read here
    monkeypatch.setattr(battery, "host_disk_read", lambda where: None)
    monkeypatch.setattr(findings_battery, "READERS", {"findings-cv": lambda db: {"cv/m128": db.name}})
    log = hoststat.StealLog()
    evidence, notes, results = findings_battery.run_findings(
        True, tmp_path, "http://127.0.0.1:1", {}, lambda s: None, only=("findings-cv",), steal=log)
    assert runs == [("findings-cv.yaml", "findings-cv.db"), ("findings-cv.yaml", "findings-cv-run2.db")]
    # the findings read the run kept; the one set aside is said
    assert evidence == {"cv/m128": "findings-cv-run2.db"} and results["findings-cv"].endswith("-run2.db")
    assert log.repeated == {"findings-cv": [0.4]} and log.fractions == {"findings-cv": 0.0}
    note = compare.repeat_note({"cpu_steal_repeated": log.repeated})
    assert note == ("run again because the hypervisor took 5% or more of this machine's CPU time "
                    "during them: findings-cv (40%); the figures are the last run's")
    con = Console(record=True, width=250)
    render.render_table(compare.evaluate([], {}, {}), {"workdir": "/x", "platform": {}, "machine": {
        "cpus": 2, "cpu_steal": log.fractions, "cpu_steal_repeated": log.repeated}}, con)
    assert "Run again because the hypervisor took 5% or more" in con.export_text()


def test_a_stretch_whose_other_reading_was_not_calm_runs_again_after_a_wait(monkeypatch):
    """calm(k) is read after every attempt; an attempt it sets aside runs again without being
    counted as the hypervisor's, and before_repeat runs outside the measured stretch."""
    fake_proc_stat(monkeypatch, [0.0, 0.0])
    log, events = hoststat.StealLog(), []
    readings = iter([False, True])

    def calm(k):
        events.append(("calm", k))
        return next(readings)

    got = log.run("findings-cv", lambda k: events.append(("run", k)) or f"run{k}", limit=0.05,
                  repeats=1, calm=calm, before_repeat=lambda k: events.append(("wait", k)))
    assert got == "run2"
    assert events == [("run", 1), ("calm", 1), ("wait", 2), ("run", 2), ("calm", 2)]
    assert log.repeated == {} and log.fractions == {"findings-cv": 0.0}

    # never calm: one repeat at most, the last run kept
    fake_proc_stat(monkeypatch, [0.0, 0.0])
    log, ran = hoststat.StealLog(), []
    assert log.run("findings-cv", lambda k: ran.append(k) or k, limit=0.05, repeats=1,
                   calm=lambda k: False) == 2 and ran == [1, 2]

    # stretched by the hypervisor and calm otherwise: repeated, and counted as the hypervisor's
    fake_proc_stat(monkeypatch, [0.3, 0.0])
    log, ran = hoststat.StealLog(), []
    log.run("findings-cv", ran.append, limit=0.05, repeats=1, calm=lambda k: True)
    assert ran == [1, 2] and log.repeated == {"findings-cv": [0.3]}
