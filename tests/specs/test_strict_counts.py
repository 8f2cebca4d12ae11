"""The design's counts are whole numbers as written: ``replications: true`` was read as 1 and
``replications: "3"`` as 3 (pydantic's lax int), so a typo ran a campaign of another size
(issue #29). Each is refused with exit 2 naming the field; plain integers still read."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from faascope.cli import cli
from faascope.specs.loader import parse_spec

BASE = {"name": "t", "provider": {"kind": "local"}, "function": {"memory_mb": 128},
        "workload": {"kind": "noop"}, "design": {"replications": 2}}

LOAD = {"burst_size": 4}

#: (field, the value as a plain integer that must still read)
COUNTS = [
    ("design.replications", 2),
    ("design.seed", 2),
    ("design.warmup", 2),
    ("design.blocking.blocks", 2),
    ("design.schedule.slots", 2),
    ("load.burst_size", 2),
    ("load.functions", 2),
    ("load.stagger.batch_size", 2),
    ("load.arrival.seed", 2),
    ("load.error_budget.min_failed", 2),
    ("load.warm_pool", 2),
    ("load.preconnect", 2),
]


def with_(field: str, value) -> dict:
    spec = copy.deepcopy(BASE)
    cur = spec
    parts = field.split(".")
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = value
    return spec


def plan_exit(tmp_path: Path, spec) -> tuple[int, str]:
    f = tmp_path / "spec.yaml"
    f.write_text(spec if isinstance(spec, str) else yaml.safe_dump(spec))
    r = CliRunner().invoke(cli, ["plan", str(f)])
    return r.exit_code, r.output


def _spec(field: str, value):
    spec = with_(field, value)
    if field.startswith("load."):
        spec["load"] = {**LOAD, **spec.get("load", {})}
        if field.startswith("load.stagger."):
            spec["load"]["stagger"].setdefault("delay", "1s")
    if field == "design.blocking.blocks":
        spec["design"]["blocking"]["interval"] = "1m"
    if field == "design.schedule.slots":
        spec["design"]["schedule"]["every"] = "1m"
    return spec


@pytest.mark.parametrize("field,ok", COUNTS)
@pytest.mark.parametrize("bad", [True, False, "3", "1", 3.0])
def test_a_count_that_is_not_a_whole_number_is_exit_2(tmp_path, field, ok, bad):
    code, out = plan_exit(tmp_path, _spec(field, bad))
    assert code == 2, out
    assert field in out, out
    assert "Traceback" not in out
    assert "whole number" in out, out


@pytest.mark.parametrize("field,ok", COUNTS)
def test_a_plain_integer_still_reads(field, ok):
    loaded = parse_spec(_spec(field, ok))
    node = loaded.spec
    for part in field.split("."):
        node = getattr(node, part)
    assert node == ok and type(node) is int


def test_the_message_says_what_to_write(tmp_path):
    code, out = plan_exit(tmp_path, with_("design.replications", "3"))
    assert code == 2
    assert "design.replications" in out and "without quotes" in out and "'3'" in out
    code, out = plan_exit(tmp_path, "name: t\nprovider: {kind: local}\nfunction: {memory_mb: 128}\n"
                                    "workload: {kind: noop}\ndesign: {replications: true}\n")
    assert code == 2 and "design.replications" in out and "true/false" in out, out
    assert BASE["design"]["replications"] == 2  # the shared base was not changed
