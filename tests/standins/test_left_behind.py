"""What a local `faascope run` leaves behind (issue #29), on the REAL local platform:

- the platform a run starts is stopped when the campaign ends (complete or Ctrl-C), kept only
  with --keep-platform, and the run says which platform served it (console and events); a
  platform the user started is never stopped;
- a run killed with SIGKILL leaves its stand-ins (and their tmpfs) and its platform running:
  `faascope cleanup --provider local` and the next run find them by the run's record and stop
  them."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.processes import pid_alive
from faascope.providers import leftovers, local_platform
from go_binaries import skip_unless_built

pytestmark = [pytest.mark.slow, skip_unless_built(),
              pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root (cgroups, namespaces)")]

SRC = str(Path(__file__).resolve().parents[2] / "src")


def noop_spec(tmp_path: Path, data_dir: Path, replications: int = 2) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: left-{tmp_path.name[:20]}
provider:
  kind: local
  settings: {{data_dir: "{data_dir}"}}
workload: {{kind: noop}}
factors: {{memory: [128, 256]}}
design: {{replications: {replications}, warmup: 0, seed: 4}}
""")
    return spec


def platform_events(db: Path) -> list[dict]:
    with sqlite3.connect(db) as c:
        return [json.loads(d) for (d,) in c.execute(
            "SELECT detail_json FROM events WHERE kind = 'platform' ORDER BY id")]


def test_the_platform_a_run_starts_stops_with_it_and_the_run_says_which(tmp_path):
    d = tmp_path / "data"
    db = tmp_path / "r.db"
    r = CliRunner().invoke(cli, ["run", str(noop_spec(tmp_path, d)), "--results", str(db), "--no-progress"])
    assert r.exit_code == 0, r.output
    start, end = platform_events(db)
    assert start["phase"] == "start" and start["how"] == "started" and start["owner"] == "this run"
    assert start["data_dir"] == str(d) and start["endpoint"].startswith("http://127.0.0.1:")
    assert f"platform: {start['endpoint']} (started by this run, data dir {d}" in r.stderr
    assert end == {"phase": "end", "endpoint": start["endpoint"], "data_dir": str(d),
                   "how": "started", "action": "stopped"}
    assert f"stopped the local platform {start['endpoint']}" in r.stderr
    assert local_platform.health(start["endpoint"]) is None and local_platform.running(d) is None
    assert not pid_alive(start["pid"])
    assert not list(leftovers.runs_dir(d).glob("*.json"))  # the run's record is gone with it


def test_keep_platform_leaves_it_running_and_says_how_to_stop_it(tmp_path):
    d = tmp_path / "data"
    db = tmp_path / "r.db"
    try:
        r = CliRunner().invoke(cli, ["run", str(noop_spec(tmp_path, d)), "--results", str(db),
                                     "--no-progress", "--keep-platform"])
        assert r.exit_code == 0, r.output
        start, end = platform_events(db)
        assert start["how"] == "started" and start["kept"] is True and end["action"] == "left"
        assert f"faascope platform stop --data-dir {d}" in r.stderr
        state = local_platform.running(d)
        assert state is not None and state["endpoint"] == start["endpoint"]
        # kept is the user's now: a later run uses it and leaves it running
        db2 = tmp_path / "r2.db"
        r = CliRunner().invoke(cli, ["run", str(noop_spec(tmp_path, d)), "--results", str(db2), "--no-progress"])
        assert r.exit_code == 0, r.output
        start2, end2 = platform_events(db2)
        assert start2["how"] == "running" and start2["owner"] == "user" and end2["action"] == "left"
        assert "already running" in r.stderr and local_platform.running(d) is not None
    finally:
        local_platform.stop(d)


def test_a_users_platform_is_never_stopped_by_a_run(tmp_path, platform_dir):
    db = tmp_path / "r.db"
    r = CliRunner().invoke(cli, ["run", str(noop_spec(tmp_path, platform_dir)), "--results", str(db),
                                 "--no-progress"])
    assert r.exit_code == 0, r.output
    start, end = platform_events(db)
    assert (start["how"], start["owner"], end["action"]) == ("running", "user", "left")
    assert local_platform.running(platform_dir) is not None


def test_ctrl_c_stops_the_platform_the_run_started(tmp_path):
    d = tmp_path / "data"
    db = tmp_path / "r.db"
    env = dict(os.environ, PYTHONPATH=SRC)
    p = subprocess.Popen([sys.executable, "-m", "faascope", "run", str(noop_spec(tmp_path, d, 400)),
                          "--results", str(db), "--no-progress"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None:
        try:
            with sqlite3.connect(db) as c:
                if c.execute("SELECT count(*) FROM invocations").fetchone()[0] >= 3:
                    break
        except sqlite3.OperationalError:
            pass
        time.sleep(0.05)
    state = local_platform.running(d)
    assert state is not None and p.poll() is None
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 1 and "interrupted" in err, err
    assert local_platform.running(d) is None and not pid_alive(state["pid"])
    assert platform_events(db)[-1]["action"] == "stopped"


# ---------------------------------------------------------------- a run killed with SIGKILL
OWNER = textwrap.dedent("""
    import json, sys, time
    from faascope.standins import wiring
    from faascope.standins.needs import Needs
    w = wiring.provide(Needs(kinds={"s3", "redis", "sink"}), data_dir=sys.argv[1], profiles=["lambda"])
    print(json.dumps({"pids": sorted(w.owned.processes()), "mounts": w.owned.mounts,
                      "dirs": w.owned.owned_dirs, "platform": w.platform}), flush=True)
    time.sleep(600)
""")


def start_then_sigkill(data_dir: Path) -> dict:
    """Stand-ins and a platform started as `faascope run` starts them, by a process then killed
    with SIGKILL: what it started, still running."""
    p = subprocess.Popen([sys.executable, "-c", OWNER, str(data_dir)], env=dict(os.environ, PYTHONPATH=SRC),
                         stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
    finally:
        p.kill()
        p.wait()
    owned = json.loads(line)
    # the situation of the issue: all of it outlives its owner
    assert len(owned["pids"]) >= 4 and all(pid_alive(x) for x in owned["pids"])  # s3, shaper, redis, sink
    assert owned["mounts"] and all(os.path.ismount(m) for m in owned["mounts"])  # the S3 tmpfs
    assert local_platform.health(owned["platform"]["endpoint"]) is not None
    return owned


def assert_all_gone(owned: dict, data_dir: Path) -> None:
    assert not [x for x in owned["pids"] if pid_alive(x)]
    assert not [m for m in owned["mounts"] if os.path.ismount(m)]
    assert not [x for x in owned["dirs"] if os.path.exists(x)]
    assert local_platform.health(owned["platform"]["endpoint"]) is None
    assert not list(leftovers.runs_dir(data_dir).glob("*.json"))


def test_cleanup_stops_what_a_sigkilled_run_left_running(tmp_path):
    d = tmp_path / "data"
    owned = start_then_sigkill(d)
    try:
        r = CliRunner().invoke(cli, ["cleanup", "--provider", "local", "--data-dir", str(d), "--dry-run"])
        assert r.exit_code == 0 and "would-stop" in r.output, r.output
        assert all(pid_alive(x) for x in owned["pids"])  # a dry run stops nothing
        r = CliRunner().invoke(cli, ["cleanup", "--provider", "local", "--data-dir", str(d)])
        assert r.exit_code == 0, r.output
        assert "local-run-leftovers" in r.output and "redis-server" in r.output
        assert_all_gone(owned, d)
    finally:
        leftovers.reap(d)


def test_the_next_run_stops_what_a_sigkilled_run_left_running(tmp_path):
    d = tmp_path / "data"
    owned = start_then_sigkill(d)
    try:
        db = tmp_path / "r.db"
        r = CliRunner().invoke(cli, ["run", str(noop_spec(tmp_path, d)), "--results", str(db), "--no-progress"])
        assert r.exit_code == 0, r.output
        assert "stopped what an earlier run" in r.stderr
        start = platform_events(db)[0]
        assert start["left_behind_by_dead_runs"][0]["platform"]["action"] == "stopped"
        assert_all_gone(owned, d)
    finally:
        leftovers.reap(d)


def test_a_platform_two_runs_use_stops_with_the_last_of_them(tmp_path):
    """Run A starts the platform, run B (another process) uses it too: A's end leaves it
    running for B; once B is gone, its record is a leftover and the reap stops the platform."""
    from faascope.processes import process_identity

    d = tmp_path / "data"
    state = local_platform.start(profile="lambda", data_dir=d, port=0, by_run=True)
    b = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        a_rec = leftovers.RunRecord.create(d)
        a_rec.use_platform(d, state["endpoint"], state["pid"], "started")
        b_rec = leftovers.RunRecord.create(d)
        b_rec.doc["owner"] = {"pid": b.pid, "identity": process_identity(b.pid)}
        b_rec.use_platform(d, state["endpoint"], state["pid"], "running")
        assert a_rec.release() == {"action": "in use", "by": [b.pid], "endpoint": state["endpoint"],
                                   "data_dir": str(d)}
        assert local_platform.running(d) is not None
        assert leftovers.reap(d) == []            # B still runs: nothing of it is touched
        b.kill()
        b.wait()
        (gone,) = leftovers.reap(d)
        assert gone["run_pid"] == b.pid and gone["platform"]["action"] == "stopped"
        assert local_platform.running(d) is None and not pid_alive(state["pid"])
    finally:
        b.kill()
        local_platform.stop(d)


def test_a_recorded_pid_that_is_another_process_now_is_never_signalled(tmp_path):
    """A dead run's record names pid P; P now belongs to an unrelated process (its start time
    differs from the one recorded): the reap leaves it alone, and stops a process that matches."""
    from faascope.processes import process_identity

    d = tmp_path / "data"
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    ours = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    try:
        rec = leftovers.RunRecord.create(d)
        rec.doc["owner"] = {"pid": gone.pid, "identity": "a boot:1"}  # its run is gone
        rec.doc["processes"] = [
            {"pid": other.pid, "what": "redis-server", "identity": process_identity(other.pid) + "0"},
            {"pid": ours.pid, "what": "sink", "identity": process_identity(ours.pid)}]
        rec.write()
        (r,) = leftovers.reap(d)
        assert r["stopped"] == [f"sink (pid {ours.pid})"]
        assert ours.wait(10) is not None and other.poll() is None
    finally:
        other.kill()
        ours.kill()
