"""Storage charges in a plan's cost estimate, computed here by hand from the price tables.

The plans are one-cell plans of a noop spec whose cell payload is replaced by a storage
workload, so the charges are tested whichever kinds the spec layer accepts; the last test goes
through a spec of kind object and needs the spec layer to accept every kind (issue #13).
"""
from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.cost import dynamodb_units, load_table
from faascope.designs.cost import estimate_plan_cost, storage_line, storage_usage
from faascope.designs.plan import build_plan
from faascope.specs.loader import parse_spec

ROLE = "arn:aws:iam::123456789012:role/faascope"
SETTINGS = {"aws": {"role": ROLE}, "gcp": {"project": "faascope-test"}, "local": {}}
S3 = load_table("aws_s3")
GCS = load_table("gcp_storage")
DDB = load_table("aws_dynamodb")
EFS = load_table("aws_efs")


def cost_of(workload: dict, provider: str = "aws", reps: int = 3, function: dict | None = None):
    s = parse_spec({"name": "c", "provider": {"kind": provider, "settings": SETTINGS[provider]},
                    "function": function or {}, "workload": {"kind": "noop"},
                    "design": {"replications": reps, "seed": 1}})
    p = build_plan(s)
    for c in p.cells:
        c.payload = {"workload": dict(workload)}
    return estimate_plan_cost(p, s.spec.provider.parsed_settings())


def test_object_puts_by_hand():
    # 10 PUTs of 1 KiB objects per invocation x 3 replications = 30 PUTs
    c = cost_of({"kind": "object", "op": "put", "object_size": 1024, "count": 10})
    expected = 30 / 1000 * S3["put_per_1000"]  # 30 / 1000 x $0.005 = $0.00015
    assert expected == pytest.approx(0.00015)
    s3 = c["storage"]["aws_s3"]
    assert (s3["put_requests"], s3["get_requests"]) == (30, 0)
    assert s3["total"] == pytest.approx(expected)
    assert c["storage_total"] == pytest.approx(expected)
    row = c["per_cell"][0]
    assert row["storage_per_invocation"] == {"object_puts": 10}
    assert row["storage_total"] == pytest.approx(expected)
    assert row["total"] == pytest.approx(row["function_total"] + expected)
    assert c["total"] == pytest.approx(c["function_total"] + c["storage_total"])
    assert "aws_s3" in {t["table"] for t in c["tables"]}


def test_object_gets_prepare_their_objects():
    # a get PUTs its objects first (prepare) and deletes them (free): 10 PUT + 10 GET each
    c = cost_of({"kind": "object", "op": "get", "object_size": 1024, "count": 10})
    s3 = c["storage"]["aws_s3"]
    assert (s3["put_requests"], s3["get_requests"]) == (30, 30)
    assert s3["total"] == pytest.approx(30 / 1000 * S3["put_per_1000"] + 30 / 1000 * S3["get_per_1000"])
    # without preparation only the GETs
    c = cost_of({"kind": "object", "op": "get", "object_size": 1024, "count": 10, "prepare": False})
    assert c["storage"]["aws_s3"]["put_requests"] == 0


def test_object_on_gcp_is_gcs_class_a_and_b():
    c = cost_of({"kind": "object", "op": "get", "object_size": 1024, "count": 10}, "gcp")
    g = c["storage"]["gcp_storage"]
    assert (g["class_a_requests"], g["class_b_requests"]) == (30, 30)
    assert g["total"] == pytest.approx(0.03 * GCS["class_a_per_1000"] + 0.03 * GCS["class_b_per_1000"])
    assert "aws_s3" not in c["storage"]


def test_kv_dynamodb_puts_by_hand():
    # item = value + key + attribute names: 1000 + len("faascope:0:9") + len("pk") + len("v")
    # = 1015 B <= 1 KB (1,024 B) -> 1 WRU per put; 10 puts x 3 replications = 30 WRU
    w = {"kind": "kv", "backend": "dynamodb", "op": "put", "item_size": 1000, "count": 10}
    c = cost_of(w)
    d = c["storage"]["aws_dynamodb"]
    assert (d["write_request_units"], d["read_request_units"]) == (30, 0)
    assert d["total"] == pytest.approx(30 / 1e6 * DDB["write_request_units_per_million"])  # $0.00001875
    # a 1 KiB value is 1,039 B with its key and names: 2 WRU per put
    c = cost_of({**w, "item_size": 1024})
    assert c["storage"]["aws_dynamodb"]["write_request_units"] == 60


def test_kv_dynamodb_gets_by_hand():
    # 5000 B values -> 5015 B items: a put or delete is ceil(5015/1024) = 5 WRU, a strongly
    # consistent get ceil(5015/4096) = 2 RRU (eventually consistent: half)
    w = {"kind": "kv", "backend": "dynamodb", "op": "get", "item_size": 5000, "count": 10,
         "consistent_read": True}
    c = cost_of(w, reps=2)
    d = c["storage"]["aws_dynamodb"]
    # per invocation: 10 prepared puts + 10 deletes (drop) = 100 WRU, 10 gets = 20 RRU
    assert (d["write_request_units"], d["read_request_units"]) == (200, 40)
    assert d["total"] == pytest.approx(200 / 1e6 * DDB["write_request_units_per_million"]
                                       + 40 / 1e6 * DDB["read_request_units_per_million"])
    c = cost_of({**w, "consistent_read": False}, reps=2)
    assert c["storage"]["aws_dynamodb"]["read_request_units"] == 20


def test_dynamodb_units_follow_the_table():
    assert dynamodb_units(0, read=False) == 1
    assert dynamodb_units(1024, read=False) == 1 and dynamodb_units(1025, read=False) == 2
    assert dynamodb_units(4096, read=True, consistent=True) == 1
    assert dynamodb_units(4097, read=True) == 2 * DDB["eventually_consistent_read_units"]


def test_redis_costs_no_requests_and_says_so():
    c = cost_of({"kind": "kv", "backend": "redis", "op": "put", "item_size": 1000, "count": 10})
    assert c["storage"] == {} and c["storage_total"] == 0
    assert c["per_cell"][0]["storage_per_invocation"] == {"redis_requests": 10}
    assert any("Redis" in n for n in c["notes"])


def test_sharedfs_on_aws_is_efs_bytes():
    # a prepared read: the file is written (prepare) and read, 10 MB each, x 3
    c = cost_of({"kind": "sharedfs", "op": "read", "file_size": 10_000_000, "io_size": 1_000_000})
    e = c["storage"]["aws_efs"]
    assert (e["bytes_read"], e["bytes_written"]) == (30_000_000, 30_000_000)
    assert e["total"] == pytest.approx(0.03 * EFS["elastic_read_gb"] + 0.03 * EFS["elastic_write_gb"])
    # GCP has no per-use price for a shared file system
    c = cost_of({"kind": "sharedfs", "op": "read", "file_size": 10_000_000, "io_size": 1_000_000}, "gcp")
    assert c["storage"] == {} and any("Filestore" in n for n in c["notes"])


def test_transfer_bills_every_hop_and_its_storage():
    w = {"kind": "transfer", "via": "object", "chain_length": 3, "payload_size": 1024}
    c = cost_of(w)
    row = c["per_cell"][0]
    assert row["function_invocations"] == 9 and row["invocations"] == 3
    s3 = c["storage"]["aws_s3"]
    assert (s3["put_requests"], s3["get_requests"]) == (6, 6)  # 2 links x 3
    # three Lambda requests per chain
    lam = load_table("aws_lambda")
    assert row["function_total"] > 9 * lam["requests_per_million"] / 1e6
    inline = cost_of({**w, "via": "inline"})
    assert inline["storage"] == {}


def test_app_storage_usage():
    u = storage_usage({"kind": "app", "shape": "sort", "storage": "object"})
    assert u == {"object_puts": 2, "object_gets": 1}  # prepare input, write output; read input
    u = storage_usage({"kind": "app", "shape": "sort", "storage": "sharedfs", "input_size": 1000})
    assert u == {"sharedfs_bytes_read": 1000, "sharedfs_bytes_written": 2000}
    u = storage_usage({"kind": "app", "shape": "video", "storage": "kv", "backend": "dynamodb",
                       "input_size": 4096, "output_size": 1000})
    # input item 4096 + key + names -> 5 WRU to put and to delete, 2 RRU (eventually: 1) to read;
    # output item 1000 + key + names (> 1024) -> 2 WRU to put and to delete
    assert u == {"dynamodb_write_units": 5 + 5 + 2 + 2, "dynamodb_read_units": 1.0}
    assert storage_usage({"kind": "app", "shape": "video", "storage": "tmp"}) == {}


def test_local_cells_are_priced_as_the_cloud_their_profile_imitates():
    w = {"kind": "object", "op": "put", "object_size": 1024, "count": 10}
    lam = cost_of(w, "local", function={"profile": "lambda"})
    gcf = cost_of(w, "local", function={"profile": "gcf"})
    assert set(lam["storage"]) == {"aws_s3"} and set(gcf["storage"]) == {"gcp_storage"}
    # as_if prices the storage of each cloud too
    assert lam["as_if"]["aws_lambda"]["total"] == pytest.approx(lam["total"])
    assert gcf["as_if"]["gcf"]["total"] == pytest.approx(gcf["total"])


def test_storage_line_for_the_table_format():
    c = cost_of({"kind": "object", "op": "get", "object_size": 1024, "count": 10})
    line = storage_line(c)
    assert "storage" in line and "S3" in line and "30 PUT" in line and "30 GET" in line
    assert storage_line(cost_of({"kind": "noop"})) is None


def test_plan_json_and_table_of_an_object_spec(tmp_path):
    f = tmp_path / "o.yaml"
    f.write_text(f"""
name: o
provider: {{kind: aws, settings: {{role: '{ROLE}'}}}}
workload: {{kind: object, op: put, object_size: 1KiB, count: 10}}
design: {{replications: 3, seed: 1}}
""")
    r = CliRunner().invoke(cli, ["plan", str(f), "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert {"cells", "excluded", "invocations"} <= set(d) and d["invocations"] == 3
    c = d["cost_estimate"]
    assert math.isclose(c["storage"]["aws_s3"]["total"], 30 / 1000 * S3["put_per_1000"])
    assert c["total"] == pytest.approx(c["function_total"] + c["storage_total"])
    r = CliRunner().invoke(cli, ["plan", str(f)])
    assert r.exit_code == 0 and "of which storage" in r.output and "30 PUT" in r.output
