"""The burst driver end to end against a FAKE Lambda endpoint (tests/driver/burst_fakes.py): the
real async client, SigV4 signing, schedules, store, resume, throttles and the error budget; no Go
platform. The real local platform is in test_burst_local.py."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from burst_fakes import FakeEndpointProvider, FakeLambda, spec_text
from faascope.analysis.concurrency import burst_stats, load_bursts, stagger_improvements
from faascope.driver.runner import run_campaign
from faascope.errors import BadInput, Failure

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"


@pytest.fixture
def fake():
    f = FakeLambda(delay_s=0.005)
    f.start()
    yield f
    f.stop()


def run(spec: Path, db: Path, endpoint: str, **kw):
    return run_campaign(spec, db, progress=False,
                        provider_factory=lambda loaded: FakeEndpointProvider(endpoint), **kw)


def rows(db: Path, sql: str) -> list[dict]:
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        return [dict(r) for r in c.execute(sql)]


def write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("dispatcher", ["go", "python"])
def test_burst_campaign_records_every_member_with_fake_lambda_endpoint(tmp_path, fake, dispatcher,
                                                                       monkeypatch):
    monkeypatch.setenv("FAASCOPE_DISPATCHER", dispatcher)
    spec = write(tmp_path, spec_text(fake.url, burst=25, reps=2, extra_load="  warm_pool: 5\n  functions: 2"))
    db = tmp_path / "r.db"
    s = run(spec, db, fake.url)
    assert s.complete and s.recorded == 2 * (25 + 5) and s.statuses == {"ok": 60}
    inv = rows(db, "SELECT * FROM burst_invocations WHERE warmup = 0")
    assert len(inv) == 50
    assert sorted(r["replication"] for r in inv) == list(range(50))
    assert {r["member"] for r in inv} == set(range(25))
    assert {r["function_copy"] for r in inv} == {0, 1}
    assert {r["function_name"][-3:] for r in inv} == {"-p0", "-p1"}
    for r in inv:
        assert r["wait_s"] > 0 and r["run_s"] > 0
        assert r["service_s"] == pytest.approx(r["wait_s"] + r["run_s"], abs=1e-6)
        assert r["send_lag_s"] > -0.002  # never sent before its time
    bursts = rows(db, "SELECT * FROM bursts ORDER BY burst, kind")
    assert [(b["kind"], b["status"], b["planned"], b["recorded"]) for b in bursts] == \
        [("measure", "complete", 25, 25), ("warmup", "complete", 5, 5)] * 2
    d = json.loads(bursts[0]["detail_json"])
    assert d["send_spread_s"] < 0.5 and d["statuses"] == {"ok": 25}
    assert d["wait_s"]["p99"] >= d["wait_s"]["p50"] and "max" in d["service_s"]
    # every request was signed with SigV4 by boto3's signer and sent once on a connection
    # opened before the burst with a DryRun invoke (the Go dispatcher: one per member)
    assert fake.dry_runs >= 25
    if dispatcher == "go":
        assert d["dispatch"]["connected"] == 25
        assert d["dispatch"]["max_rss_kb"] > 0 and d["dispatch"]["fds"] >= 25
    assert d["dispatch"]["dispatcher"] == dispatcher
    assert json.loads(bursts[0]["schedule_json"])["dispatcher"] == dispatcher
    assert d["new_connections"] == 0
    ev = rows(db, "SELECT detail_json FROM events WHERE kind='burst_driver'")
    assert json.loads(ev[0]["detail_json"])["attempts_per_invocation"] == 1
    assert json.loads(ev[0]["detail_json"])["dispatcher"] == dispatcher
    stats = burst_stats(load_bursts(db))
    assert len(stats) == 2 and set(stats["ok"]) == {25}
    assert (stats["hosts"] == 1).all() and (stats["instances"] >= 1).all()
    assert (stats["wait_s_p50"] <= stats["wait_s_p99"]).all()


def test_staggered_start_times_follow_the_schedule_with_fake_lambda_endpoint(tmp_path, fake):
    n, b, d = 40, 10, 0.25
    spec = write(tmp_path, spec_text(fake.url, burst=n, reps=1,
                                     extra_load=f"  stagger: {{batch_size: {b}, delay: {d}s}}"))
    db = tmp_path / "r.db"
    run(spec, db, fake.url)
    inv = rows(db, "SELECT batch, client_send_ns, scheduled_ns, planned_offset_s FROM burst_invocations")
    first = {}
    for r in inv:
        first[r["batch"]] = min(first.get(r["batch"], r["client_send_ns"]), r["client_send_ns"])
        assert r["planned_offset_s"] == pytest.approx(r["batch"] * d)
    assert sorted(first) == [0, 1, 2, 3]
    span = (first[3] - first[0]) / 1e9
    assert span == pytest.approx((n / b - 1) * d, abs=0.05)  # last batch at (N/b - 1)·d
    lag = max((r["client_send_ns"] - r["scheduled_ns"]) / 1e9 for r in inv)
    assert lag < 0.1


def test_throttles_are_recorded_and_the_error_budget_stops_the_run_with_fake_lambda_endpoint(tmp_path):
    fake = FakeLambda(delay_s=0.2, concurrency=5)
    fake.start()
    try:
        spec = write(tmp_path, spec_text(fake.url, burst=30, reps=3,
                                         extra_load="  error_budget: {max_failed_fraction: 0.5}"))
        db = tmp_path / "r.db"
        with pytest.raises(Failure, match="error budget exceeded"):
            run(spec, db, fake.url)
    finally:
        fake.stop()
    recs = rows(db, "SELECT status, error_type, retries, attempts FROM invocations")
    assert len(recs) == 30  # the first burst is recorded in full, then the run stops
    thr = [r for r in recs if r["error_type"] == "TooManyRequestsException"]
    assert len(thr) == 25 and all(r["status"] == "client_error" for r in thr)
    assert all(r["retries"] == 0 and r["attempts"] == 1 for r in recs)  # never retried
    ev = rows(db, "SELECT detail_json FROM events WHERE kind='error_budget_exceeded'")
    assert len(ev) == 1 and json.loads(ev[0]["detail_json"])["failed"] == 25
    camp = rows(db, "SELECT status FROM campaign")[0]
    assert camp["status"] == "interrupted"
    b = rows(db, "SELECT detail_json FROM bursts")[0]
    assert json.loads(b["detail_json"])["throttled"] == 25


def test_staggered_burst_stops_sending_when_the_budget_is_spent_with_fake_lambda_endpoint(tmp_path):
    fake = FakeLambda(delay_s=0.01, fail_every=1)  # every invocation fails
    fake.start()
    try:
        spec = write(tmp_path, spec_text(fake.url, burst=40, reps=1, extra_load=(
            "  stagger: {batch_size: 10, delay: 200ms}\n"
            "  error_budget: {max_failed_fraction: 0.2}")))
        db = tmp_path / "r.db"
        with pytest.raises(Failure, match="error budget"):
            run(spec, db, fake.url)
    finally:
        fake.stop()
    b = rows(db, "SELECT status, sent, planned FROM bursts")[0]
    assert b["status"] == "stopped" and b["planned"] == 40 and b["sent"] < 40
    assert len(rows(db, "SELECT id FROM invocations")) == b["sent"]


def test_kill_mid_burst_then_resume_gives_exactly_the_planned_records_with_fake_lambda_endpoint(tmp_path):
    fake = FakeLambda(delay_s=0.02)
    fake.start()
    try:
        spec = write(tmp_path, spec_text(fake.url, burst=30, reps=4, extra_load=(
            "  stagger: {batch_size: 5, delay: 150ms}")))
        db = tmp_path / "r.db"
        env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{HERE}")
        proc = subprocess.Popen([sys.executable, str(HERE / "burst_fakes.py"), str(spec), str(db),
                                 fake.url], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 30
        n = 0
        while time.time() < deadline:
            try:
                n = len(rows(db, "SELECT id FROM invocations"))
            except sqlite3.Error:
                n = 0
            if n >= 40:  # inside the second burst
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert 0 < n < 120
        killed_with = len(rows(db, "SELECT id FROM invocations"))
        s = run(spec, db, fake.url, resume=True)
        assert s.complete and s.recorded == 120
        slots = rows(db, "SELECT cell_key, replication, kind, count(*) AS n FROM invocations "
                         "GROUP BY 1, 2, 3 HAVING n > 1")
        assert slots == []  # nothing duplicated
        assert sorted(r["replication"] for r in rows(db, "SELECT replication FROM invocations")) == \
            list(range(120))
        members = rows(db, "SELECT count(*) AS n FROM burst_members")[0]["n"]
        assert members == 120
        # the burst the kill cut is closed, not left "running"
        assert rows(db, "SELECT count(*) AS n FROM bursts WHERE status = 'running'")[0]["n"] == 0
        if killed_with % 30:  # a burst cut short was finished as a second attempt, flagged split
            att = rows(db, "SELECT burst, attempt, schedule_json FROM bursts WHERE attempt > 1")
            assert att and all(json.loads(a["schedule_json"])["split"] for a in att)
            assert len(burst_stats(load_bursts(db))) < 4  # split bursts left out by default
    finally:
        fake.stop()


def test_stagger_grid_shows_the_wait_vs_io_trade_off_with_fake_lambda_endpoint(tmp_path):
    # a contended shared resource: each write is slower the more writers are in flight
    fake = FakeLambda(delay_s=0.002, contended_io=0.004)
    fake.start()
    try:
        spec = write(tmp_path, spec_text(
            fake.url, burst=40, reps=2, workload="{kind: fileio, op: write, file_size: 4KiB, io_size: 4KiB}",
            factors="  batch_size: [10, 40]\n  delay: [0s, 200ms]",
            rules='["delay > 0 or batch_size == burst_size"]'))
        db = tmp_path / "r.db"
        run(spec, db, fake.url)
    finally:
        fake.stop()
    imp = stagger_improvements(load_bursts(db))
    row = lambda m, s: imp[(imp.batch_size == 10) & (imp.metric == m) & (imp.stat == s)].iloc[0]  # noqa: E731
    assert row("write_s", "p50")["improvement_pct"] > 30        # less contention, faster writes
    assert row("start_s", "p50")["improvement_pct"] < 0         # but later starts after the burst
    assert row("write_s", "p50")["n_bursts"] == 2


def test_burst_spec_refusals(tmp_path):
    spec = write(tmp_path, spec_text(extra_load="  start: expire"))
    with pytest.raises(BadInput, match="keep_alive_s"):
        run(spec, tmp_path / "r.db", "http://127.0.0.1:9")


def test_bursts_reach_agents_in_http_mode_through_the_http_provider(tmp_path):
    """The http provider's agent URLs (Cloud Run style, no signing): a real agent binary in HTTP
    mode, which serves one invocation at a time, so a burst queues on it."""
    import importlib.util

    spec_ = importlib.util.spec_from_file_location("_providers_conftest",
                                                   HERE.parent / "providers" / "conftest.py")
    helpers = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(helpers)
    _binaries_ok, free_port, start_agent = helpers._binaries_ok, helpers.free_port, helpers.start_agent

    if not _binaries_ok():
        pytest.skip("the Go binaries are not built (pip install -e .)")
    ports = [free_port(), free_port()]
    procs = [start_agent(p) for p in ports]
    try:
        spec = write(tmp_path, f"""
name: burst-http
provider: {{kind: http, settings: {{endpoints: ["http://127.0.0.1:{ports[0]}/", "http://127.0.0.1:{ports[1]}/"]}}}}
workload: {{kind: spin, iterations: 2000000}}
load: {{burst_size: 10}}
design: {{replications: 1, seed: 1}}
""")
        db = tmp_path / "r.db"
        s = run_campaign(spec, db, progress=False)
    finally:
        for p in procs:
            p.kill()
            p.wait(5)
    assert s.complete and s.statuses == {"ok": 10}
    inv = rows(db, "SELECT * FROM burst_invocations")
    assert len({r["instance_id"] for r in inv}) == 2  # round robin over the two agents
    # the agent takes received_ns before its one-at-a-time lock, so the queue is in run_s
    queued = sorted((r["agent_workload_start_ns"] - r["agent_received_ns"]) / 1e9 for r in inv)
    assert queued[-1] > 2 * queued[0] and queued[-1] > 0.005
    assert all(r["run_s"] > 0 and r["wait_s"] > 0 for r in inv)


def test_an_unreachable_endpoint_stops_before_the_burst_with_fake_lambda_endpoint(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    spec = write(tmp_path, spec_text(dead, burst=10, reps=1))
    db = tmp_path / "r.db"
    with pytest.raises(Failure, match="unreachable"):
        run(spec, db, dead)
    assert rows(db, "SELECT count(*) AS n FROM invocations")[0]["n"] == 0
    assert rows(db, "SELECT count(*) AS n FROM events WHERE kind='endpoint_unreachable'")[0]["n"] == 1


def test_report_has_the_burst_section_and_heatmaps_with_fake_lambda_endpoint(tmp_path):
    from click.testing import CliRunner

    from faascope.cli import cli

    fake = FakeLambda(delay_s=0.002, contended_io=0.003)
    fake.start()
    try:
        spec = write(tmp_path, spec_text(
            fake.url, burst=12, reps=2, workload="{kind: fileio, op: write, file_size: 4KiB, io_size: 4KiB}",
            factors="  batch_size: [4, 12]\n  delay: [0s, 100ms]",
            rules='["delay > 0 or batch_size == burst_size", "batch_size < burst_size or delay == 0"]'))
        db = tmp_path / "r.db"
        run(spec, db, fake.url)
    finally:
        fake.stop()
    out = tmp_path / "rep"
    r = CliRunner().invoke(cli, ["report", str(db), "--out", str(out), "--formats", "png"])
    assert r.exit_code == 0, r.output
    md = (out / "summary.md").read_text()
    assert "Bursts, co-residency and staggering" in md and "Staggering vs all at once" in md
    assert (out / "figures" / "stagger_improvement_heatmaps.png").stat().st_size > 10_000
    assert "stagger_improvement_heatmaps" in (out / "report.html").read_text()
    # two bursts a side: below the rule, every comparison says so instead of a CI of "–" beside
    # "CI excludes 0: no" (issue #25, item 7)
    from faascope.analysis.improvement import MIN_BURSTS_PER_SIDE

    few = f"too few (n = 2 bursts; needs ≥ {MIN_BURSTS_PER_SIDE})"
    table = md[md.index("Staggering vs all at once"):]
    table = table[:table.index("\n\n", table.index("|"))]
    rows = [r for r in table.splitlines() if r.startswith("|") and "batch size" not in r and "---" not in r]
    assert rows and all(f"| {few} | too few |" in r for r in rows), table
    assert "| no |" not in table and "| yes |" not in table
