"""Attempts recorded = requests sent, counted where they arrive (a loopback Lambda Invoke server,
tests/reliability/loopback_lambda.py), and a call that may have run is recorded as such.

botocore reads ``Config(retries={"max_attempts": N})`` as N *retries*: with the documented
default of 1 ("no retries") every throttled call was sent twice, and a call whose connection
dropped was sent again; when the platform had died meanwhile, the second attempt's "connection
refused" made the driver record nothing for a call that had run."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from loopback_lambda import LoopbackLambda
from faascope.driver.runner import run_campaign
from faascope.errors import Failure
from faascope.providers.lambda_api import LambdaAPIProvider

ROLE = "arn:aws:iam::123456789012:role/loopback"


def provider(url: str, max_attempts: int) -> LambdaAPIProvider:
    return LambdaAPIProvider(endpoint_url=url, role=ROLE, credentials=("x", "x"),
                             max_attempts=max_attempts, read_timeout_s=5, connect_timeout_s=2,
                             kind="local", log_tail=False)


@pytest.mark.parametrize("action", ["429", "drop"])
@pytest.mark.parametrize("max_attempts", [1, 3])
def test_the_server_sees_exactly_max_attempts_requests_per_invocation(action, max_attempts):
    srv = LoopbackLambda(default=action)
    p = provider(srv.url, max_attempts)
    try:
        for i in range(2):
            res = p.invoke("fn", {"workload": {"kind": "noop"}})
            assert res.status == "client_error"
            assert len(srv.requests) == max_attempts * (i + 1), srv.requests
            # what is recorded is what the server received
            assert res.attempts == max_attempts and res.retries == max_attempts - 1
        if action == "429":
            assert res.error_type == "TooManyRequestsException"
        else:
            assert res.error_type.startswith("MayHaveRun."), res.error_type
    finally:
        p.close()
        srv.stop()


def test_an_ok_reply_is_one_request_and_one_attempt():
    srv = LoopbackLambda()
    p = provider(srv.url, 1)
    try:
        res = p.invoke("fn", {"workload": {"kind": "noop"}})
        assert res.status == "ok" and res.attempts == 1 and srv.requests == ["ok"]
    finally:
        srv.stop()


def test_a_throttle_then_success_counts_both_attempts():
    srv = LoopbackLambda(script=["429"])
    p = provider(srv.url, 3)
    try:
        res = p.invoke("fn", {"workload": {"kind": "noop"}})
        assert res.status == "ok" and res.attempts == 2 and res.retries == 1
        assert srv.requests == ["429", "ok"]
    finally:
        srv.stop()


def test_a_connection_dropped_after_the_request_is_recorded_as_possibly_run():
    """The server reads the request, then closes the socket and stops listening (a platform
    dying with the call in flight): that call is recorded (client_error, MayHaveRun.*) and the
    run stops there (issue #29: behind a proxy every later call would be one too), with a
    may_have_run_stop event, saying how to resume and rerun it; nothing more is sent."""
    srv = LoopbackLambda(script=["ok", "ok", "die"])
    tmp = Path(__import__("tempfile").mkdtemp(prefix="faascope-loopback-"))
    spec = tmp / "spec.yaml"
    spec.write_text("""
name: loopback-die
provider: {kind: local}
workload: {kind: noop}
design: {replications: 6, seed: 1, randomize: false}
""")
    db = tmp / "r.db"

    class NoDeploy(LambdaAPIProvider):
        def deploy(self, name, config):
            pass

        def update_configuration(self, name, config):
            pass

        def teardown(self, name):
            pass

    def factory(loaded):
        return NoDeploy(endpoint_url=srv.url, role=ROLE, credentials=("x", "x"), max_attempts=1,
                        read_timeout_s=5, connect_timeout_s=2, kind="local", log_tail=False)

    try:
        with pytest.raises(Failure) as ei:
            run_campaign(spec, db, provider_factory=factory, progress=False)
    finally:
        srv.stop()
    assert "may have run" in ei.value.message and "--resume" in ei.value.message
    assert "--rerun-may-have-run" in ei.value.message
    assert srv.requests == ["ok", "ok", "die"]  # the dying call was sent once, not retried
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT status, error_type, attempts FROM invocations "
                         "ORDER BY order_index").fetchall()
        events = [json.loads(d) for k, d in c.execute(
            "SELECT kind, detail_json FROM events WHERE kind IN ('endpoint_unreachable', "
            "'may_have_run_stop')")]
        status = c.execute("SELECT status FROM campaign").fetchone()[0]
    assert rows[:2] == [("ok", None, 1), ("ok", None, 1)]
    assert len(rows) == 3, rows
    st, et, attempts = rows[2]
    assert st == "client_error" and et.startswith("MayHaveRun.") and attempts == 1, rows[2]
    assert et != "MayHaveRun.EndpointConnectionError"  # it was this attempt that was sent
    assert len(events) == 1 and events[0]["error_type"] == et
    assert status == "interrupted"
