"""One source of how a function's CPU follows its memory (the cpu-tiers table), and the Go
platform and the Python duration model computing the same CPU shares and /tmp limits from it.

- Python reads the table (faascope.tiers); the Go platform compiles agent/platform/cputiers_gen.go,
  generated from it by scripts/gen_cpu_tiers.py (why generated, not embedded: that script's
  docstring). A hand edit of either side, or a table change without regenerating, fails here.
- agent/platform/testdata/profile_shares.json holds what Go computes on a grid of memory sizes
  (TestProfileSharesGrid fails when Go leaves it); the Python side is compared with it here.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import math
from pathlib import Path

import pytest
from own_sources import python_sources

from faascope import calibration, tiers
from faascope.designs import estimate
from faascope.designs.model_inputs import Inputs

ROOT = Path(__file__).resolve().parents[2]
GEN_SCRIPT = ROOT / "scripts" / "gen_cpu_tiers.py"
SHARES = ROOT / "agent" / "platform" / "testdata" / "profile_shares.json"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_cpu_tiers", GEN_SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_go_tier_file_is_generated_from_the_table():
    gen = _generator()
    assert gen.GO_FILE.read_text() == gen.render(), (
        "agent/platform/cputiers_gen.go differs from the cpu-tiers table: run python3 scripts/gen_cpu_tiers.py")


def test_python_reads_the_table():
    t = calibration.load_table("cpu-tiers")
    assert tiers.LAMBDA_MB_PER_VCPU == t.value("lambda_mb_per_vcpu") == 1769  # AWS's published figure
    assert tiers.GCF_TIERS == {int(k.removeprefix("gcf_vcpu_m")): e.value
                               for k, e in t.entries.items() if k.startswith("gcf_vcpu_m")}
    assert list(tiers.GCF_TIERS) == sorted(tiers.GCF_TIERS)  # the lookups take the first tier that holds
    for e in t.entries.values():
        assert e.role == "published" and e.source.startswith(("AWS", "Google Cloud"))


def test_no_source_keeps_a_copy_of_the_figures():
    """No Python constant and no hand-written Go line repeats 1769 or a tier's fractional vCPU."""
    figures = {tiers.LAMBDA_MB_PER_VCPU} | {c for c in tiers.GCF_TIERS.values() if c != int(c)}
    copies = []
    for p in python_sources():
        for n in ast.walk(ast.parse(p.read_text())):
            if (isinstance(n, ast.Constant) and isinstance(n.value, (int, float))
                    and not isinstance(n.value, bool) and n.value in figures):
                copies.append(f"{p.relative_to(ROOT)}:{n.lineno}: {n.value}")
    gen = _generator()
    for p in (ROOT / "agent").rglob("*.go"):
        if p.name.endswith("_test.go") or p == gen.GO_FILE:
            continue
        for i, line in enumerate(p.read_text().splitlines(), 1):
            code = line.split("//", 1)[0]
            if any(f"{f!r}" in code or (isinstance(f, int) and str(f) in code) for f in figures):
                copies.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not copies, copies


GRID = json.loads(SHARES.read_text())["grid"]


@pytest.mark.parametrize("row", GRID, ids=lambda r: f"{r['memory_mb']}MB")
def test_python_computes_what_go_computes(row):
    m = row["memory_mb"]
    # CPU: Go rounds the lambda quota to 4 decimals; the duration model caps the share at one CPU
    assert tiers.lambda_vcpu(m) == pytest.approx(row["lambda_vcpu"], abs=5e-5 + 1e-12)
    assert estimate.cpu_share("lambda", m) == pytest.approx(min(1.0, row["lambda_vcpu"]), abs=5e-5 + 1e-12)
    assert tiers.gcf_vcpu(m) == row["gcf_vcpu"]
    assert estimate.cpu_share("gcf", m) == min(1.0, row["gcf_vcpu"])
    # /tmp: the same factor of the same table's limits (Go rounds each limit to whole bytes/ops)
    inputs = Inputs()
    assert math.isclose(inputs.tmp_memory_factor("lambda", m), row["lambda_tmp_factor"], rel_tol=1e-12)
    io = row["lambda_tmp_io"]
    for write, what in ((False, "read"), (True, "write")):
        bps, iops = inputs.tmp_limits("lambda", write, m)
        assert abs(bps - io[f"{what}_bps"]) <= 0.5 + 1e-6 and abs(iops - io[f"{what}_iops"]) <= 0.5 + 1e-6


def test_the_grid_crosses_every_tier_and_the_tmp_knee():
    sizes = {r["memory_mb"] for r in GRID}
    assert set(tiers.GCF_TIERS) <= sizes
    top = calibration.load_table("platform-lambda").value("tmp_limits_memory")
    assert {top - 1, top, top + 1, tiers.LAMBDA_MB_PER_VCPU} <= sizes
