"""A user's own function's package in a campaign, with the in-process fake provider
(tests/driver/driver_fakes.py): its digest is recorded when it is deployed, a resumed or topped-up
campaign with the same package goes on, and one whose package was edited in between is refused
(exit 2, naming function.code.path) before anything is deployed or invoked."""
from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest
import yaml

from driver_fakes import InProcessFakeProvider
from faascope.driver.runner import run_campaign
from faascope.errors import BadInput
from faascope.providers.packaging import user_package


def spec(tmp_path):
    fn = tmp_path / "fn"
    fn.mkdir()
    (fn / "app.py").write_text("def handler(event, context):\n    return event\n")
    f = tmp_path / "spec.yaml"
    f.write_text(yaml.safe_dump({
        "name": "mine", "provider": {"kind": "local"},
        "function": {"code": {"path": "fn", "runtime": "python3.12", "handler": "app.handler"}},
        "workload": {"kind": "invoke", "payload": {"n": 1}},
        "factors": {"memory": [128, 256]}, "design": {"replications": 1, "seed": 3}}))
    return f, fn


def fake(_):
    return InProcessFakeProvider(delay_s=0.0005)


def deployed_digests(db):
    with sqlite3.connect(db) as c:
        return [json.loads(d).get("code_sha256") for (d,) in
                c.execute("SELECT detail_json FROM events WHERE kind = 'deployed'")]


def test_an_edited_package_is_refused_on_resume_and_the_same_one_goes_on(tmp_path):
    f, fn = spec(tmp_path)
    db = tmp_path / "r.db"
    s = run_campaign(f, db, provider_factory=fake, progress=False)
    assert s.recorded == 2
    sha = hashlib.sha256(user_package(fn)).hexdigest()
    assert deployed_digests(db) == [sha, sha]
    with sqlite3.connect(db) as c:
        returned = [json.loads(r)["returned"] for (r,) in c.execute("SELECT response_json FROM invocations")]
    assert returned == [{"echo": {"n": 1}}] * 2   # the fake echoes the event, stored whole

    s = run_campaign(f, db, provider_factory=fake, progress=False, add_replications=1)
    assert s.recorded == 4   # same package: topped up

    (fn / "app.py").write_text("def handler(event, context):\n    return 2\n")
    with pytest.raises(BadInput) as e:
        run_campaign(f, db, provider_factory=fake, progress=False, add_replications=1)
    assert e.value.field == "function.code.path" and "changed since" in str(e.value)
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT count(*) FROM invocations").fetchone() == (4,)
