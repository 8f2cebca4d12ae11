"""The 2024 study's day-time analysis from a campaign's own data, with the calendar factors
derived at analysis time: a real periodic campaign (the real driver, the real local platform
with the lambda and gcf profiles as the platform factor, a real fileio write, the real results
file), whose records carry a TIME-LAPSE clock: one real second of the campaign is recorded as one
hour (the provider's send and end times are mapped, nothing else), so a campaign of seconds
spans a Friday afternoon to a Saturday, business hours, evening and weekend, as the study's four
days did. Reference: the same rows, labelled by the test with datetime and zoneinfo, fitted by
least squares (numpy) for the sequential (Type I) sums of squares.
"""
from __future__ import annotations

import dataclasses
import json
import sqlite3
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from click.testing import CliRunner

from faascope.analysis.commands import analyze_command
from faascope.driver.runner import run_campaign
from faascope.providers.local import LocalProvider
from go_binaries import skip_unless_built

#: the recorded clock: Friday 2023-11-10 15:30 UTC (the study's first week), one hour a second
LAPSE_START_NS = int(datetime(2023, 11, 10, 15, 30, tzinfo=timezone.utc).timestamp() * 1e9)
HOURS_PER_SECOND = 3600


class TimeLapseLocalProvider:
    """The real local provider; only the times it reports are mapped onto the time-lapse clock."""

    def __init__(self, inner: LocalProvider):
        self.inner = inner
        self.t0 = None

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def _lapse(self, ns):
        return None if ns is None else LAPSE_START_NS + (ns - self.t0) * HOURS_PER_SECOND

    def invoke(self, name, payload):
        res = self.inner.invoke(name, payload)
        self.t0 = self.t0 or res.send_ns
        return dataclasses.replace(res, send_ns=self._lapse(res.send_ns),
                                   headers_ns=self._lapse(res.headers_ns),
                                   end_ns=self._lapse(res.end_ns))


def _labels(stamp: str, zone: ZoneInfo) -> tuple[str, str]:
    t = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(zone)
    weekday = t.isoweekday() <= 5
    return ("BUSINESS_HOUR" if weekday and 9 <= t.hour < 18 else "OFF_HOUR",
            "WEEKDAY" if weekday else "WEEKEND")


def _type1(y: np.ndarray, a: list[str], b: list[str]) -> dict[str, float]:
    """Sequential sums of squares of y ~ A + B by least squares."""
    def rss(cols):
        x = np.column_stack([np.ones(len(y))] + cols)
        beta, *_ = np.linalg.lstsq(x, y, rcond=None)
        return float(((y - x @ beta) ** 2).sum())
    da = [np.array([v == lv for v in a], float) for lv in sorted(set(a))[1:]]
    db = [np.array([v == lv for v in b], float) for lv in sorted(set(b))[1:]]
    r0, ra, rab = rss([]), rss(da), rss(da + db)
    return {"A": r0 - ra, "B": ra - rab, "Residual": rab}


@pytest.mark.slow
@skip_unless_built()
def test_the_day_time_anova_per_platform_from_a_periodic_campaigns_own_data_time_lapse_clock(
        tmp_path, platform_dir):
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: day-time-lapse
provider:
  kind: local
  settings: {{data_dir: "{platform_dir}"}}
function: {{memory_mb: 256}}
workload: {{kind: fileio, op: write, file_size: 1MiB, io_size: 64KiB}}
factors:
  platform: [lambda, gcf]
design:
  replications: 1
  seed: 7
  schedule: {{every: 0.5s, slots: 44, late: run}}
""")
    db = tmp_path / "r.db"
    s = run_campaign(spec, db, progress=False,
                     provider_factory=lambda loaded: TimeLapseLocalProvider(
                         LocalProvider(data_dir=str(platform_dir))))
    assert s.complete and s.recorded == 88 and s.statuses == {"ok": 88}
    # the run's provenance names the calibration the local platform ran under (issue #18)
    with sqlite3.connect(db) as c:
        starts = [json.loads(d) for (d,) in c.execute(
            "SELECT detail_json FROM events WHERE kind = 'provenance'")]
    start = next(p for p in starts if p["phase"] == "start")
    cal = start["platform"]["calibration"]
    assert cal["lambda"]["table"] == "platform-lambda" and cal["gcf"]["table"] == "platform-gcf"
    assert start["platform"]["tmp_direct_io"] is True

    zone = "Europe/Berlin"
    r = CliRunner().invoke(analyze_command, [
        str(db), "--response", "latency_seconds", "--factors", "business_hours,week_period",
        "--scenario", "platform", "--model", "additive", "--tz", zone, "--ss-type", "1",
        "--format", "json", "--no-robust", "--bootstrap", "0"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["calendar"]["tz"] == zone and res["calendar"]["time_column"] == "started_at"

    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT platform, started_at, latency_seconds FROM invocations_flat "
                         "WHERE warmup = 0 AND ok = 1").fetchall()
    by_platform = {s["scenario"]["platform"]: s for s in res["scenarios"]}
    assert set(by_platform) == {"lambda", "gcf"}
    for platform, s in by_platform.items():
        mine = [(st, y) for p, st, y in rows if p == platform]
        labels = [_labels(st, ZoneInfo(zone)) for st, _ in mine]
        a, b = [x[0] for x in labels], [x[1] for x in labels]
        # the time lapse spans both levels of both factors
        assert set(a) == {"BUSINESS_HOUR", "OFF_HOUR"} and set(b) == {"WEEKDAY", "WEEKEND"}
        ref = _type1(np.array([y for _, y in mine]), a, b)
        got = {row["source"]: row["sum_sq"] for row in s["anova"]}
        assert got["business_hours"] == pytest.approx(ref["A"], rel=1e-8)
        assert got["week_period"] == pytest.approx(ref["B"], rel=1e-8)
        assert got["Residual"] == pytest.approx(ref["Residual"], rel=1e-8)
        assert s["n"] == len(mine)
