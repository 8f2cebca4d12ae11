"""Provenance (issue #18): every run of the driver records what could explain drift, at its start
and its end, and the report shows it. FAKE provider: tests/driver/driver_fakes.py (in process);
the local platform's own report of its profile is checked in tests/analysis/test_calendar_campaign.py's
campaign by the same code path (``platform`` is filled only for a local endpoint that answers)."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from driver_fakes import InProcessFakeProvider
from faascope import __version__
from faascope.driver.campaign import Campaign
from faascope.driver.provenance import loadavg
from faascope.driver.runner import run_campaign
from faascope.report.sections.overview import provenance_table
from faascope.store.reader import ResultsFile

SPEC = """
name: provenance
provider: {kind: local}
function: {arch: arm64}
workload: {kind: noop}
factors: {memory: [128, 256]}
design: {replications: 2, seed: 5}
"""


def _provenance(db: Path) -> list[dict]:
    with sqlite3.connect(db) as c:
        return [json.loads(d) for (d,) in c.execute(
            "SELECT detail_json FROM events WHERE kind='provenance' ORDER BY id")]


def test_each_run_records_its_provenance_at_start_and_end_with_in_process_fake_provider(
        tmp_path, monkeypatch):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    db = tmp_path / "r.db"
    calls = {"n": 0}
    real_record = Campaign.record

    def record_then_stop(self, *a, **kw):  # the first run stops after two records
        real_record(self, *a, **kw)
        calls["n"] += 1
        if calls["n"] == 2:
            self.stop.stop = True
    monkeypatch.setattr(Campaign, "record", record_then_stop)
    try:
        run_campaign(spec, db, provider_factory=lambda _: InProcessFakeProvider(), progress=False)
    except Exception:
        pass  # interrupted, as asked
    monkeypatch.undo()
    run_campaign(spec, db, resume=True, provider_factory=lambda _: InProcessFakeProvider(),
                 progress=False)

    p = _provenance(db)
    assert [x["phase"] for x in p] == ["start", "end", "start", "end"]
    start = p[0]
    assert start["faascope_version"] == __version__
    assert start["architecture"] == "arm64" and start["provider"] == "local"
    assert start["kernel"] and start["cpus"] >= 1
    assert {t["table"] for t in start["price_tables"]} >= {"aws_lambda", "gcp_functions"}
    assert all(len(v) == 16 for v in start["builds"].values() if v)
    for x in p:
        la = x["loadavg"]
        assert set(la) == {"load1", "load5", "load15", "runnable", "tasks"}
        assert la["tasks"] >= la["runnable"] >= 1
    assert p[2]["at"] > p[1]["at"]
    assert loadavg()["tasks"] >= 1

    with ResultsFile(db) as rf:
        events = rf.campaign_meta()["events"]
    t = provenance_table(events)
    assert t is not None and len(t.section.rows) == 2           # two runs of the driver
    assert "arm64" in t.section.rows[0][6] and "aws_lambda@" in t.section.rows[0][7]


def test_files_without_provenance_have_no_table():
    assert provenance_table([{"kind": "created", "detail_json": "{}"}]) is None
