"""Bursts on the REAL local platform (its own data directory, stopped afterwards): the async
client against the Go platform and real sandboxes. All slow; the 1000-invocation burst is one test.

Cold starts cost this platform ~0.15-0.25 s each of mostly serial work on 2 cores (unpacking the
~10 MB agent, namespaces, cgroup), so a burst that outruns its warm pool floods it with cold
starts; see docs/concurrency.md for the measurements.
"""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from faascope.analysis.concurrency import burst_stats, load_bursts
from faascope.driver.runner import run_campaign
from faascope.errors import Failure
from go_binaries import skip_unless_built

pytestmark = pytest.mark.slow


needs_platform = skip_unless_built()


def platform(tmp_path_factory, name: str, **kw):
    from faascope.providers import local_platform

    d = tmp_path_factory.mktemp(name)
    state = local_platform.start(data_dir=d, port=0, **kw)
    return d, state["endpoint"]


@pytest.fixture(scope="module")
def gcf_platform(tmp_path_factory):
    from faascope.providers import local_platform

    d, ep = platform(tmp_path_factory, "burst-platform", profile="gcf", keep_alive="5m",
                     network="host")
    yield ep
    local_platform.stop(d)


def rows(db: Path, sql: str) -> list[dict]:
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        return [dict(r) for r in c.execute(sql)]


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "spec.yaml"
    p.write_text(text)
    return p


@needs_platform
def test_burst_of_1000_noop_invocations_on_the_local_platform(tmp_path, gcf_platform):
    spec = write(tmp_path, f"""
name: burst-1000
provider: {{kind: local, settings: {{endpoint_url: "{gcf_platform}"}}}}
function: {{memory_mb: 128, profile: gcf}}
workload: {{kind: noop}}
load:
  burst_size: 1000
  warm_pool: 100
  error_budget: {{max_failed_fraction: 1.0}}
design: {{replications: 1, seed: 1}}
""")
    db = tmp_path / "r.db"
    t0 = time.monotonic()
    s = run_campaign(spec, db, progress=False)
    took = time.monotonic() - t0
    assert s.complete and s.recorded == 1100
    inv = rows(db, "SELECT * FROM burst_invocations WHERE warmup = 0")
    assert len(inv) == 1000 and sorted(r["member"] for r in inv) == list(range(1000))
    ok = [r for r in inv if r["ok"] == 1]
    assert len(ok) >= 900, {r["error_type"] for r in inv if r["ok"] != 1}
    for r in ok:  # the per-invocation breakdown, one level deeper than the client
        assert r["wait_s"] > 0 and r["run_s"] >= 0 and r["instance_id"]
        assert r["service_s"] == pytest.approx(r["wait_s"] + r["run_s"], abs=1e-6)
    b = rows(db, "SELECT * FROM bursts WHERE kind='measure'")[0]
    d = json.loads(b["detail_json"])
    assert b["sent"] == 1000 and b["send_spread_s"] is not None
    assert json.loads(b["schedule_json"])["dispatcher"] == "go"  # the default sender
    assert b["send_spread_s"] < 5.0  # the Go dispatcher: ~15-60 ms on 2 busy cores
    assert d["received_spread_s"] is not None and d["instances"] >= 100
    stats = burst_stats(load_bursts(db))
    assert len(stats) == 1 and stats["service_s_p99"].iloc[0] >= stats["service_s_p50"].iloc[0]
    print(f"\n1000-burst: send spread {b['send_spread_s'] * 1e3:.1f} ms, {d['cold']} cold, "
          f"{d['instances']} instances, wait p50 {d['wait_s']['p50']:.3f} s, "
          f"p99 {d['wait_s']['p99']:.3f} s, took {took:.0f} s")


@needs_platform
def test_the_platform_concurrency_limit_produces_recorded_throttles(tmp_path_factory, tmp_path):
    from faascope.providers import local_platform

    d, ep = platform(tmp_path_factory, "throttle-platform", profile="gcf", concurrency=4,
                     keep_alive="2m", network="host")
    try:
        spec = write(tmp_path, f"""
name: burst-throttle
provider: {{kind: local, settings: {{endpoint_url: "{ep}"}}}}
function: {{memory_mb: 128, profile: gcf}}
workload: {{kind: spin, iterations: 20000000}}
load:
  burst_size: 24
  error_budget: {{max_failed_fraction: 0.5}}
design: {{replications: 2, seed: 2}}
""")
        db = tmp_path / "r.db"
        with pytest.raises(Failure, match="error budget exceeded"):
            run_campaign(spec, db, progress=False)
    finally:
        local_platform.stop(d)
    recs = rows(db, "SELECT status, error_type, error_message, attempts, retries FROM invocations")
    assert len(recs) == 24  # the first burst in full; the budget stopped the second
    thr = [r for r in recs if r["error_type"] == "TooManyRequestsException"]
    assert len(thr) >= 24 - 4 - 2 and all(r["status"] == "client_error" for r in thr)
    assert all("429" in r["error_message"] for r in thr)
    assert all(r["attempts"] == 1 and r["retries"] == 0 for r in recs)
    assert rows(db, "SELECT count(*) AS n FROM events WHERE kind='error_budget_exceeded'")[0]["n"] == 1


@needs_platform
def test_staggered_burst_follows_its_schedule_on_the_local_platform(tmp_path, gcf_platform):
    n, b, d = 24, 6, 0.3
    spec = write(tmp_path, f"""
name: burst-stagger
provider: {{kind: local, settings: {{endpoint_url: "{gcf_platform}"}}}}
function: {{memory_mb: 128, profile: gcf}}
workload: {{kind: fileio, op: write, file_size: 256KiB, io_size: 64KiB}}
load:
  burst_size: {n}
  warm_pool: {b}
  stagger: {{batch_size: {b}, delay: {d}s}}
design: {{replications: 1, seed: 3}}
""")
    db = tmp_path / "r.db"
    run_campaign(spec, db, progress=False)
    inv = rows(db, "SELECT batch, client_send_ns FROM burst_invocations WHERE warmup = 0")
    first: dict[int, int] = {}
    for r in inv:
        first[r["batch"]] = min(first.get(r["batch"], r["client_send_ns"]), r["client_send_ns"])
    span = (first[max(first)] - first[0]) / 1e9
    assert span == pytest.approx((n / b - 1) * d, abs=0.05)
    data = load_bursts(db)
    assert data.measured["write_s"].notna().all()  # fileio writes report their I/O time


@needs_platform
def test_cold_and_warm_by_design_on_the_local_platform(tmp_path, gcf_platform):
    """start: warm (after a warm pool), cold (environment change), fresh (a new function per
    burst) and expire (wait out the faascope:keep-alive tag) as one factor."""
    spec = write(tmp_path, f"""
name: burst-starts
provider: {{kind: local, settings: {{endpoint_url: "{gcf_platform}", keep_alive_s: 1}}}}
function: {{memory_mb: 128, profile: gcf}}
workload: {{kind: noop}}
load: {{burst_size: 3, warm_pool: burst}}
factors:
  start: [warm, cold, fresh, expire]
design: {{replications: 2, seed: 9, randomize: false}}
""")
    db = tmp_path / "r.db"
    s = run_campaign(spec, db, progress=False)
    assert s.complete and s.recorded == 4 * 2 * 3 + 2 * 3  # warm pools only before warm bursts
    inv = rows(db, "SELECT start, cold, function_name, burst FROM burst_invocations WHERE warmup = 0")
    by = {}
    for r in inv:
        by.setdefault(r["start"], []).append(r)
    assert all(r["cold"] == 0 for r in by["warm"])
    for st in ("cold", "fresh", "expire"):
        assert all(r["cold"] == 1 for r in by[st]), st
    fresh_names = {r["function_name"] for r in by["fresh"]}
    assert len(fresh_names) == 2 and all(n.endswith(("-n0", "-n1")) for n in fresh_names)
