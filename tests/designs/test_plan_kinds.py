"""The plan's duration model for every workload kind, and its refusal of cells that cannot work.

The estimates are tested on cells whose agent payload is set directly (a plan of a noop spec
with each cell's payload replaced), so they do not depend on which kinds the spec layer accepts;
the tests that go through a spec of a storage kind need the spec layer to accept all nine kinds
of the agent's request schema (issue #13).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.designs import estimate as E
from faascope.designs.estimate import estimate, workload_seconds
from faascope.designs.model_inputs import Inputs
from faascope.designs.plan import (DYNAMODB_MAX_ITEM, INLINE_MAX_PAYLOAD, S3_MAX_OBJECT,
                                   STORED_MAX_PAYLOAD, TMPFS_RESERVE, build_plan, cell_limit)
from faascope.errors import BadInput
from faascope.specs.loader import parse_spec

#: the agent's request schema, read directly (the one source of the kinds and their limits)
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "src" / "faascope" / "schemas"
                     / "agent-request.schema.json").read_text())


def workload_kinds() -> list[str]:
    return SCHEMA["$defs"]["workload"]["properties"]["kind"]["enum"]


def workload_def(kind: str) -> dict:
    return SCHEMA["$defs"][kind]


ROLE = "arn:aws:iam::123456789012:role/faascope"
SETTINGS = {"aws": {"role": ROLE}, "gcp": {"project": "faascope-test"}, "local": {}}
MIB = 1024**2

# the cloud's figures the model takes from the calibration tables (model_inputs): S3, DynamoDB
# and EFS request latencies from Lambda (the mean of each lognormal), Lambda's network bucket
_IN = Inputs()
S3_PUT_S, S3_GET_S = _IN.request_s("s3_standard", True), _IN.request_s("s3_standard", False)
DYNAMODB_PUT_S = _IN.request_s("dynamodb", True)
EFS_WRITE_S = _IN.request_s("efs", True)
_BUCKET = _IN.net_bucket("lambda")
NET_PEAK_BPS, NET_BASELINE_BPS = _BUCKET.peak, _BUCKET.refill
NET_BURST_BYTES = _BUCKET.one_time + _BUCKET.bucket


def plan_of(workload: dict, provider: str = "aws", function: dict | None = None, reps: int = 3):
    """A one-cell plan on ``provider`` whose cell sends ``workload``."""
    s = parse_spec({"name": "k", "provider": {"kind": provider, "settings": SETTINGS[provider]},
                    "function": function or {}, "workload": {"kind": "noop"},
                    "design": {"replications": reps, "seed": 1}})
    p = build_plan(s)
    for c in p.cells:
        c.payload = {"workload": dict(workload)}
    return p


def seconds(workload: dict, provider: str = "aws", **kw) -> float:
    p = plan_of(workload, provider, **kw)
    return workload_seconds(p.cells[0], provider)


# --------------------------------------------------------------------------- duration per kind
def test_every_kind_of_the_request_schema_has_a_model():
    examples = {
        "noop": {}, "spin": {"iterations": 10**6},
        "fileio": {"op": "write", "file_size": MIB, "io_size": 4096},
        "object": {"op": "put", "object_size": 1024, "count": 10},
        "kv": {"op": "get", "item_size": 1024, "count": 10},
        "sharedfs": {"op": "write", "file_size": MIB, "io_size": 4096},
        "network": {"bytes": 10 * MIB},
        "transfer": {"chain_length": 3, "payload_size": 1024},
        "app": {"shape": "sort"},
    }
    assert set(examples) == set(workload_kinds())
    for kind, params in examples.items():
        t = seconds({"kind": kind, **params})
        assert (t == 0) == (kind == "noop"), (kind, t)


def test_object_requests_are_waves_of_latencies_plus_bytes_at_the_network_rate():
    w = {"kind": "object", "op": "put", "object_size": 1024, "count": 10}
    assert seconds(w) == pytest.approx(10 * S3_PUT_S + 10 * 1024 / NET_PEAK_BPS)
    # five in flight: two waves of requests, the same bytes
    assert seconds({**w, "parallelism": 5}) == pytest.approx(2 * S3_PUT_S + 10 * 1024 / NET_PEAK_BPS)
    # a get prepares its objects (PUTs) and drops them (a delete per wave) in the invocation,
    # both in waves of the agent's untimed parallelism (16): 40 objects are 3 waves each
    get = seconds({**w, "op": "get", "count": 40})
    assert E.UNTIMED_PARALLELISM == 16
    assert get == pytest.approx(40 * S3_GET_S + 3 * S3_PUT_S + 3 * S3_PUT_S
                                + 2 * 40 * 1024 / NET_PEAK_BPS)
    # a parallelism above it is kept for them too
    get = seconds({**w, "op": "get", "count": 40, "parallelism": 20})
    assert get == pytest.approx(2 * S3_GET_S + 2 * S3_PUT_S + 2 * S3_PUT_S
                                + 2 * 40 * 1024 / NET_PEAK_BPS)
    # locally the unshaped stand-in's latencies (unlimited profile), the shaped one's (lambda:
    # S3's, from the table) at the stand-in's rate
    local = seconds(w, "local", function={"profile": "unlimited"})
    assert local == pytest.approx(10 * E.LOCAL_OBJECT_PUT_S + 10 * 1024 / E.LOCAL_STORAGE_BPS)
    shaped = seconds(w, "local", function={"profile": "lambda"})
    assert shaped == pytest.approx(10 * S3_PUT_S + 10 * 1024 / E.LOCAL_STORAGE_BPS)


def test_the_untimed_parallelism_is_the_agents():
    # one number, two languages: the estimate models the agent's prepare and drop
    import re
    go = (Path(__file__).resolve().parents[2] / "agent" / "workloads" / "batch.go").read_text()
    (agent,) = re.findall(r"^const UntimedParallelism = (\d+)$", go, re.M)
    assert int(agent) == E.UNTIMED_PARALLELISM
    # and the docs say it (the request schema's prepare and drop, docs/storage.md)
    root = Path(__file__).resolve().parents[2]
    schema = (root / "src" / "faascope" / "schemas" / "agent-request.schema.json").read_text()
    assert schema.count(f"at least {agent} at once") == 4
    assert f"at least {agent} requests at once" in " ".join(
        (root / "docs" / "storage.md").read_text().split())


def test_kv_latency_follows_the_backend():
    w = {"kind": "kv", "op": "put", "item_size": 1000, "count": 100}
    ddb = seconds({**w, "backend": "dynamodb"})
    redis = seconds({**w, "backend": "redis"})
    assert ddb == pytest.approx(100 * DYNAMODB_PUT_S + 100_000 / NET_PEAK_BPS)
    assert redis < ddb / 10


def test_the_network_rate_is_lambdas_token_bucket_on_a_cloud():
    gib = 1024**3
    burst = NET_BURST_BYTES / NET_PEAK_BPS
    assert E.network_seconds(gib, E.Site("cloud", False, 1.0, "lambda", "lambda")) == pytest.approx(
        burst + (gib - NET_BURST_BYTES) / NET_BASELINE_BPS)
    # network: bytes at that rate, or duration_ms when that ends it first
    assert seconds({"kind": "network", "bytes": gib, "duration_ms": 900000}) == pytest.approx(
        burst + (gib - NET_BURST_BYTES) / NET_BASELINE_BPS)
    assert seconds({"kind": "network", "bytes": gib, "duration_ms": 2000}) == 2.0
    assert seconds({"kind": "network", "duration_ms": 5000}) == 5.0


def test_sharedfs_on_efs_counts_nfs_rpcs():
    w = {"kind": "sharedfs", "op": "write", "file_size": 8 * MIB, "io_size": 64 * 1024}
    data = 8 * MIB / NET_PEAK_BPS
    # buffered 64 KiB writes leave in 1 MiB RPCs; O_DIRECT ones one by one
    assert seconds(w) == pytest.approx(8 * EFS_WRITE_S + data)
    assert seconds({**w, "direct": True}) == pytest.approx(128 * EFS_WRITE_S + data)
    # locally the shared directory is a host directory behind the profile's shared budget: the
    # fileio model with those limits
    local = plan_of(w, "local").cells[0]
    assert workload_seconds(local, "local") == pytest.approx(
        E._fileio(w, E.Site("local", False, E.cpu_share("lambda", 128), "lambda"), shared=True))


def test_transfer_chain_is_links_and_bills_every_hop():
    w = {"kind": "transfer", "via": "inline", "chain_length": 4, "payload_size": MIB}
    link = E.OVERHEAD_S["cloud"] + 2 * MIB / NET_PEAK_BPS
    assert seconds(w) == pytest.approx(3 * link)
    p = plan_of(w)
    assert E.hop_seconds(p.cells[0], "aws") == pytest.approx([3 * link, 2 * link, link, 0.0])
    via_object = seconds({**w, "via": "object"})
    assert via_object == pytest.approx(3 * (link + 2 * S3_PUT_S + S3_GET_S))


def test_app_grows_with_its_input_and_depends_on_storage():
    small = seconds({"kind": "app", "shape": "sort", "input_size": 1_000_000})
    large = seconds({"kind": "app", "shape": "sort", "input_size": 100_000_000})
    assert large > 50 * small
    # the same compute, different input and output paths
    compute = 64 * MIB / E.APP_VIDEO_BPS / E.cpu_share("lambda", 128)
    times = {st: seconds({"kind": "app", "shape": "video", "storage": st})
             for st in ("object", "kv", "sharedfs", "tmp")}
    assert all(t > compute for t in times.values()) and len(set(times.values())) == 4
    # the shape's default sizes (the request schema's)
    assert E.app_sizes({"shape": "sort"}) == (16_000_000, 16_000_000)
    assert E.app_sizes({"shape": "video"}) == (64 * MIB, 64 * 1024)
    assert E.app_sizes({"shape": "inference", "input_size": 8192}) == (8192, 4096)


def test_app_default_sizes_are_the_schemas():
    text = workload_def("app")["properties"]["input_size"]["description"]
    assert "video 64 MiB" in text and "sort 16,000,000" in text and "inference 4 MiB" in text
    assert workload_def("app")["properties"]["layers"]["default"] == E.APP_DEFAULT_LAYERS


def test_plan_estimate_covers_storage_kinds():
    p = plan_of({"kind": "object", "op": "put", "object_size": 1024, "count": 100}, reps=2)
    est = estimate(p)
    per = est["per_invocation_seconds"][p.cells[0].key]
    assert per == pytest.approx(E.OVERHEAD_S["cloud"] + 100 * S3_PUT_S + 100 * 1024 / NET_PEAK_BPS,
                                rel=1e-4)


# --------------------------------------------------------------------------- refusals
def test_limits_agree_with_the_request_schema():
    assert workload_def("object")["properties"]["object_size"]["maximum"] == S3_MAX_OBJECT
    assert workload_def("kv")["properties"]["item_size"]["maximum"] == DYNAMODB_MAX_ITEM
    assert workload_def("transfer")["properties"]["payload_size"]["maximum"] == STORED_MAX_PAYLOAD
    assert "inline at most 6225920" in workload_def("transfer")["properties"]["payload_size"]["description"]
    assert INLINE_MAX_PAYLOAD == 6225920


LAMBDA = {"memory_mb": 128, "ephemeral_mb": 512, "profile": "lambda"}
GCF = {"memory_mb": 256, "ephemeral_mb": 512, "profile": "gcf"}


def test_cell_limit_tmp_on_disk_is_the_ephemeral_size():
    w = {"kind": "fileio", "op": "write", "io_size": 4096}
    assert cell_limit(LAMBDA, {**w, "file_size": 512 * MIB}, "local") is None
    why, rule = cell_limit(LAMBDA, {**w, "file_size": 512 * MIB + 1}, "local")
    assert "ephemeral_mb 512" in why and rule == "file_size <= ephemeral"
    # on AWS itself too, sizes as the spec writes them
    assert cell_limit({"memory_mb": 128, "ephemeral_mb": 1024}, {**w, "file_size": "1GB"}, "aws") is None
    assert cell_limit({"memory_mb": 128, "ephemeral_mb": 512}, {**w, "file_size": "1GB"}, "aws")
    # the unlimited profile's /tmp is a directory without a limit; http is unknown
    assert cell_limit({**LAMBDA, "profile": "unlimited"}, {**w, "file_size": "10GB"}, "local") is None
    assert cell_limit({"memory_mb": 128}, {**w, "file_size": "10GB"}, "http") is None


def test_cell_limit_tmp_in_memory_keeps_a_reserve_for_the_agent():
    room = 256 * MIB - TMPFS_RESERVE
    w = {"kind": "fileio", "op": "read", "io_size": 4096}
    assert cell_limit(GCF, {**w, "file_size": room - 4096}, "local") is None
    why, rule = cell_limit(GCF, {**w, "file_size": room - 4095}, "local")
    assert "memory_mb 256" in why and "32 MiB" in why
    assert rule == "file_size + io_size <= memory - 32MiB"
    # GCF / Cloud Run itself
    assert cell_limit({"memory_mb": 256}, {**w, "file_size": room}, "gcp")
    # with profile as a factor, the rule names the profile
    assert cell_limit(GCF, {**w, "file_size": room}, "local", by_profile=True)[1].startswith(
        "profile != 'gcf' or ")


@pytest.mark.parametrize("wl,rule", [
    ({"kind": "object", "op": "put", "object_size": S3_MAX_OBJECT + 1}, "object_size <= 5GiB"),
    ({"kind": "kv", "op": "put", "item_size": "401KiB"}, "item_size <= 400KiB"),
    ({"kind": "transfer", "payload_size": INLINE_MAX_PAYLOAD + 1},
     "via != 'inline' or payload_size <= 6080KiB"),
    ({"kind": "transfer", "via": "kv", "payload_size": "500KiB"}, "via != 'kv' or payload_size <= 400KiB"),
    ({"kind": "transfer", "via": "object", "payload_size": "2GiB"}, "via != 'object' or payload_size <= 1GiB"),
    ({"kind": "app", "shape": "video", "storage": "kv", "backend": "dynamodb", "input_size": "1MiB"},
     "storage != 'kv' or input_size <= 400KiB"),
])
def test_cell_limit_storage_limits(wl, rule):
    assert cell_limit(LAMBDA, wl, "local")[1] == rule


@pytest.mark.parametrize("wl", [
    {"kind": "object", "op": "put", "object_size": S3_MAX_OBJECT},
    {"kind": "kv", "op": "put", "item_size": DYNAMODB_MAX_ITEM},
    {"kind": "transfer", "payload_size": INLINE_MAX_PAYLOAD},
    {"kind": "transfer", "via": "object", "payload_size": INLINE_MAX_PAYLOAD + 1},
    {"kind": "app", "shape": "video", "storage": "kv", "input_size": "1MiB"},  # redis holds it
    {"kind": "sharedfs", "op": "write", "file_size": "10GB", "io_size": 4096},  # not on /tmp
])
def test_cell_limit_passes_what_can_work(wl):
    assert cell_limit(LAMBDA, wl, "local") is None


def spec(factors, rules=(), function=None):
    return parse_spec({
        "name": "r", "provider": {"kind": "local"}, "function": function or {},
        "workload": {"kind": "fileio", "op": "write", "io_size": 4096},
        "factors": factors, "design": {"replications": 1, "seed": 1, "rules": list(rules)}})


def test_plan_refuses_a_file_larger_than_tmp_naming_levels_limit_and_rule():
    s = spec({"file_size": ["100MB", "1GB"], "memory": [128, 2048]})
    with pytest.raises(BadInput) as e:
        build_plan(s)
    msg = str(e.value.message)
    assert e.value.field == "design.rules"
    assert "2 cells cannot run" in msg
    assert "file_size=1GB, memory=128 MB" in msg and "file_size=1GB, memory=2048 MB" in msg
    assert "ephemeral_mb 512 = 536,870,912 B" in msg
    assert "'file_size <= ephemeral'" in msg


def test_a_rule_that_excludes_them_makes_the_plan():
    s = spec({"file_size": ["100MB", "1GB"], "memory": [128, 2048]}, rules=["file_size <= ephemeral"])
    p = build_plan(s)
    assert len(p.cells) == 2 and [e.rule for e in p.excluded] == ["file_size <= ephemeral"] * 2


def test_plan_refuses_on_the_gcf_profile_what_does_not_fit_memory():
    s = spec({"profile": ["lambda", "gcf"], "file_size": ["100MB", "300MB"]},
             function={"memory_mb": 256})
    with pytest.raises(BadInput) as e:
        build_plan(s)
    msg = str(e.value.message)
    assert "1 cell cannot run" in msg and "profile=gcf, file_size=300MB" in msg
    assert "profile != 'gcf' or file_size + io_size <= memory - 32MiB" in msg
    ok = spec({"profile": ["lambda", "gcf"], "file_size": ["100MB", "300MB"]},
              rules=["profile != 'gcf' or file_size + io_size <= memory - 32MiB"],
              function={"memory_mb": 256})
    assert len(build_plan(ok).cells) == 3


def test_the_thesis_design_is_not_refused():
    r = CliRunner().invoke(cli, ["plan", "examples/thesis-local-fileio.yaml", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.output)["cells"]) == 16


def test_plan_command_exits_2_with_the_refusal(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("name: s\nprovider: {kind: local}\nworkload: {kind: fileio, op: write, "
                 "file_size: 1GB, io_size: 1048576}\ndesign: {replications: 1}\n")
    r = CliRunner().invoke(cli, ["plan", str(f)])
    assert r.exit_code == 2
    assert "cannot run" in r.output and "file_size <= ephemeral" in r.output


def test_plan_refuses_a_transfer_payload_above_the_inline_limit(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text("name: t\nprovider: {kind: local}\nworkload: {kind: transfer, chain_length: 2}\n"
                 "factors: {via: [inline, object], payload_size: [1KiB, 7MiB]}\n"
                 "design: {replications: 1}\n")
    r = CliRunner().invoke(cli, ["plan", str(f)])
    assert r.exit_code == 2, r.output
    assert "via=inline, payload_size=7MiB" in r.output and "6,225,920 B" in r.output
    assert "via=object" not in r.output


def test_plan_of_a_storage_spec_estimates_its_requests(tmp_path):
    f = tmp_path / "o.yaml"
    f.write_text("name: o\nprovider: {kind: local}\nfunction: {profile: unlimited}\n"
                 "workload: {kind: object, op: put, object_size: 1KiB, count: 10}\n"
                 "design: {replications: 1, seed: 1}\n")
    r = CliRunner().invoke(cli, ["plan", str(f), "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    per = d["estimate"]["per_invocation_seconds"][d["cells"][0]["key"]]
    assert per == pytest.approx(E.OVERHEAD_S["local"] + 10 * E.LOCAL_OBJECT_PUT_S
                                + 10 * 1024 / E.LOCAL_STORAGE_BPS, rel=1e-4)
    assert math.isclose(d["cost_estimate"]["storage"]["aws_s3"]["put_requests"], 10)


def test_plan_warns_of_cells_promised_more_cpu_than_the_host_has(tmp_path, monkeypatch):
    """Issue #29: a 10,240 MB function got a 5.8-vCPU quota on a 2-CPU host, and a burst's
    members together are promised their sum; `plan` says so before the campaign asks for it."""
    monkeypatch.setattr(E, "HOST_CPUS", 2)
    f = tmp_path / "big.yaml"
    f.write_text("name: big\nprovider: {kind: local}\nfunction: {profile: lambda}\n"
                 "workload: {kind: spin, iterations: 1000}\n"
                 "load: {pause: 0s}\n"
                 "factors: {memory: [512, 1024, 10240], burst_size: [1, 8]}\n"
                 "design: {replications: 1, seed: 1}\n")
    r = CliRunner().invoke(cli, ["plan", str(f), "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    levels = {c["key"]: (c["levels"]["memory"], c["levels"]["burst_size"]) for c in d["cells"]}
    flagged = {levels[o["cell"]]: o for o in d["cpu_oversubscribed"]}
    # 1769 MB a vCPU: 512 MB x 8 = 2.3, 1024 x 8 = 4.6, 10240 alone 5.79, x 8 = 46.3; not 512 or 1024 alone
    assert set(flagged) == {(512, 8), (1024, 8), (10240, 1), (10240, 8)}
    assert flagged[(10240, 1)]["promised_vcpu"] == pytest.approx(10240 / 1769, abs=1e-3)
    assert flagged[(512, 8)]["promised_vcpu"] == pytest.approx(8 * 512 / 1769, abs=1e-3)
    table = CliRunner().invoke(cli, ["plan", str(f)])
    assert table.exit_code == 0 and "4 cell(s) promise their instances more CPU than this machine has" in table.output
