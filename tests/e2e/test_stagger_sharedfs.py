"""`faascope stagger suggest` on a shared-file-system workload, on the REAL local platform: the
shared directory (EFS's stand-in) is set up by faascope itself, each member writes its own file
in it, and the search answers with the trial bursts it ran recorded in its results file."""
from __future__ import annotations

import json
import os
import sqlite3

import pytest
from click.testing import CliRunner

from faascope import standins
from faascope.cli import cli
from faascope.providers import local_platform
from go_binaries import skip_unless_built

pytestmark = [pytest.mark.slow, skip_unless_built(),
              pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root (cgroups, namespaces)")]


def test_suggest_staggers_writers_of_the_shared_file_system(tmp_path):
    data = tmp_path / "platform"
    local_platform.start(profile="lambda", data_dir=data, port=0, keep_alive="30s")
    try:
        spec = tmp_path / "fs.yaml"
        spec.write_text(f"""
name: suggest-sharedfs
provider:
  kind: local
  settings: {{data_dir: "{data}"}}
function: {{memory_mb: 256, timeout_s: 60}}
workload: {{kind: sharedfs, op: write, mode: private, file_size: 2MiB, io_size: 256KiB, fsync: end}}
load:
  burst_size: 4
  member_index: index
design: {{replications: 1, seed: 3}}
""")
        db = tmp_path / "suggest.db"
        r = CliRunner().invoke(cli, ["stagger", "suggest", str(spec), "--concurrency", "4",
                                     "--objective", "write_s:p50", "--batch-sizes", "1,2",
                                     "--delays", "50ms,100ms", "--budget", "12", "--results",
                                     str(db), "--format", "json", "--no-progress", "--seed", "1"])
        assert r.exit_code == 0, r.output
        out = json.loads(r.stdout)
        assert out["objective"] == ["write_s", "p50"] and out["concurrency"] == 4
        assert out["best"] is not None and out["trial_bursts"] <= 12
        assert out["baseline_bursts"] >= 2 and all(s > 0 for s in out["baseline_scores"])
        with sqlite3.connect(db) as c:
            kinds = {k for (k,) in c.execute(
                "SELECT DISTINCT json_extract(response_json, '$.workload.kind') FROM invocations")}
            roots = {k for (k,) in c.execute(
                "SELECT DISTINCT json_extract(response_json, '$.workload.root') FROM invocations")}
            n = c.execute("SELECT count(*) FROM invocations WHERE status = 'ok'").fetchone()[0]
        assert kinds == {"sharedfs"} and roots == {"/mnt/shared"}
        assert n == out["trial_invocations"] and n >= 4 * out["trial_bursts"]
    finally:
        standins.stop_saved(data)
        local_platform.stop(data)
