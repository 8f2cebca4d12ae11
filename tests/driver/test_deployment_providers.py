"""A campaign over several deployments hands every call to its deployment's provider, records the
deployment of each invocation, and resumes (its teardown too) after an interruption — with
in-process fake providers standing in for each deployment's platform."""
from __future__ import annotations

import sqlite3

import pytest

from driver_fakes import InProcessFakeProvider
from faascope.driver.runner import run_campaign
from faascope.errors import Failure
from faascope.providers.deployments import DeploymentProviders

SPEC = """
name: multi
provider: {kind: local}
deployments:
  lam: {function: {profile: lambda}}
  gcf: {function: {profile: gcf}}
  web: {kind: http, settings: {endpoints: ["http://127.0.0.1:9/"]}}
workload: {kind: spin, iterations: 1000}
factors:
  deployment: [lam, gcf, web]
  memory: [128, 256]
design: {replications: 3, seed: 7}
"""


class StopsAfter(InProcessFakeProvider):
    """Asks the campaign to stop (as a Ctrl-C would) at its n-th invocation."""

    def __init__(self, n: int):
        super().__init__()
        self.n = n

    def invoke(self, name, payload):
        if self.invocations + 1 == self.n:
            raise KeyboardInterrupt
        return super().invoke(name, payload)


def _rows(db):
    with sqlite3.connect(db) as c:
        return c.execute("SELECT deployment, function_name FROM invocations").fetchall()


def test_each_call_goes_to_its_deployments_provider_with_in_process_fake_providers(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    local, web = InProcessFakeProvider(), InProcessFakeProvider()
    factory = lambda _: DeploymentProviders({"lam": local, "gcf": local, "web": web})  # noqa: E731
    s = run_campaign(spec, tmp_path / "r.db", provider_factory=factory, progress=False)
    assert s.complete and s.recorded == 18
    rows = _rows(tmp_path / "r.db")
    by_dep = {}
    for dep, fn in rows:
        by_dep.setdefault(dep, set()).add(fn)
    invoked_local = {n for op, n in local.calls if op == "invoke"}
    invoked_web = {n for op, n in web.calls if op == "invoke"}
    assert invoked_web == by_dep["web"] and invoked_local == by_dep["lam"] | by_dep["gcf"]
    assert not invoked_web & invoked_local
    # torn down by the provider that deployed them, and nothing is left
    assert {n for op, n in web.calls if op == "teardown"} == by_dep["web"]
    assert {n for op, n in local.calls if op == "teardown"} == by_dep["lam"] | by_dep["gcf"]
    assert not local.functions and not web.functions


def test_a_resumed_campaign_runs_the_rest_and_deletes_the_first_runs_functions_with_in_process_fake_providers(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC)
    db = tmp_path / "r.db"
    first_local, first_web = StopsAfter(4), InProcessFakeProvider()
    with pytest.raises(Failure, match="interrupted"):
        run_campaign(spec, db, progress=False, provider_factory=lambda _: DeploymentProviders(
            {"lam": first_local, "gcf": first_local, "web": first_web}))
    done = len(_rows(db))
    assert 0 < done < 18
    local, web = InProcessFakeProvider(), InProcessFakeProvider()
    s = run_campaign(spec, db, resume=True, progress=False, provider_factory=lambda _: (
        DeploymentProviders({"lam": local, "gcf": local, "web": web})))
    assert s.complete and s.recorded == 18 and s.ran_now == 18 - done
    rows = _rows(db)
    with sqlite3.connect(db) as c:
        slots = c.execute("SELECT cell_key, replication FROM invocations").fetchall()
    assert len(set(slots)) == len(slots) == 18  # each slot once: nothing lost, nothing twice
    deployed_first = {n for op, n in first_local.calls + first_web.calls if op == "deploy"}
    torn_down = {n for op, n in local.calls + web.calls if op == "teardown"}
    assert deployed_first <= torn_down  # every function of the first run is deleted once
    web_functions = {fn for dep, fn in rows if dep == "web"}
    assert {n for op, n in web.calls if op == "teardown"} == web_functions
