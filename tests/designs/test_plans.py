import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.designs.estimate import estimate
from faascope.designs.plan import build_plan
from faascope.specs.loader import load_spec, parse_spec

ROOT = Path(__file__).resolve().parents[2]
THESIS = ROOT / "examples" / "thesis-local-fileio.yaml"


def spec(factors, rules=(), design=None, workload=None):
    return parse_spec({
        "name": "p", "provider": {"kind": "local"},
        "workload": workload or {"kind": "fileio", "op": "write", "file_size": "1MB",
                                 "io_size": "4KiB"},
        "factors": factors,
        "design": {"replications": 3, "seed": 1, "rules": list(rules), **(design or {})},
    })


def test_full_factorial_counts():
    s = spec({"memory": [128, 256, 512], "io_size": ["512B", "4KiB"], "op": ["read", "write"]})
    p = build_plan(s)
    assert len(p.cells) == 12 and not p.excluded and p.invocations == 36
    assert len({c.key for c in p.cells}) == 12


def test_two_level_takes_min_and_max_by_value():
    s = spec({"memory": [512, 128, 2048, 1024], "io_size": ["64KiB", "512B", "4KiB"],
              "op": ["write", "read"], "pattern": ["sequential", "random"]},
             design={"type": "two_level"})
    p = build_plan(s)
    assert len(p.cells) == 2**4 and p.invocations == 3 * 16
    assert p.factor_levels() == {"memory": [128, 2048], "io_size": [512, 65536],
                                 "op": ["write", "read"], "pattern": ["sequential", "random"]}
    assert any("memory" in n and "dropped" in n for n in p.notes)


def test_two_level_non_numeric_takes_first_and_last():
    s = spec({"fsync": ["none", "end", "every"]}, design={"type": "two_level"})
    assert build_plan(s).factor_levels() == {"fsync": ["none", "every"]}


def test_rules_exclude_and_say_which_rule():
    s = spec({"file_size": ["4KiB", "1MB"], "io_size": ["512B", "64KiB"]},
             rules=["io_size <= file_size", "file_size > 1KB"])
    p = build_plan(s)
    assert len(p.cells) == 3
    assert [(e.levels, e.rule) for e in p.excluded] == [
        ({"file_size": 4096, "io_size": 65536}, "io_size <= file_size")]


def test_an_excluded_cell_records_every_rule_it_breaks():
    s = spec({"file_size": ["4KiB", "1MB"], "io_size": ["512B", "64KiB"]},
             rules=["io_size <= file_size", "file_size > 10KB"])
    p = build_plan(s)
    bad = [e for e in p.excluded if e.levels == {"file_size": 4096, "io_size": 65536}][0]
    assert bad.rule == "io_size <= file_size"
    assert bad.rules == ["io_size <= file_size", "file_size > 10KB"]


def test_memory_in_rules_is_bytes():
    # 128 MB is 134,217,728 bytes: a 130 MB (decimal) file fits, a 135 MB one does not
    s = spec({"file_size": ["130MB", "135MB"], "memory": [128]}, rules=["file_size < memory"])
    p = build_plan(s)
    assert [c.levels["file_size"] for c in p.cells] == [130_000_000]


def test_the_seed_fixes_the_order_and_is_recorded():
    s = spec({"memory": [128, 256], "op": ["read", "write"]})
    a, b = build_plan(s, seed=42), build_plan(s, seed=42)
    assert [r.as_dict() for r in a.runs] == [r.as_dict() for r in b.runs] and a.seed == 42
    c = build_plan(s, seed=43)
    assert [r.as_dict() for r in a.runs] != [r.as_dict() for r in c.runs]
    d = parse_spec({**s.raw, "design": {**s.raw["design"], "seed": None}})
    assert isinstance(build_plan(d).seed, int)


def test_order_covers_every_cell_replication_pair_once():
    s = spec({"memory": [128, 256, 512], "op": ["read", "write"]}, design={"replications": 5})
    p = build_plan(s)
    pairs = [(r.cell_key, r.replication) for r in p.runs]
    assert len(pairs) == len(set(pairs)) == 30
    assert [r.order for r in p.runs] == list(range(30))


def test_not_randomized_is_replication_major():
    s = spec({"memory": [128, 256]}, design={"randomize": False, "replications": 2})
    p = build_plan(s)
    assert [(r.cell_key, r.replication) for r in p.runs] == [
        ("memory=128", 0), ("memory=256", 0), ("memory=128", 1), ("memory=256", 1)]


def test_warmups_and_cold_flags():
    s = spec({"memory": [128, 256]}, design={"warmup": 2, "cold": True})
    p = build_plan(s)
    assert p.invocations == 2 * (3 + 2)
    for key in ("memory=128", "memory=256"):
        runs = [r for r in p.runs if r.cell_key == key]
        assert [r.kind for r in runs[:2]] == ["warmup", "warmup"]
        assert [r.force_cold for r in runs] == [True] + [False] * 4
    s = spec({"memory": [128, 256]}, design={"cold": "every"})
    assert all(r.force_cold for r in build_plan(s).runs)


def test_blocking_splits_replications_round_robin():
    s = spec({"memory": [128, 256]}, design={"replications": 6, "warmup": 1,
                                            "blocking": {"blocks": 3, "interval": "1h"}})
    p = build_plan(s)
    assert p.blocks == 3 and p.block_interval_s == 3600
    assert {(r.block, r.replication % 3) for r in p.runs if r.kind == "measure"} == {
        (0, 0), (1, 1), (2, 2)}
    assert [r.block for r in p.runs] == sorted(r.block for r in p.runs)
    assert sum(1 for r in p.runs if r.kind == "warmup") == 2 * 3
    est = estimate(p)
    assert est["seconds"] >= 2 * 3600


def test_overrides_apply_per_cell():
    s = parse_spec({
        "name": "o", "provider": {"kind": "local"},
        "workload": {"kind": "fileio", "file_size": "1MB", "io_size": "4KiB"},
        "factors": {"op": ["read", "write"]},
        "overrides": [{"when": "op == 'read'", "set": {"direct": True, "memory": 256}}],
    })
    p = build_plan(s, seed=1)
    by_op = {c.levels["op"]: c for c in p.cells}
    assert by_op["read"].payload["workload"]["direct"] is True
    assert by_op["read"].function.memory_mb == 256
    assert by_op["write"].payload["workload"]["direct"] is False
    assert by_op["write"].function.memory_mb == 128


def test_thesis_design_has_exactly_the_compatible_cells():
    """The 2024 thesis's design: profiles x tiers 128/2048 MB x files 10 KB/1 GB x I/O 512 B/128 KiB x op;
    a 1 GB file only at 2048 MB, a 10 KB file only with 512 B I/O -> the 16 cells the study ran
    (cross-checked with examples/data/thesis-2024/main_experiment.csv: 16 cells). The example
    scales the 1 GB file to 2 MiB (the same I/O calls, fewer of them)."""
    p = build_plan(load_spec(THESIS), seed=1)
    cells = {tuple(c.levels.values()) for c in p.cells}
    expected = set()
    for profile in ("lambda", "gcf"):
        for op in ("read", "write"):
            for mem in (128, 2048):
                expected.add((profile, mem, 10_000, 512, op))
            for io in (512, 131_072):
                expected.add((profile, 2048, 2 * 1024**2, io, op))
    assert cells == expected and len(p.cells) == 16 and len(p.excluded) == 16
    reasons = {e.rule for e in p.excluded}
    assert reasons == {"io_size <= file_size", "memory_mb == 2048 or file_size == 10KB"}
    for c in p.cells:
        w = c.payload["workload"]
        # reads direct (and prepared by the agent), writes through the page cache with dd from
        # /dev/urandom, as in the study
        assert w["direct"] is (w["op"] == "read")
        assert w.get("prepare", w["op"] == "read") is (w["op"] == "read")
        assert (w["engine"], w.get("source")) == (("native", "zero") if w["op"] == "read"
                                                  else ("dd", "urandom"))
        assert c.function.profile in ("lambda", "gcf")


def test_plan_json_contract():
    r = CliRunner().invoke(cli, ["plan", str(THESIS), "--format", "json", "--seed", "5"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert set(d) >= {"cells", "excluded", "invocations"}
    assert len(d["cells"]) == 16 and len(d["excluded"]) == 16
    reps = d["cells"][0]["replications"]
    assert d["invocations"] == 16 * reps
    for c in d["cells"]:
        assert set(c) >= {"levels", "replications"}
        assert set(c["levels"]) == {"profile", "memory", "file_size", "io_size", "op"}
        assert isinstance(c["levels"]["file_size"], int)
    for e in d["excluded"]:
        assert set(e) >= {"levels", "rule"} and isinstance(e["rule"], str)
    r = CliRunner().invoke(cli, ["plan", str(THESIS), "--format", "json", "--replications", "150"])
    assert json.loads(r.output)["invocations"] == 16 * 150


def test_plan_table_lists_cells_exclusions_and_estimate():
    r = CliRunner().invoke(cli, ["plan", str(THESIS)])
    assert r.exit_code == 0, r.output
    assert "Cells to run (16)" in r.output and "Excluded cells (16)" in r.output
    assert "io_size <= file_size" in r.output and "Estimated duration" in r.output


def test_every_cell_excluded_is_bad_input():
    r = CliRunner().invoke(cli, ["plan", "/dev/null"])
    assert r.exit_code == 2
    s = spec({"memory": [128]}, rules=["memory_mb > 128"])
    with pytest.raises(Exception, match="every cell is excluded"):
        build_plan(s)


def test_workload_kind_as_a_factor():
    s = parse_spec({"name": "k", "provider": {"kind": "local"},
                    "workload": {"iterations": 1000},
                    "factors": {"kind": ["noop", "spin"]}})
    p = build_plan(s, seed=1)
    assert {c.payload["workload"]["kind"] for c in p.cells} == {"noop", "spin"}
    assert [c.payload for c in p.cells if c.levels["kind"] == "noop"][0] == {"workload": {"kind": "noop"}}


def test_plan_table_reads_levels_in_their_fields_units(tmp_path):
    """Milliseconds read as ms and bytes as exact sizes, as the request schema's x-unit says (a
    duration of 2000 ms once printed as '2KB')."""
    spec = tmp_path / "n.yaml"
    spec.write_text("""
name: units-in-table
provider: {kind: local}
workload: {kind: network, direction: in}
factors:
  duration_ms: [500ms, 2s]
  bytes: [1MiB, 10MB]
  memory: [256, 512]
""")
    out = CliRunner().invoke(cli, ["plan", str(spec)], terminal_width=200).output
    assert "2000 ms" in out and "500 ms" in out and "2KB" not in out
    assert "1MiB" in out and "10MB" in out and "512 MB" in out



def test_a_design_beyond_the_limit_is_refused_before_it_is_enumerated(tmp_path):
    """8 factors × 10 levels = 10^8 combinations: exit 2 naming the product, at once (a 10^7
    factorial used to run for minutes into gigabytes before saying anything)."""
    import time

    from click.testing import CliRunner

    from faascope.cli import cli

    def ten(start, unit=""):
        return "[" + ", ".join(f"{start + i}{unit}" for i in range(10)) + "]"

    spec = tmp_path / "big.yaml"
    spec.write_text(f"""
name: big
provider: {{kind: local}}
function: {{memory_mb: 2048, ephemeral_mb: 2048}}
workload: {{kind: fileio, op: write}}
factors:
  memory: {ten(1280)}
  ephemeral: {ten(5120)}
  timeout: {ten(10)}
  image_size: {ten(10, "MB")}
  file_size: {ten(10, "KB")}
  io_size: {ten(512, "B")}
  seed: {ten(1)}
  path: [{", ".join(f"f{i}.dat" for i in range(10))}]
design: {{replications: 1}}
""")
    t0 = time.perf_counter()
    r = CliRunner().invoke(cli, ["plan", str(spec)])
    took = time.perf_counter() - t0
    assert r.exit_code == 2, r.output
    assert "factors:" in r.output and "100,000,000 combinations" in r.output, r.output
    assert "memory 10 × ephemeral 10" in r.output
    assert took < 1.0, took
