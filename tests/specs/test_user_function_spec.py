"""A user's own function as a spec (function.code with workload kind invoke, docs/user-functions.md):
what is accepted, how it is planned, and each mistake refused with exit 2 naming the field."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from faascope.cli import cli
from faascope.designs.plan import build_plan
from faascope.errors import BadInput
from faascope.providers.base import FunctionConfig
from faascope.specs.loader import load_spec
from faascope.tune.spec_path import tuning_spec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "user-function-local.yaml"


def write_spec(tmp_path: Path, **changes) -> Path:
    (tmp_path / "fn").mkdir(exist_ok=True)
    (tmp_path / "fn" / "app.py").write_text("def handler(event, context):\n    return event\n")
    spec = {"name": "mine", "provider": {"kind": "local"},
            "function": {"memory_mb": 128, "code": {"path": "fn", "runtime": "python3.12",
                                                    "handler": "app.handler"}},
            "workload": {"kind": "invoke", "payload": {"n": 1}},
            "factors": {"memory": [128, 512],
                        "payload": [{"n": 1}, {"n": 2, "deep": {"a": [1, 2]}}]},
            "design": {"replications": 2, "seed": 1}}
    for path, value in changes.items():
        cur = spec
        *head, last = path.split("__")
        for p in head:
            cur = cur.setdefault(p, {})
        if value is None:
            cur.pop(last, None)
        else:
            cur[last] = value
    f = tmp_path / "spec.yaml"
    f.write_text(yaml.safe_dump(spec))
    return f


def refused(spec: Path) -> BadInput:
    with pytest.raises(BadInput) as e:
        build_plan(load_spec(spec))
    r = CliRunner().invoke(cli, ["plan", str(spec)])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    return e.value


def test_plans_cells_with_the_payloads_as_levels_and_the_package_named_absolutely(tmp_path):
    plan = build_plan(load_spec(write_spec(tmp_path)))
    assert len(plan.cells) == 4 and plan.invocations == 8
    payloads = [c.payload for c in plan.cells]
    # the event is sent as it is: no agent envelope ({"workload": ...}) around it
    assert {json.dumps(p, sort_keys=True) for p in payloads} == {
        '{"n": 1}', '{"deep": {"a": [1, 2]}, "n": 2}'}
    cfg = FunctionConfig.from_dict(plan.cells[0].config)
    assert cfg.user_code and cfg.code == str((tmp_path / "fn").resolve())
    assert (cfg.runtime, cfg.handler) == ("python3.12", "app.handler")
    # user functions and the agent never share a function (names hash the identity)
    agent = FunctionConfig(memory_mb=cfg.memory_mb, profile=cfg.profile)
    assert cfg.identity() != agent.identity()
    assert cfg.identity("shared") != agent.identity("shared")


def test_the_example_plans_as_it_is():
    r = CliRunner().invoke(cli, ["plan", str(EXAMPLE), "--format", "json"])
    assert r.exit_code == 0, r.output
    cells = json.loads(r.output)["cells"]
    assert [c["levels"]["memory"] for c in cells] == [128, 1024]
    assert all(c["workload"] == {"kind": "invoke"} for c in cells)


@pytest.mark.parametrize("changes, field, words", [
    ({"workload": {"kind": "noop"}}, "workload.kind", "invoke"),
    ({"function__code": None}, "workload.kind", "function.code"),
    ({"function__code__path": "nowhere"}, "function.code.path", "no such directory"),
    ({"function__code__handler": None}, "function.code.handler", "required"),
    ({"function__code__environment": {"1BAD": "x"}}, "function.code.environment", "not a valid"),
    ({"function__code__uses": ["ftp"]}, "function.code.uses", "s3"),
    ({"function__image_size": "10MB"}, "function.image_size", "package"),
    ({"load": {"burst_size": 2, "member_index": "payload"}}, "load.member_index", "{index}"),
    ({"provider": {"kind": "http", "settings": {"endpoints": ["http://127.0.0.1:1/"]}}},
     "provider.kind", "Lambda API"),
    ({"factors__payload": [{"n": 1}, {"n": 1}]}, "factors.payload[1]", "repeats"),
    ({"factors__kind": ["invoke", "noop"]}, "factors.kind", "payload"),
])
def test_mistakes_are_refused_naming_the_field(tmp_path, changes, field, words):
    err = refused(write_spec(tmp_path, **changes))
    text = str(err)
    assert field in text and words in text, text


def test_bursts_of_a_user_function_plan_with_index_in_the_event(tmp_path):
    plan = build_plan(load_spec(write_spec(tmp_path, load={"burst_size": 3},
                                           workload={"kind": "invoke", "payload": {"k": "{index}"}},
                                           factors__payload=None)))
    assert [c.burst_invocations for c in plan.cells] == [3, 3]


def test_a_zip_is_taken_and_a_file_that_is_not_one_refused(tmp_path):
    import zipfile
    z = tmp_path / "fn.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("app.py", "def handler(e, c):\n    return 1\n")
    build_plan(load_spec(write_spec(tmp_path, function__code__path="fn.zip")))
    (tmp_path / "not.zip").write_text("text")
    assert "not a zip" in str(refused(write_spec(tmp_path, function__code__path="not.zip")))


def test_tune_derived_spec_names_the_package_absolutely(tmp_path):
    spec = write_spec(tmp_path, factors__payload=None)
    derived = yaml.safe_load(tuning_spec(spec, [128, 1024], None))
    assert derived["function"]["code"]["path"] == str((tmp_path / "fn").resolve())
    # and it loads from anywhere (tune writes it beside the results)
    elsewhere = tmp_path / "results" / "d.yaml"
    elsewhere.parent.mkdir()
    elsewhere.write_text(yaml.safe_dump(derived))
    assert [c.levels["memory"] for c in build_plan(load_spec(elsewhere)).cells] == [128, 1024]
