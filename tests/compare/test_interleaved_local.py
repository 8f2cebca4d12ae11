"""examples/ab-interleaved-local.yaml end to end on the REAL local platform, shrunk to 3 blocks
(its design otherwise as shipped): every block holds both deployments, and `faascope compare
RESULTS.db --by deployment` tests block by block and names what the deployments set."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from faascope.cli import cli
from go_binaries import skip_unless_built

pytestmark = [pytest.mark.slow, skip_unless_built()]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ab-interleaved-local.yaml"


def test_the_interleaved_example_runs_and_compares_block_by_block(tmp_path, platform_dir):
    spec = yaml.safe_load(EXAMPLE.read_text())
    spec["provider"]["settings"] = {"data_dir": str(platform_dir)}
    spec["design"].update(replications=6, blocking={"blocks": 3, "interval": 0.5})
    path = tmp_path / "ab.yaml"
    path.write_text(yaml.safe_dump(spec))
    db = tmp_path / "ab.db"
    r = CliRunner().invoke(cli, ["run", str(path), "--results", str(db), "--no-progress"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["compare", str(db), "--by", "deployment", "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    res = json.loads(r.stdout)
    assert res["design"] == "interleaved" and res["base"] == "deployment=base"
    (cell,) = res["comparison"]["cells"]
    assert cell["decided_by"] == "blocks"
    assert (cell["between"]["units_base"], cell["base"]["n"], cell["new"]["n"]) == (3, 6, 6)
    assert cell["between"]["ratio_ci"][0] < cell["between"]["ratio"] < cell["between"]["ratio_ci"][1]
    fields = {d["field"]: (d["base"], d["new"]) for d in res["spec_diff"]["fields"]}
    assert fields["factor deployment"] == ("base", "new")
    assert fields["deployment's function.memory_mb"] == (512, 1024)
