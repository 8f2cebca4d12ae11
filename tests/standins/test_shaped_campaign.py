"""A local campaign on the REAL platform with stand-ins shaped like the cloud (issue #16's
"done when"): object-storage write time stays flat from 1 to 16 concurrent functions on the
lambda profile, as S3's does on Lambda (the object store is not one shared local disk, and its
latency is the calibrated one), while an unlimited-profile function in the same campaign talks
to the unshaped server."""
from __future__ import annotations

import json
import os
import sqlite3
import statistics

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from faascope import calibration
from faascope.cli import cli
from faascope.standins import shaping
from go_binaries import skip_unless_built

pytestmark = [pytest.mark.slow, skip_unless_built(),
              pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root (cgroups, namespaces)")]

#: sequential 1 KiB PUTs per invocation: the write time is their sum, whose coefficient of
#: variation is CV(one draw)/sqrt(COUNT) = 0.52/sqrt(30) ≈ 0.095 for S3's write lognormal; the
#: shaper's draws alone then keep the ratio of the two medians well inside ±25 %
#: (test_the_count_keeps_chance_inside_the_band: 0.999 of it inside [0.84, 1.19]), and each
#: invocation (warm-up and measured) lasts ~1.1 s, not the 2.2 s of 60 PUTs
COUNT = 30
#: bursts per cell (the design's replications): 4 of one function, 4 of 16
REPLICATIONS = 4


def test_the_count_keeps_chance_inside_the_band():
    # the flatness band (±25 %) against what the shaper's lognormal alone does to the ratio of
    # the medians (16 functions' 4 x 16 sums over one function's 4), when both sides are the
    # same distribution: by simulation, 4,000 campaigns
    table = calibration.load_table(shaping.TABLE)
    median, p99 = table.value("s3_standard_write_median"), table.value("s3_standard_write_p99")
    sigma = np.log(p99 / median) / stats.norm.ppf(0.99)
    rng = np.random.default_rng(16)
    sums = lambda n: rng.lognormal(0, sigma, (4000, n, COUNT)).sum(axis=-1)  # noqa: E731
    ratio = np.median(sums(16 * REPLICATIONS), axis=1) / np.median(sums(REPLICATIONS), axis=1)
    lo, hi = np.quantile(ratio, [0.0005, 0.9995])
    print(f"ratio by chance, 0.999 of it: [{lo:.3f}, {hi:.3f}]")
    assert 0.75 < lo and hi < 1.25, (lo, hi)


def test_object_write_time_is_flat_from_1_to_16_functions_and_unlimited_is_unshaped(tmp_path, platform_dir):
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: shaped-flat
provider:
  kind: local
  settings: {{data_dir: "{platform_dir}"}}
function: {{memory_mb: 256}}
workload: {{kind: object, op: put, object_size: 1024, count: {COUNT}}}
load: {{warm_pool: burst, member_index: index, pause: 0s}}
factors:
  burst_size: [1, 16]
  profile: [lambda, unlimited]
design: {{replications: {REPLICATIONS}, warmup: 0, seed: 16}}
""")
    db = tmp_path / "r.db"
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(db), "--no-progress"])
    assert r.exit_code == 0, r.output
    with sqlite3.connect(db) as c:
        rows = [(json.loads(lv), json.loads(resp)) for lv, resp in c.execute(
            "SELECT levels_json, response_json FROM invocations WHERE kind = 'measure'")]
        (ev,) = [json.loads(d) for k, d in c.execute("SELECT kind, detail_json FROM events") if k == "standins"]
    assert rows and all(resp["ok"] for _, resp in rows), rows[:3]
    write_s: dict[tuple[str, int], list[float]] = {}
    for levels, resp in rows:
        w = resp["workload"]
        assert w["requests"]["ok"] == COUNT and w["requests"]["throttles"] == 0
        write_s.setdefault((levels["profile"], int(levels["burst_size"])), []).append(w["elapsed_s"])
    assert len(write_s[("lambda", 16)]) == 16 * REPLICATIONS and len(write_s[("lambda", 1)]) == REPLICATIONS
    med = {k: statistics.median(v) for k, v in write_s.items()}
    # the shaping in force is recorded, per profile
    assert ev["shaping"]["unlimited"] is None
    lam = ev["shaping"]["lambda"]
    assert lam["table"] == f"{shaping.TABLE}@{max(calibration.available()[shaping.TABLE])}"
    assert lam["role"] == "published" and lam["s3_store"] != "disk"
    assert ev["expose_by_profile"]["lambda"] != ev["expose_by_profile"]["unlimited"]
    # each PUT took S3's latency (its median 36.99 ms; the mean of the lognormal is higher)
    table_ms = calibration.load_table(shaping.TABLE).value("s3_standard_write_median")
    assert med[("lambda", 1)] / COUNT > 0.8 * table_ms / 1000, med
    # unlimited functions talk to the server itself: far faster than the shaped ones
    assert med[("unlimited", 1)] < med[("lambda", 1)] / 2, med
    # The shaper absorbs the servers' time, not the clients': 16 functions' SDKs, relays and
    # the servers share this machine's cores. Unshaped, 16 functions asking back to back
    # saturate the host, so host_ms (their time per request) is 16 requests' worth of the
    # host; shaped, the same 16 ask once per S3 latency, i.e. for host_ms / latency of the
    # host. Near 1, queueing on the host's cores decides, not the stand-in: flatness cannot be
    # seen here, and the test says so with the figures instead of failing or passing.
    host_ms = med[("unlimited", 16)] / COUNT * 1000
    if host_ms > 0.75 * table_ms:
        pytest.skip(f"this machine is too busy to host 16 clients: an unshaped 1 KiB PUT took "
                    f"{host_ms:.1f} ms with 16 functions (load average {os.getloadavg()[0]:.0f}); "
                    f"lambda write time 1 → 16: {med[('lambda', 1)]:.2f} s → {med[('lambda', 16)]:.2f} s")
    # flat within ±25 % from 1 to 16 concurrent functions (done-when of issue #16)
    ratio = med[("lambda", 16)] / med[("lambda", 1)]
    assert 0.75 <= ratio <= 1.25, (ratio, med)
