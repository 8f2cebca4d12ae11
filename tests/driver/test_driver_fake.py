"""The campaign runner against a FAKE in-process provider (tests/driver/driver_fakes.py): resume,
kill -9 at random points, Ctrl-C, refusals. The real local platform is in test_driver_local.py."""
from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from driver_fakes import InProcessFakeProvider
from faascope.cli import cli
from faascope.driver.runner import run_campaign
from faascope.errors import BadInput, Failure

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"

SPEC = """
name: fake-campaign
provider: {kind: local}
function: {memory_mb: 128}
workload: {kind: fileio, op: write, io_size: 512B}
factors:
  memory: [128, 256]
  file_size: [1KB, 4KiB, 16KiB]
  op: [read, write]
design:
  replications: {reps}
  warmup: {warmup}
  cold: {cold}
  seed: 11
  rules: ["not (op == 'read' and file_size > 10KB)"]
"""


def write_spec(tmp_path: Path, reps=5, warmup=1, cold="false", name="spec.yaml") -> Path:
    p = tmp_path / name
    p.write_text(SPEC.replace("{reps}", str(reps)).replace("{warmup}", str(warmup))
                 .replace("{cold}", cold))
    return p


def records(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT cell_key, replication, kind, order_index FROM invocations "
                         "ORDER BY order_index").fetchall()


def _count_so_far(db: Path) -> int:
    """Records written so far by a runner in another process; 0 while it has not yet created
    the file or its schema."""
    try:
        return len(records(db)) if db.exists() else 0
    except sqlite3.OperationalError:
        return 0


def planned(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT cell_key, replication, kind, order_index FROM planned_runs "
                         "ORDER BY order_index").fetchall()


def test_complete_run_with_in_process_fake_provider(tmp_path):
    spec = write_spec(tmp_path, reps=3, warmup=1, cold="true")
    fake = InProcessFakeProvider()
    s = run_campaign(spec, tmp_path / "r.db", provider_factory=lambda _: fake, progress=False)
    # 2 memories x (3 file sizes write + 2 read) = 10 cells; 3 reps + 1 warm-up each
    assert s.complete and s.planned == 40 and s.recorded == 40 and s.ran_now == 40
    assert records(tmp_path / "r.db") == planned(tmp_path / "r.db")
    # one function per memory configuration, deployed once, deleted at the end
    assert sum(1 for c, _ in fake.calls if c == "deploy") == 2
    assert sum(1 for c, _ in fake.calls if c == "teardown") == 2
    # cold: true -> one forced cold start per cell (before its warm-up)
    assert sum(1 for c, _ in fake.calls if c == "force_cold") == 10
    with sqlite3.connect(tmp_path / "r.db") as c:
        c.row_factory = sqlite3.Row
        rows = c.execute("SELECT * FROM invocations_flat").fetchall()
        assert len(rows) == 40
        warm = [r for r in rows if r["warmup"]]
        assert len(warm) == 10 and all(r["cold_forced"] == 1 for r in warm)
        assert all(r["cold"] == 1 for r in warm)  # the fake's instance was retired
        measured = [r for r in rows if not r["warmup"]]
        assert all(r["cold"] == 0 for r in measured)
        assert {r["memory"] for r in rows} == {128, 256}
        assert {r["file_size"] for r in rows} == {1000, 4096, 16384}
        assert all(r["latency_seconds"] > 0 and r["client_latency_seconds"] > 0 for r in rows)
        camp = c.execute("SELECT * FROM campaign").fetchone()
        assert camp["status"] == "complete" and camp["seed"] == 11
        assert json.loads(camp["plan_json"])["invocations"] == 40
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_warmups_run_just_before_the_cells_first_measurement(tmp_path):
    spec = write_spec(tmp_path, reps=4, warmup=2)
    run_campaign(spec, tmp_path / "r.db", provider_factory=lambda _: InProcessFakeProvider(),
                 progress=False)
    rows = records(tmp_path / "r.db")
    first_measure: dict[str, int] = {}
    for key, rep, kind, order in rows:
        if kind == "measure":
            first_measure.setdefault(key, order)
    for key, rep, kind, order in rows:
        if kind == "warmup":
            assert order < first_measure[key]
            assert first_measure[key] - order <= 2


def test_function_errors_are_recorded_not_retried_with_in_process_fake_provider(tmp_path):
    spec = write_spec(tmp_path, reps=3, warmup=0)
    fake = InProcessFakeProvider(fail_every=4)
    s = run_campaign(spec, tmp_path / "r.db", provider_factory=lambda _: fake, progress=False)
    assert s.recorded == 30 and fake.invocations == 30
    assert s.statuses == {"ok": 23, "function_error": 7}
    with sqlite3.connect(tmp_path / "r.db") as c:
        errs = c.execute("SELECT error_type, ok, latency_seconds FROM invocations_flat "
                         "WHERE status='function_error'").fetchall()
    assert errs and all(e == ("Runtime.ExitError", 0, None) for e in errs)


def test_resume_with_in_process_fake_provider(tmp_path):
    spec = write_spec(tmp_path, reps=3)
    db = tmp_path / "r.db"
    calls = {"n": 0}

    class StopAfter(InProcessFakeProvider):
        def invoke(self, name, payload):
            calls["n"] += 1
            if calls["n"] == 7:
                raise KeyboardInterrupt  # a second Ctrl-C: abandon the invocation in flight
            return super().invoke(name, payload)

    with pytest.raises(Failure, match="--resume"):
        run_campaign(spec, db, provider_factory=lambda _: StopAfter(), progress=False)
    assert len(records(db)) == 6
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT status FROM campaign").fetchone()[0] == "interrupted"
    s = run_campaign(spec, db, resume=True, provider_factory=lambda _: InProcessFakeProvider(),
                     progress=False)
    assert s.complete and s.ran_now == 34 and s.recorded == 40
    assert records(db) == planned(db)
    # resuming a complete campaign runs nothing
    s = run_campaign(spec, db, resume=True, provider_factory=lambda _: InProcessFakeProvider(),
                     progress=False)
    assert s.ran_now == 0 and s.recorded == 40


def has_campaign(db: Path) -> bool:
    if not db.exists():
        return False
    with sqlite3.connect(db) as c:
        try:
            return c.execute("SELECT count(*) FROM campaign").fetchone()[0] > 0
        except sqlite3.OperationalError:
            return False


def _run_fake(spec: Path, db: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{HERE}")
    return subprocess.Popen([sys.executable, str(HERE / "driver_fakes.py"), str(spec), str(db),
                             *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def count_records(db: Path) -> int:
    if not has_campaign(db):
        return 0
    with sqlite3.connect(db) as c:
        return c.execute("SELECT count(*) FROM invocations").fetchone()[0]


def test_sigkill_at_random_points_then_resume_with_in_process_fake_provider(tmp_path):
    """SIGKILL the runner (a subprocess) at random moments -- while it starts, and after a random
    number of further records plus a random few ms, i.e. mid-invocation or mid-commit -- resume
    each time; in the end exactly the planned records, no duplicates, the order kept, the
    database intact."""
    spec = write_spec(tmp_path, reps=20, warmup=1)  # 10 cells x 21 = 210 invocations
    db = tmp_path / "r.db"
    rng = random.Random(20240410)
    counts = []
    for kill in range(7):
        extra = ["--resume"] if has_campaign(db) else []
        proc = _run_fake(spec, db, *extra, "--delay-ms", "5")
        if kill == 0:
            time.sleep(rng.uniform(0.05, 0.4))  # during start-up
        else:
            target = count_records(db) + rng.randint(1, 30)
            deadline = time.time() + 30
            while count_records(db) < target and proc.poll() is None and time.time() < deadline:
                time.sleep(0.003)
            time.sleep(rng.uniform(0, 0.012))
        assert proc.poll() is None, "the campaign finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        counts.append(count_records(db))
    proc = _run_fake(spec, db, "--resume", "--delay-ms", "5")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert json.loads(out.decode().strip().splitlines()[-1])["recorded"] == 210
    assert counts[-1] > counts[1] > 0, counts
    rows = records(db)
    assert len(rows) == 210 and len(set((k, r, t) for k, r, t, _ in rows)) == 210
    assert rows == planned(db)
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert c.execute("SELECT status FROM campaign").fetchone()[0] == "complete"
        assert c.execute("SELECT count(*) FROM events WHERE kind='resumed'").fetchone()[0] >= 6
    print(f"7 SIGKILLs; records after each: {counts}; final 210/210")


def test_sigint_stops_cleanly_after_the_invocation_in_flight_with_in_process_fake_provider(tmp_path):
    spec = write_spec(tmp_path, reps=30, warmup=0)
    db = tmp_path / "r.db"
    proc = _run_fake(spec, db, "--delay-ms", "20")
    deadline = time.time() + 20
    while time.time() < deadline and _count_so_far(db) < 5:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 1
    assert b"--resume" in err and b"interrupted" in err
    n = len(records(db))
    assert 5 <= n < 300
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT status FROM campaign").fetchone()[0] == "interrupted"
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_existing_campaign_without_resume_is_refused_with_exit_2(tmp_path):
    spec = write_spec(tmp_path, reps=1)
    db = tmp_path / "r.db"
    run_campaign(spec, db, provider_factory=lambda _: InProcessFakeProvider(), progress=False)
    before = db.stat().st_size, len(records(db))
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(db)])
    assert r.exit_code == 2
    assert "--resume" in r.output and "--results" in r.output
    assert len(records(db)) == before[1]


def test_resume_refuses_a_changed_spec_unless_forced(tmp_path):
    spec = write_spec(tmp_path, reps=2)
    db = tmp_path / "r.db"
    with pytest.raises(Failure):
        class Boom(InProcessFakeProvider):
            def invoke(self, name, payload):
                raise KeyboardInterrupt
        run_campaign(spec, db, provider_factory=lambda _: Boom(), progress=False)
    spec.write_text(spec.read_text().replace("memory: [128, 256]", "memory: [128, 512]"))
    with pytest.raises(BadInput, match="spec changed") as e:
        run_campaign(spec, db, resume=True, provider_factory=lambda _: InProcessFakeProvider(),
                     progress=False)
    assert e.value.exit_code == 2
    # fewer replications on resume are refused too (more are a top-up:
    # test_adaptive_replication.py)
    spec.write_text(spec.read_text().replace("memory: [128, 512]", "memory: [128, 256]"))
    with pytest.raises(BadInput, match="replication"):
        run_campaign(spec, db, resume=True, replications=1,
                     provider_factory=lambda _: InProcessFakeProvider(), progress=False)
    s = run_campaign(spec, db, resume=True, provider_factory=lambda _: InProcessFakeProvider(),
                     progress=False)
    assert s.complete and s.recorded == 30  # 10 cells x (2 replications + 1 warm-up)
    # --force continues with the changed spec, keeping the records
    spec2 = write_spec(tmp_path, reps=2, name="spec2.yaml")
    spec2.write_text(spec2.read_text().replace("memory: [128, 256]", "memory: [128, 512]"))
    s = run_campaign(spec2, db, resume=True, force=True,
                     provider_factory=lambda _: InProcessFakeProvider(), progress=False)
    assert s.complete and s.ran_now == 15 and s.recorded == 45  # the 256 MB records stay


def test_resume_without_a_campaign_is_bad_input(tmp_path):
    spec = write_spec(tmp_path)
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(tmp_path / "none.db"),
                                 "--resume"])
    assert r.exit_code == 2 and "--resume" in r.output
    assert not (tmp_path / "none.db").exists()


def test_invalid_spec_writes_nothing(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPEC.replace("{reps}", "2").replace("{warmup}", "0").replace("{cold}", "sometimes"))
    r = CliRunner().invoke(cli, ["run", str(bad), "--results", str(tmp_path / "x.db")])
    assert r.exit_code == 2 and "design.cold" in r.output
    assert list(tmp_path.iterdir()) == [bad]


def test_blocking_waits_between_blocks_with_in_process_fake_provider(tmp_path):
    spec = tmp_path / "b.yaml"
    spec.write_text("""
name: blocks
provider: {kind: local}
workload: {kind: noop}
factors: {memory: [128, 256]}
design: {replications: 4, blocking: {blocks: 2, interval: 1.5s}, seed: 3}
""")
    t0 = time.time()
    s = run_campaign(spec, tmp_path / "r.db", provider_factory=lambda _: InProcessFakeProvider(),
                     progress=False)
    assert s.recorded == 8 and time.time() - t0 >= 1.4
    with sqlite3.connect(tmp_path / "r.db") as c:
        rows = c.execute("SELECT block, replication, started_at FROM invocations_flat").fetchall()
    assert {(b, r % 2) for b, r, _ in rows} == {(0, 0), (1, 1)}
    first_b1 = min(t for b, _, t in rows if b == 1)
    last_b0 = max(t for b, _, t in rows if b == 0)
    assert first_b1 > last_b0


def test_shared_function_changes_memory_in_place_with_in_process_fake_provider(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("""
name: shared
provider: {kind: local, settings: {functions: shared}}
workload: {kind: noop}
factors: {memory: [128, 256, 512]}
design: {replications: 4, seed: 2}
""")
    fake = InProcessFakeProvider()
    s = run_campaign(spec, tmp_path / "r.db", provider_factory=lambda _: fake, progress=False)
    assert s.recorded == 12
    assert sum(1 for c, _ in fake.calls if c == "deploy") == 1
    updates = sum(1 for c, _ in fake.calls if c == "update")
    with sqlite3.connect(tmp_path / "r.db") as c:
        mems = [m for (m,) in c.execute("SELECT memory FROM invocations_flat ORDER BY order_index")]
    assert updates == sum(1 for a, b in zip(mems, mems[1:]) if a != b)


def test_sigterm_during_teardown_finishes_it_with_in_process_fake_provider(tmp_path):
    """A signal while the campaign tears down (or deploys, or settles) asks it to stop; it used to
    meet the default handler there and kill the process halfway (exit -15)."""
    spec = write_spec(tmp_path, reps=2, warmup=0)
    db = tmp_path / "r.db"
    proc = _run_fake(spec, db, "--sigterm-in-teardown")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, (proc.returncode, err.decode()[-2000:])
    summary = json.loads(out.decode().strip().splitlines()[-1])
    assert summary["recorded"] == summary["planned"]
