"""Bad specs fail with exit status 2 and a message that names the field (and the allowed values)."""
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from faascope.cli import cli
from faascope.errors import BadInput
from faascope.specs.loader import parse_spec

BASE = {
    "name": "t",
    "provider": {"kind": "local"},
    "function": {"memory_mb": 128},
    "workload": {"kind": "fileio", "op": "write", "file_size": "10KB", "io_size": "512B"},
    "factors": {"memory": [128, 2048]},
    "design": {"replications": 2},
}


def with_(path: str, value, base=None):
    spec = json.loads(json.dumps(base or BASE))
    cur = spec
    parts = path.split(".")
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    if value is DELETE:
        cur.pop(parts[-1], None)
    else:
        cur[parts[-1]] = value
    return spec


DELETE = object()


def plan_exit(tmp_path: Path, spec) -> tuple[int, str]:
    f = tmp_path / "spec.yaml"
    f.write_text(spec if isinstance(spec, str) else yaml.safe_dump(spec))
    r = CliRunner().invoke(cli, ["plan", str(f)])
    return r.exit_code, r.output


@pytest.mark.parametrize("path,value,needles", [
    ("provider.kind", "azure", ["provider.kind", "'local'", "'aws'"]),
    ("provider.settings", {"bogus": 1}, ["provider.settings.bogus", "unknown field", "endpoint_url"]),
    ("function.memory_mb", 64, ["function.memory_mb", "128"]),
    ("function.memory_mb", "128MB", ["function.memory_mb", "MiB"]),
    ("function.arch", "riscv", ["function.arch", "'x86_64'", "'arm64'"]),
    ("function.profile", "azure", ["function.profile", "'lambda'", "'gcf'"]),
    ("function.memroy_mb", 256, ["function.memroy_mb", "unknown field", "memory_mb"]),
    ("workload.kind", "fio", ["workload.kind", "noop", "fileio"]),
    ("workload.op", "append", ["workload.op", "'write'", "'read'"]),
    ("workload.io_size", "128k", ["workload.io_size", "ambiguous", "128KB", "128KiB"]),
    ("workload.file_sise", "1GB", ["workload.file_sise", "unknown field", "file_size"]),
    ("workload.file_size", DELETE, ["workload.file_size", "required"]),
    ("workload.fsync", "always", ["workload.fsync", "'none'", "'end'", "'every'"]),
    ("factors.memory", [128, "lots"], ["factors.memory[1]"]),
    ("factors.memory", [], ["factors.memory", "at least one level"]),
    ("factors.concurrency", [1, 2], ["factors.concurrency", "unknown factor", "io_size"]),
    ("factors.file_size", ["10KB", "10000"], ["factors.file_size[1]", "repeats"]),
    ("factors.io_size", ["512B", "4k"], ["factors.io_size[1]", "ambiguous"]),
    ("factors.profile", ["lambda", "azure"], ["factors.profile[1]", "'gcf'"]),
    ("factors.iterations", [1, 2], ["factors.iterations", "fileio workload has no field"]),
    ("design.type", "latin_square", ["design.type", "'full_factorial'", "'two_level'"]),
    ("design.replications", 0, ["design.replications"]),
    ("design.cold", "sometimes", ["design.cold", "'every'"]),
    ("design.rules", ["io_size <== file_size"], ["design.rules[0]", "not a valid expression"]),
    ("design.rules", ["io_size <= filesize"], ["design.rules[0]", "unknown name 'filesize'", "file_size"]),
    ("design.rules", ["__import__('os')"], ["design.rules[0]", "Call is not allowed"]),
    ("design.rules", ["memory > 1024"], ["design.rules[0]", "bytes", "memory_mb"]),
    ("design.blocking", {"blocks": 5, "interval": "1h"}, ["design.blocking.blocks", "replications"]),
    ("design.blocking", {"blocks": 2, "interval": "soon"}, ["design.blocking.interval", "duration"]),
    ("design.bogus", 1, ["design.bogus", "unknown field", "replications"]),
    ("name", "has spaces", ["name"]),
    ("colour", "red", ["colour", "unknown field"]),
])
def test_bad_spec_exit_2_names_the_field(tmp_path, path, value, needles):
    code, out = plan_exit(tmp_path, with_(path, value))
    assert code == 2, out
    flat = " ".join(out.split())
    for n in needles:
        assert n in flat, (n, out)


def test_every_problem_is_reported_at_once(tmp_path):
    spec = with_("design.type", "latin", with_("function.arch", "riscv"))
    code, out = plan_exit(tmp_path, spec)
    assert code == 2 and "2 problems" in out and "design.type" in out and "function.arch" in out
    spec = with_("workload.op", "append", with_("factors.memory", [128, "x"]))
    code, out = plan_exit(tmp_path, spec)
    assert code == 2 and "2 problems" in out and "workload.op" in out and "factors.memory[1]" in out


def test_aws_needs_a_role_and_has_no_profiles(tmp_path):
    spec = with_("provider", {"kind": "aws", "settings": {"region": "eu-west-1"}})
    code, out = plan_exit(tmp_path, spec)
    assert code == 2 and "provider.settings.role" in out
    spec = with_("provider", {"kind": "aws", "settings": {
        "role": "arn:aws:iam::123456789012:role/x"}})
    spec["factors"]["profile"] = ["lambda", "gcf"]
    code, out = plan_exit(tmp_path, spec)
    assert code == 2 and "factors.profile" in out and "only the local provider" in out


def test_cell_level_problems_name_the_cell(tmp_path):
    spec = with_("factors.io_size", ["512B", "128KB"])  # 128 KB > 10 KB file, no rule
    code, out = plan_exit(tmp_path, spec)
    assert code == 2
    assert "io_size" in out and "file_size" in out and "io_size <= file_size" in out
    assert "in cell" in out


def test_direct_io_needs_512_multiples(tmp_path):
    spec = with_("workload.direct", True, with_("workload.io_size", 1000))
    code, out = plan_exit(tmp_path, spec)
    assert code == 2 and "multiple of 512" in out


def test_yaml_syntax_error_is_bad_input_with_a_line(tmp_path):
    code, out = plan_exit(tmp_path, "name: x\nprovider: {kind: local\n")
    assert code == 2 and "line" in out


def test_missing_spec_file(tmp_path):
    r = CliRunner().invoke(cli, ["plan", str(tmp_path / "nope.yaml")])
    assert r.exit_code == 2 and "not found" in r.output


def test_not_a_mapping(tmp_path):
    code, out = plan_exit(tmp_path, "- a\n- b\n")
    assert code == 2 and "mapping" in out


def test_overrides_are_validated(tmp_path):
    spec = with_("overrides", [{"when": "op == 'read'", "set": {"memory": 256}}])
    code, out = plan_exit(tmp_path, spec)
    assert code == 2 and "overrides[0].set.memory" in out and "is a factor" in out
    spec = with_("overrides", [{"when": "op = 'read'", "set": {"direct": True}}])
    code, out = plan_exit(tmp_path, spec)
    assert code == 2 and "overrides[0].when" in out
    spec = with_("overrides", [{"when": "op == 'read'", "set": {"direct": "maybe"}}])
    code, out = plan_exit(tmp_path, spec)
    assert code == 2 and "overrides[0].set.direct" in out


def test_spec_hash_ignores_spelling_and_replications():
    a = parse_spec(BASE)
    b = parse_spec(with_("factors.memory", ["128MiB", "2GiB"], with_("design.replications", 9)))
    assert a.spec_hash == b.spec_hash
    c = parse_spec(with_("factors.memory", [128, 1024]))
    assert c.spec_hash != a.spec_hash


def test_bad_input_carries_the_field():
    with pytest.raises(BadInput) as e:
        parse_spec(with_("design.type", "x"))
    assert e.value.field == "design.type" and e.value.exit_code == 2


def test_the_example_validates():
    root = Path(__file__).resolve().parents[2]
    for f in sorted((root / "examples").glob("*.yaml")):
        data = yaml.safe_load(f.read_text())
        if isinstance(data, dict) and "factors" in data and "design" in data:
            parse_spec(data, source=str(f))
