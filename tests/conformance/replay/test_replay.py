"""The local platform held to real AWS's recorded answers (LocalStack's test_lambda_api snapshots):
one platform for the module, every recorded test replayed once (a few seconds), and the outcome
of each held to results.json, which docs/platform.md states (report.py --write regenerates both)."""
from __future__ import annotations

import json
import re

import pytest

# LocalStack's snapshot library needs Python 3.11 (pyproject installs it there only)
pytest.importorskip("localstack_snapshot", reason="localstack-snapshot needs Python >= 3.11")

from . import replay, report  # noqa: E402

@pytest.fixture(scope="module")
def platform_client():
    with report.platform() as make:
        client = make()
        yield client, make, replay.account_of(client)


@pytest.fixture(scope="module")
def results(platform_client):
    client, make, account = platform_client
    return replay.run_all(client, make, account, report.REGION)


def committed() -> dict:
    return json.loads(report.RESULTS.read_text())


# recorded tests per committed snapshot file (LocalStack's, at NOTICE's commit)
RECORDED = {"test_lambda_api": 239, "test_lambda_common": 121}


def test_every_recorded_test_is_counted(results):
    recorded = replay.recorded()
    by_file = {f: sum(1 for k in recorded if f"/{f}.py::" in k) for f in replay.FILES}
    assert by_file == RECORDED, "a committed snapshot file changed: regenerate with extract.py"
    assert set(results) == {k.split(".py::", 1)[1] for k in recorded}
    s = replay.summary(results)
    assert sum(s[o] for o in replay.OUTCOMES) == s["recorded"]
    per_file = replay.summary_by_file(results)
    assert {f: fs["recorded"] for f, fs in per_file.items()} == RECORDED
    for o in replay.OUTCOMES:
        assert sum(fs[o] for fs in per_file.values()) == s[o]


def test_common_cases_of_runtimes_not_offered_are_not_supported(results):
    """test_lambda_common's java/dotnet/ruby (and nodejs16.x/24.x) cases are "not supported", the
    runtime named; its offered runtimes' cases are replayed or say why not."""
    from . import extract
    for key, r in results.items():
        if replay.index()["tests"][key]["file"] != "test_lambda_common" or "endpoint_injection" in key:
            continue
        runtime = key.split("[", 1)[1][:-1]
        if runtime in extract.OFFERED_RUNTIMES:
            assert r["outcome"] != "not supported", key
        else:
            assert r["outcome"] == "not supported" and runtime in r["why"], key


def test_outcomes_are_the_documented_ones(results):
    """A recorded test that passed and now differs is a regression; one that now passes while
    results.json says it differs means the docs understate the platform: regenerate them."""
    was = committed()
    changed = {k: (was.get(k, {}).get("outcome"), r["outcome"]) for k, r in results.items()
               if was.get(k, {}).get("outcome") != r["outcome"]}
    assert not changed, ("outcomes (documented, now) changed; if intended run "
                         "`python3 -m tests.conformance.replay.report --write`:\n"
                         + "\n".join(f"{k}: {a} -> {b}" for k, (a, b) in sorted(changed.items())))


def test_pass_rate_is_not_below_the_documented_one(results):
    text = report.DOC.read_text()
    m = re.search(r"Pass rate: (\d+)/(\d+) of all recorded tests, (\d+)/(\d+) of those needing only Lambda",
                  report.doc_section(text))
    assert m, "docs/platform.md lost the replay's pass rate"
    documented_pass, recorded_n, _, lambda_only_n = map(int, m.groups())
    s = replay.summary(results)
    assert (s["recorded"], s["lambda_only"]) == (recorded_n, lambda_only_n)
    assert s["pass"] >= documented_pass, f"pass rate dropped: {s['pass']} < documented {documented_pass}"


def test_docs_section_is_generated_from_the_committed_results():
    text = report.DOC.read_text()
    assert report.doc_section(text) == report.render_doc(committed()), (
        "docs/platform.md's replay section and results.json drifted: "
        "`python3 -m tests.conformance.replay.report --write`")


def test_differ_catches_a_wrong_answer(platform_client):
    """The platform's real not-found answer matches AWS's recorded one once normalised (its
    request id and the random name do not count); the same answer with the wrong error code or
    status is caught, at the JSON path that differs."""
    client, _, account = platform_client
    scope = "TestLambdaFunction::test_ops_on_nonexisting_fn[get_function]"
    name = f"i-dont-exist-{replay.lsshim.short_uid()}"
    with pytest.raises(client.exceptions.ResourceNotFoundException) as e:
        client.get_function(FunctionName=name)
    answer = e.value.response
    name_rx = [replay.normalise.TransformerUtility.regex(name, "<nonexisting-fn-name>")]

    def diff(obj):
        return replay.compare(scope, {"not_found_exception": obj}, account_id=account,
                              region_name=report.REGION, extra_transformers=name_rx)

    assert diff(json.loads(json.dumps(answer))) == []
    wrong = json.loads(json.dumps(answer))
    wrong["Error"]["Code"] = "ValidationException"
    wrong["ResponseMetadata"]["HTTPStatusCode"] = 400
    paths = {d["path"]: (d["recorded"], d["local"]) for d in diff(wrong)}
    assert paths == {"not_found_exception.Error.Code": ("ResourceNotFoundException", "ValidationException"),
                     "not_found_exception.ResponseMetadata.HTTPStatusCode": (404, 400)}
    missing = json.loads(json.dumps(answer))
    del missing["Message"]
    assert [d["path"] for d in diff(missing)] == ["not_found_exception.Message"]


NOTE = ("The local platform runs python3.12 under Python 3.11 (/usr/bin/python3), not Python 3.12: "
        "this machine has no other.")


def test_only_the_stated_interpreter_note_is_counted_apart():
    """A StateReason AWS does not have, saying the interpreter note, is the stated deviation (AWS's
    recorded value kept beside the local one); any other difference stays a difference: the note
    in another field, another StateReason, the note where AWS recorded a reason, or a
    different note."""
    note = {"path": "get_function_response.Configuration.StateReason", "recorded": replay._ABSENT, "local": NOTE}
    rest, stated = replay.split_stated([note])
    assert rest == [] and stated == [{**note, "deviation": "interpreter note"}]
    node = {**note, "local": NOTE.replace("python3.12", "nodejs20.x").replace("Python", "Node.js")}
    assert replay.split_stated([node])[1] != []
    others = [
        {**note, "path": "get_function_response.Configuration.Description"},
        {**note, "local": "The function is being created."},
        {**note, "recorded": "The function is being created."},
        {**note, "local": NOTE.replace("not Python 3.12", "not Node.js 3.12")},
        {**note, "local": NOTE + " And more."},
        {"path": "x.State", "recorded": "Active", "local": "Pending"},
    ]
    rest, stated = replay.split_stated(others)
    assert stated == [] and rest == others


def test_stated_outcome_is_neither_pass_nor_differs(monkeypatch):
    """run_case's verdict: only stated deviations -> the stated outcome (not "pass"); one more
    difference -> "differs", with the stated ones still listed apart."""
    note = {"path": "a.StateReason", "recorded": replay._ABSENT, "local": NOTE}
    other = {"path": "a.Description", "recorded": "x", "local": "y"}
    results = {"t1": {"outcome": replay.STATED_OUTCOME, "stated": [{**note, "deviation": "interpreter note"}]},
               "t2": {"outcome": "pass"}}
    s = replay.summary(results)
    assert (s["pass"], s[replay.STATED_OUTCOME], s["pass_rate_all"]) == (1, 1, 0.5)
    assert s["stated_or_pass_rate_lambda_only"] == 1.0
    rest, stated = replay.split_stated([note, other])
    assert rest == [other] and len(stated) == 1
    assert "passes but for the stated interpreter note: 1" in report.render_text(results)
    assert "Counted apart, never as a pass: 1 recorded tests" in report.render_doc(results)


def test_reconstructed_cases_are_marked_apart(results):
    """A case whose calls reconstructed.py rebuilt from the recorded answers says so in its result
    and in the docs' section; no ported (LocalStack-coded) case does."""
    from . import reconstructed
    rebuilt = {k for k, r in results.items() if r.get("reconstructed")}
    assert rebuilt == set(reconstructed.PROVENANCE)
    assert all(results[k]["reconstructed"] == reconstructed.PROVENANCE[k] for k in rebuilt)
    doc = report.render_doc(results)
    assert all(f"{k} [reconstructed]" in doc for k in rebuilt)


def test_a_reconstructed_call_is_pinned_by_the_recording(platform_client):
    """The recording fixes the rebuilt qualifier's length: 65 a's match AWS's recorded not-found
    answer, 66 do not (the rebuilt call could not pass with another)."""
    client, _, account = platform_client
    scope = "TestLambdaFunction::test_function_name_and_qualifier_validation[qualifier_too_long1-get_function]"
    rx = [replay.normalise.TransformerUtility.regex("a" * n, f"<a:len({n})>") for n in (170, 129, 65)]

    def diff(qualifier):
        with pytest.raises(client.exceptions.ResourceNotFoundException) as e:
            client.get_function(FunctionName="my-function", Qualifier=qualifier)
        r = e.value.response
        obj = {"Code": r["Error"]["Code"], "Message": r["Error"]["Message"]}
        return replay.compare(scope, {"get_function_exception": obj}, account_id=account,
                              region_name=report.REGION, extra_transformers=rx)

    assert diff("a" * 65) == []
    assert [d["path"] for d in diff("a" * 66)] == ["get_function_exception.Message"]
