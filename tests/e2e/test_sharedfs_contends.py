"""The shared file system on the calibrated `lambda` profile behaves as EFS does under concurrency
(Roy et al., "I/O scalability of serverless applications", IISWC 2021), in real campaigns on the
real local platform: its throughput is one budget for every sandbox (docs/platform.md,
"Calibrated profiles"), so write time grows with the number of concurrent writers (at least ×4
from 1 to 16; issue #16), and staggering the writers into batches improves their service time.
The object-storage half of the contrast (flat from 1 to 16) is
tests/standins/test_shaped_campaign.py."""
from __future__ import annotations

import os
import sqlite3
import statistics

import pytest
from click.testing import CliRunner

from faascope import standins
from faascope.cli import cli
from faascope.providers import local_platform
from go_binaries import skip_unless_built

pytestmark = [pytest.mark.slow, skip_unless_built(),
              pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root (cgroups, namespaces)")]

WORKLOAD = "{kind: sharedfs, op: write, mode: private, file_size: 4MiB, io_size: 1MiB, fsync: end}"


def _run(tmp_path, data, name: str, load: str, factors: str, rules: str = "") -> list[dict]:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(f"""
name: {name}
provider:
  kind: local
  settings: {{data_dir: "{data}"}}
function: {{memory_mb: 512, profile: lambda, timeout_s: 60}}
workload: {WORKLOAD}
load: {load}
factors: {factors}
design: {{replications: 2, seed: 11{rules}}}
""")
    db = tmp_path / f"{name}.db"
    r = CliRunner().invoke(cli, ["run", str(spec), "--results", str(db), "--no-progress"])
    assert r.exit_code == 0, r.output
    with sqlite3.connect(db) as c:
        c.row_factory = sqlite3.Row
        rows = [dict(x) for x in c.execute("SELECT * FROM burst_invocations WHERE warmup = 0")]
    assert rows and all(x["ok"] for x in rows), rows[:3]
    return rows


def test_shared_file_system_writes_contend_and_staggering_helps(tmp_path):
    data = tmp_path / "platform"
    local_platform.start(profile="lambda", data_dir=data, port=0, keep_alive="60s")
    try:
        # 1. one budget: 16 concurrent writers of 4 MiB each take far longer than one
        rows = _run(tmp_path, data, "fs-contention",
                    "{warm_pool: burst, member_index: index, pause: 1s}", "{burst_size: [1, 16]}")
        write = {n: statistics.median(x["write_s"] for x in rows if int(x["burst_size"]) == n)
                 for n in (1, 16)}
        assert write[16] >= 4 * write[1], write

        # 2. staggering: 16 writers in batches of 4, 150 ms apart (about what a batch of four 4 MiB
        #    writes takes at the budget), against all at once
        rows = _run(tmp_path, data, "fs-stagger",
                   "{burst_size: 16, warm_pool: burst, member_index: index, pause: 1s}",
                   "{batch_size: [4, 16], delay: [0s, 150ms]}",
                   ', rules: ["delay > 0 or batch_size == burst_size", '
                   '"batch_size < burst_size or delay == 0"]')
        cells: dict[int, list[tuple[float, float]]] = {}
        for x in rows:
            cells.setdefault(int(x["batch_size"]), []).append((x["write_s"], x["service_s"]))
        assert set(cells) == {4, 16} and all(len(v) == 32 for v in cells.values()), {k: len(v) for k, v in cells.items()}
        med = {b: (statistics.median(w for w, _ in v), statistics.median(s for _, s in v))
               for b, v in cells.items()}
        # each batch shares the budget four ways instead of sixteen: writes at least twice as fast
        assert med[4][0] <= med[16][0] / 2, med
        # and the service time (wait + run) improves although members wait for their batch
        assert med[4][1] < med[16][1], med
    finally:
        standins.stop_saved(data)
        local_platform.stop(data)
