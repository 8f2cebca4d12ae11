"""Every workload kind of the agent's request schema is a spec workload: usable as ``workload:``,
each of its parameters as a factor, in overrides and in rules, with exact units where the schema
marks sizes (``x-unit: bytes``) and milliseconds (``x-unit: ms``)."""
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from faascope.cli import cli
from faascope.designs.plan import build_plan
from faascope.errors import BadInput
from faascope.specs.loader import load_spec, parse_spec, resolve_name

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "src/faascope/schemas/agent-request.schema.json").read_text())
REQUEST = Draft202012Validator(SCHEMA)
KINDS = SCHEMA["$defs"]["workload"]["properties"]["kind"]["enum"]

SECRETS = {"access_key_id": "a", "secret_access_key": "s", "session_token": "t"}
#: one workload per kind with as many of its parameters set as its conditionals allow
FULL = {
    "noop": {"kind": "noop"},
    "spin": {"kind": "spin", "iterations": 1000},
    "fileio": {"kind": "fileio", "engine": "native", "op": "read", "pattern": "random",
               "file_size": "1MiB", "io_size": "4KiB", "direct": True, "fsync": "none",
               "source": "urandom", "path": "sub/f.dat", "prepare": True, "drop": False, "seed": 3},
    "object": {"kind": "object", "api": "s3", "op": "get", "object_size": "1KiB", "count": 10,
               "parallelism": 2, "bucket": "b", "prefix": "p/", "index": 1,
               "endpoint": "http://127.0.0.1:9451", "region": "us-east-1", "path_style": True,
               **SECRETS, "max_attempts": 3, "retry_mode": "standard", "max_backoff_ms": "2s",
               "timeout_ms": "500ms", "checksum": "when_supported", "source": "urandom",
               "prepare": True, "drop": True, "on_error": "count"},
    "kv": {"kind": "kv", "backend": "dynamodb", "op": "put", "item_size": "1KiB", "count": 5,
           "parallelism": 1, "index": 0, "prefix": "k:", "endpoint": "http://127.0.0.1:9452",
           "table": "t", "region": "us-east-1", **SECRETS, "consistent_read": True,
           "max_attempts": 2, "retry_mode": "adaptive", "max_backoff_ms": 100, "timeout_ms": "1s",
           "source": "zero", "prepare": False, "drop": False, "on_error": "fail"},
    "sharedfs": {"kind": "sharedfs", "root": "/mnt/shared", "mode": "shared", "index": 2,
                 "engine": "native", "op": "write", "pattern": "sequential", "file_size": "64KiB",
                 "io_size": "4KiB", "direct": False, "fsync": "end", "source": "zero",
                 "path": "s.dat", "prepare": False, "drop": False, "seed": 0},
    "network": {"kind": "network", "direction": "both", "sink": "127.0.0.1:9453", "connections": 2,
                "bytes": "10MiB", "duration_ms": "2s", "interval_ms": 20, "io_size": "64KiB",
                "timeout_ms": "1s"},
    "transfer": {"kind": "transfer", "via": "object", "chain_length": 3, "payload_size": "1MiB",
                 "function": "f", "lambda_endpoint": "http://127.0.0.1:9454",
                 "invoke_timeout_ms": "30s", "endpoint": "http://127.0.0.1:9455", "bucket": "b",
                 "prefix": "t/", "path_style": True, "region": "us-east-1", **SECRETS,
                 "max_attempts": 2},
    "app": {"kind": "app", "shape": "inference", "storage": "kv", "input_size": "8KiB",
            "output_size": "4KiB", "layers": 2, "index": 0, "seed": 1, "prepare": True,
            "drop": True, "backend": "redis", "endpoint": "redis://127.0.0.1:9456/0", "prefix": "a/",
            "region": "us-east-1", **SECRETS, "max_attempts": 2},
}
#: set by the previous hop of a chain, never by a spec's first invocation
CHAIN_ONLY = {("transfer", f) for f in ("hop", "session", "payload", "key", "invoked_ns")}


def spec(workload, factors=None, **extra):
    return {"name": "k", "provider": {"kind": "local"}, "workload": workload,
            "factors": factors or {}, **extra}


def test_the_examples_cover_every_kind_and_field():
    assert sorted(FULL) == sorted(KINDS)
    for kind in KINDS:
        fields = set(SCHEMA["$defs"][kind]["properties"])
        missing = fields - set(FULL[kind]) - {f for k, f in CHAIN_ONLY if k == kind}
        # a few fields are exclusive by the schema's conditionals (transfer via object takes no
        # table, app on kv no bucket); they are covered by the factor test below
        assert missing <= {"table", "backend", "bucket", "path_style", "root", "consistent_read"}, (kind, missing)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_is_a_spec_workload(kind):
    p = build_plan(parse_spec(spec(FULL[kind])), seed=1)
    (cell,) = p.cells
    REQUEST.validate(cell.payload)
    assert cell.payload["workload"]["kind"] == kind


@pytest.mark.parametrize("kind", KINDS)
def test_every_parameter_can_be_a_factor(kind):
    """Each parameter of the full example moved from workload: to a factor gives the same
    request; every field of the schema resolves to the workload as a factor name."""
    base = build_plan(parse_spec(spec(FULL[kind])), seed=1).cells[0].payload
    for name, value in FULL[kind].items():
        if name == "kind":
            continue
        wl = {k: v for k, v in FULL[kind].items() if k != name}
        p = build_plan(parse_spec(spec(wl, {name: [value]})), seed=1)
        assert p.cells[0].payload == base, name
    for name in SCHEMA["$defs"][kind]["properties"]:
        assert resolve_name(name) == ("workload", name)
        assert resolve_name(f"workload.{name}") == ("workload", name)


def test_sizes_and_milliseconds_take_exact_units_as_factors():
    s = parse_spec(spec({"kind": "object", "op": "put", "bucket": "b"},
                        {"object_size": ["1KiB", "1MiB", "10KB"], "timeout_ms": ["2s", 250, "1.5s"]}))
    levels = {f.name: f.levels for f in s.factors}
    assert levels == {"object_size": [1024, 1048576, 10000], "timeout_ms": [2000, 250, 1500]}
    p = build_plan(s, seed=1)
    assert {(c.payload["workload"]["object_size"], c.payload["workload"]["timeout_ms"])
            for c in p.cells} >= {(1024, 2000), (10000, 1500)}


@pytest.mark.parametrize("factors,needles", [
    ({"object_size": ["1KiB", "128k"]}, ["factors.object_size[1]", "ambiguous", "128KB", "128KiB"]),
    ({"object_size": ["6GiB"]}, ["factors.object_size[0]", "5368709120"]),
    ({"timeout_ms": ["soon"]}, ["factors.timeout_ms[0]", "duration"]),
    ({"timeout_ms": ["0.5ms"]}, ["factors.timeout_ms[0]", "whole number of milliseconds"]),
    ({"op": ["put", "append"]}, ["factors.op[1]", "'put'", "'get'"]),
    ({"file_size": [1]}, ["factors.file_size", "object workload has no field"]),
])
def test_bad_levels_name_the_factor(factors, needles):
    with pytest.raises(BadInput) as e:
        parse_spec(spec({"kind": "object", "op": "put", "bucket": "b"}, factors))
    text = " ".join(f"{e.value.field}: {e.value.message}".split())
    for n in needles:
        assert n in text, (n, text)


def test_overrides_and_rules_use_any_kind_s_fields():
    s = parse_spec(spec({"kind": "kv", "op": "put", "endpoint": "redis://127.0.0.1:9457/0"},
                        {"item_size": ["1KiB", "400KiB"], "parallelism": [1, 8]},
                        overrides=[{"when": "item_size > 100KiB", "set": {"count": 10,
                                                                         "timeout_ms": "3s"}}],
                        design={"rules": ["item_size * parallelism <= 1MiB"]}))
    p = build_plan(s, seed=1)
    got = {(c.levels["item_size"], c.levels["parallelism"]): c.payload["workload"] for c in p.cells}
    assert set(got) == {(1024, 1), (1024, 8), (409600, 1)}
    assert got[(409600, 1)]["count"] == 10 and got[(409600, 1)]["timeout_ms"] == 3000
    assert got[(1024, 8)]["count"] == 1  # the schema's default
    assert [e.rule for e in p.excluded] == ["item_size * parallelism <= 1MiB"]


def test_the_schema_s_conditionals_name_the_field_and_the_cell():
    s = parse_spec(spec({"kind": "transfer", "bucket": "b"}, {"via": ["object", "inline"]}))
    with pytest.raises(BadInput) as e:
        build_plan(s, seed=1)
    assert e.value.field == "workload.bucket"
    assert 'not allowed when via is "inline"' in e.value.message and "in cell via=inline" in e.value.message
    s = parse_spec(spec({"kind": "app", "shape": "sort", "storage": "tmp"},
                        {"input_size": ["1MB", "1MiB"]}))
    with pytest.raises(BadInput) as e:
        build_plan(s, seed=1)
    assert e.value.field == "workload.input_size" and "multiple of 100" in e.value.message


def test_sharedfs_keeps_fileio_s_friendly_rules():
    s = parse_spec(spec({"kind": "sharedfs", "op": "write", "file_size": "4KiB"},
                        {"io_size": ["4KiB", "8KiB"]}))
    with pytest.raises(BadInput) as e:
        build_plan(s, seed=1)
    assert "add the rule 'io_size <= file_size'" in e.value.message


def test_defaults_the_schema_forbids_for_a_request_are_not_sent():
    """An inline transfer takes no storage parameters; the schema's defaults of those fields
    (max_attempts, backend) are therefore left out of its request, not sent and refused."""
    p = build_plan(parse_spec(spec({"kind": "transfer"}, {"via": ["inline", "kv"]})), seed=1)
    by_via = {c.levels["via"]: c.payload["workload"] for c in p.cells}
    assert "max_attempts" not in by_via["inline"] and "backend" not in by_via["inline"]
    assert by_via["kv"]["max_attempts"] == 1 and by_via["kv"]["backend"] == "redis"
    for c in p.cells:
        REQUEST.validate(c.payload)


def test_kind_as_a_factor_across_storage_kinds():
    s = parse_spec(spec({"op": "put", "bucket": "b", "endpoint": "http://127.0.0.1:9458"},
                        {"kind": ["object", "kv"]}))
    with pytest.raises(BadInput) as e:  # kv has no bucket (dropped), an http endpoint needs dynamodb
        build_plan(s, seed=1)
    assert e.value.field == "workload.endpoint"
    assert 'unless backend is "dynamodb"' in e.value.message and "[in cell kind=kv]" in e.value.message


def test_plan_command_accepts_a_sharedfs_spec(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump(spec({"kind": "sharedfs", "op": "write", "file_size": "1MiB",
                                      "io_size": "64KiB"}, {"mode": ["private", "shared"]})))
    r = CliRunner().invoke(cli, ["plan", str(f), "--format", "json"])
    assert r.exit_code == 0, r.output
    cells = json.loads(r.output)["cells"]
    assert {c["workload"]["mode"] for c in cells} == {"private", "shared"}


def test_base_workload_sizes_are_normalised_before_rules_see_them(tmp_path):
    """A size written in the base workload ('1MiB') is bytes to a rule, as a factor level is:
    the rule compares 1,048,576 with each file size instead of failing on the text."""
    spec = tmp_path / "s.yaml"
    spec.write_text("""
name: base-sizes
provider: {kind: local}
workload: {kind: fileio, op: write, io_size: 1MiB}
factors:
  file_size: [512KiB, 4MiB]
design:
  rules: ["io_size <= file_size"]
""")
    plan = build_plan(load_spec(spec))
    assert [c.payload["workload"]["file_size"] for c in plan.cells] == [4 * 1024 * 1024]
    assert plan.cells[0].payload["workload"]["io_size"] == 1024 * 1024
    assert [e.levels["file_size"] for e in plan.excluded] == [512 * 1024]
