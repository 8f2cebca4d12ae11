"""What a local campaign's figures rest on (faascope.designs.model_basis and the report's
`model_basis` section): each rule names the calibration entries a cell's workload is bounded by,
their roles are the tables' own, and a report whose cells rest on an *assumed* figure says so
under its answer.

The defect this guards against: `examples/colocation-local.yaml` (direct writes with fsync on
the lambda profile) reported per-function /tmp write bandwidth of ~33 MB/s with no word that the
profile's write limits (`tmp_write_bps`, `host_tmp_write_bps`) are assumed, not measured: the
thesis's 1 GB buffered write ran at 290 MB/s on Lambda, which needs several times that
write-back, so the absolute figure may be far from Lambda's."""
from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from faascope import calibration
from faascope.designs.model_basis import campaign_basis, cell_basis
from faascope.report.build import build_report

DATA = Path(__file__).resolve().parent / "data"
MiB = 1 << 20


def _cell(profile="lambda", memory=2048, burst=1, cold=False, image_size=None, **workload):
    return {"function": {"profile": profile, "memory_mb": memory, "image_size": image_size},
            "workload": workload, "load": {"burst_size": burst}, "cold": cold}


def _keys(basis) -> set[str]:
    return {f.key for f in basis.figures}


@pytest.mark.parametrize("cell,want", [
    # direct reads: the fitted read limits and each request's CPU, and below 2048 MB the memory scale
    (_cell(kind="fileio", op="read", direct=True), {"tmp_read_bps", "tmp_read_iops", "device_cpu"}),
    (_cell(memory=128, kind="fileio", op="read", direct=True),
     {"tmp_read_bps", "tmp_read_iops", "tmp_limits_memory", "tmp_limits_memory_exponent", "device_cpu"}),
    # writes that reach the device, alone and co-resident
    (_cell(kind="fileio", op="write", direct=True, fsync="none"), {"tmp_write_bps", "tmp_write_iops", "device_cpu"}),
    (_cell(burst=8, kind="fileio", op="write", direct=False, fsync="end"),
     {"tmp_write_bps", "tmp_write_iops", "device_cpu", "host_tmp_write_bps", "host_tmp_write_iops"}),
    # the thesis's writes: buffered from /dev/urandom with dd: CPU, no device limit
    (_cell(kind="fileio", op="write", engine="dd", source="urandom", fsync="none"),
     {"lambda_mb_per_vcpu", "cpu_period"}),
    (_cell(kind="sharedfs", op="write"), {"shared_write_bps", "shared_write_iops"}),
    (_cell(kind="network"), {"net_one_time_burst", "net_bucket_size", "net_peak_rate", "net_refill_rate"}),
    (_cell(kind="noop", image_size=64 * MiB),
     {"cold_start_fixed", "cold_start_fetch_rate", "init_vcpu", "init_overhead"}),
    # gcf: /tmp is memory (no device limit), system calls and closes cost GCF's
    (_cell(profile="gcf", kind="fileio", op="read", direct=True), {"syscall_cost", "close_cost"}),
    (_cell(profile="gcf", memory=1024, kind="fileio", op="write", engine="dd", source="urandom"),
     {"gcf_vcpu_m1024", "cpu_speed", "syscall_cost", "close_cost"}),
])
def test_each_rule_names_the_entries_that_bound_the_cell(cell, want):
    """Exact sets: a typo in a rule's key, or a rule that stops applying, changes the set."""
    assert _keys(cell_basis(cell)) == want


def test_roles_values_and_sources_are_the_tables_own():
    cells = [_cell(memory=128, burst=8, kind="fileio", op=op, direct=True, fsync="none", engine="dd",
                   source="urandom") for op in ("read", "write")]
    cells += [_cell(kind=k, op="write") for k in ("sharedfs", "network")]
    cells += [_cell(profile="gcf", kind="fileio", op="write", engine="dd", source="urandom")]
    seen = 0
    for c in cells:
        for f in cell_basis(c).figures:
            name, _, version = f.table.partition("@")
            e = calibration.load_table(name, version)[f.key]
            assert (f.role, f.value, f.unit, f.source) == (e.role, e.value, e.unit, e.source)
            seen += 1
    assert seen > 20


def test_what_no_entry_models_is_said():
    buffered = cell_basis(_cell(kind="fileio", op="write", direct=False, fsync="none"))
    assert not _keys(buffered) and "page cache" in buffered.unmodelled[0]
    gcf = cell_basis(_cell(profile="gcf", kind="fileio", op="read", direct=True))
    assert "memory" in gcf.unmodelled[0]
    # a redis-backed kv (the schema's default backend) and an unshaped S3 are this machine's
    kv = cell_basis(_cell(kind="kv", op="get"))
    assert not kv.figures and "redis" in kv.unmodelled[0]
    s3 = cell_basis(_cell(kind="object", op="put"))
    assert not s3.figures and "unshaped" in s3.unmodelled[0]
    shaped = cell_basis(_cell(kind="object", op="put"), shaped=["s3"])
    assert _keys(shaped) == {"s3_standard_write_median", "s3_standard_write_p99"} and not shaped.unmodelled
    bare = cell_basis(_cell(profile=None, kind="fileio", op="read", direct=True))
    assert not bare.figures and "no calibrated profile" in bare.unmodelled[0]


def test_assumed_follows_the_tables_role():
    """The write limits are assumed today; were a published figure to replace them, the warning
    would go with the role, not with a list kept here."""
    table = calibration.load_table("platform-lambda")
    write = cell_basis(_cell(kind="fileio", op="write", direct=True))
    assert {f.key for f in write.assumed} == {k for k in ("tmp_write_bps", "tmp_write_iops")
                                              if table[k].role == "assumed"}
    read = cell_basis(_cell(kind="fileio", op="read", direct=True))
    assert not read.assumed


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copyfile(DATA / name, dst)
    return dst


def test_a_report_on_assumed_figures_warns_under_its_answer(tmp_path):
    db = _copy(tmp_path, "colocation.db")
    with sqlite3.connect(db) as c:
        plan = json.loads(c.execute("SELECT plan_json FROM campaign").fetchone()[0])
    assumed = {f.key for b in campaign_basis(plan).values() for f in b.assumed}
    assert assumed == {"tmp_write_bps", "tmp_write_iops", "host_tmp_write_bps", "host_tmp_write_iops"}
    text = build_report(db, tmp_path / "out", formats=(), n_boot=200).summary.read_text()
    answer = text.split("## Answer", 1)[1].split("\n## ", 1)[0]
    assert "4 of 4 cell(s) rest on figures the calibration tables mark *assumed*" in answer
    for k in assumed:
        assert f"`{k}`" in answer
    section = text.split("## What the local figures rest on", 1)[1].split("\n## ", 1)[0]
    assert "| platform-lambda@2026-11-23 | `tmp_write_bps` | 33.3 MB/s | assumed |" in section


def test_fitted_and_published_figures_give_no_warning_and_clouds_no_section(tmp_path):
    text = build_report(_copy(tmp_path, "network-unshaped.db"), tmp_path / "out",
                        formats=(), n_boot=200).summary.read_text()
    assert "## What the local figures rest on" in text and "*assumed*" not in text
    db = _copy(tmp_path, "colocation.db")
    with sqlite3.connect(db) as c:
        c.execute("UPDATE campaign SET provider = 'aws'")
    text = build_report(db, tmp_path / "out2", formats=(), n_boot=200).summary.read_text()
    assert "What the local figures rest on" not in text and "*assumed*" not in text


def test_plan_names_the_assumed_figures_before_the_campaign_runs():
    """`faascope plan` on the co-location example lists the assumed entries per cell in its JSON
    and warns in its table; the thesis example (fitted read limits, buffered writes) has none."""
    from click.testing import CliRunner
    from faascope.cli import cli
    examples = Path(__file__).resolve().parents[2] / "examples"
    r = CliRunner().invoke(cli, ["plan", str(examples / "colocation-local.yaml"), "--format", "json"])
    assert r.exit_code == 0, r.output
    assumed = json.loads(r.output)["assumed_figures"]
    assert {k.split(":")[1] for k in assumed["burst_size=1"]} == {"tmp_write_bps", "tmp_write_iops"}
    assert {k.split(":")[1] for k in assumed["burst_size=8"]} == {"tmp_write_bps", "tmp_write_iops",
                                                                  "host_tmp_write_bps", "host_tmp_write_iops"}
    table = CliRunner().invoke(cli, ["plan", str(examples / "colocation-local.yaml")])
    assert "4 of 4 cell(s) rest on calibration figures marked assumed" in " ".join(table.output.split())
    thesis = CliRunner().invoke(cli, ["plan", str(examples / "thesis-local-fileio.yaml"), "--format", "json"])
    assert thesis.exit_code == 0 and json.loads(thesis.output)["assumed_figures"] == {}
