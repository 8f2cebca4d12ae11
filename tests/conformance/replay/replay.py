"""Replays LocalStack's recorded AWS answers against a local platform and says, per recorded test,
whether the platform answers as AWS did.

For every recorded test of test_lambda_api and test_lambda_common (data/index.json; FILES) the outcome is one of:
- ``pass``: every recorded answer was compared and, normalised, equals AWS's;
- ``differs``: the JSON paths where a normalised local answer departs from the recorded one
  (recorded vs local), answers the test never reached (the call that stopped it is named);
- ``passes but for the stated interpreter note``: it would pass but for differences that are
  each a deviation the platform states on purpose (STATED below: the path, AWS's recorded
  value and the local one), counted apart from ``pass`` and never merged into it;
- ``not supported``: the test needs a service besides Lambda (its reason: "needs S3", ...);
- ``not ported``: Lambda-only but not ported to ported.py yet (counted, so the denominator
  stays all of them).

A recorded test whose code no LocalStack commit has may be reconstructed from its recorded answers
(reconstructed.py); its outcome is one of the above like any other, and its result carries
``reconstructed`` (the case's provenance) so that it is never taken for a ported one.

The comparison is LocalStack's own (`localstack_snapshot.SnapshotSession`: the same transformers
in the same order, `skip_snapshot_verify` paths removed from both sides, DeepDiff over the rest).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import itertools
import json
import re
import time
import traceback
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from _pytest.mark.structures import ParameterSet
from localstack_snapshot.snapshots import SnapshotSession
from localstack_snapshot.snapshots.prototype import SnapshotAssertionError

from . import lsshim, normalise

HERE = Path(__file__).parent
DATA = HERE / "data"
SNAPSHOT_BASE = DATA / "test_lambda_api"  # SnapshotSession appends ".snapshot.json"
# The recorded files replayed (data/<file>.snapshot.json; index.json names each test's file)
FILES = ("test_lambda_api", "test_lambda_common")
NODE_PREFIX = "tests/aws/services/lambda_/test_lambda_api.py::"


def node_prefix(key: str) -> str:
    """The recorded node id's prefix of a test (its file's)."""
    return f"tests/aws/services/lambda_/{index()['tests'][key]['file']}.py::"
STATED_OUTCOME = "passes but for the stated interpreter note"
OUTCOMES = ("pass", STATED_OUTCOME, "differs", "not supported", "not ported")


@functools.lru_cache(maxsize=1)
def recorded() -> dict:
    """Every recorded file's snapshot, by node id (the files' node ids never collide)."""
    out = {}
    for f in FILES:
        out.update(json.loads((DATA / f"{f}.snapshot.json").read_text()))
    return out


@functools.lru_cache(maxsize=1)
def index() -> dict:
    return json.loads((DATA / "index.json").read_text())


class NotPortable(Exception):
    """The test needs a LocalStack fixture the replay has no stand-in for: the port's gap, not
    the platform's answer."""


class ReplaySession(SnapshotSession):
    """LocalStack's SnapshotSession reading the recorded state from the parsed file once (it
    re-reads the whole file per test otherwise)."""

    def _load_state(self) -> dict:
        return copy.deepcopy(recorded().get(self.scope_key, {}).get("recorded-content", {}))

    def match(self, key: str, obj: dict) -> None:
        # Unlike LocalStack's, a key AWS never recorded is the port's error, said as such.
        if key not in self.recorded_state:
            raise KeyError(f"the port matched {key!r}, which the recording does not have")
        return super().match(key, obj)


def _json_path(deepdiff_path: str) -> str:
    """root['create_response']['Errors'][0] -> create_response.Errors[0]"""
    out = deepdiff_path.removeprefix("root")
    out = re.sub(r"\['([^']*)'\]", r".\1", out)
    return out.lstrip(".")


_ABSENT = "<absent>"


def differences(results) -> list[dict]:
    """Each DeepDiff item of LocalStack's match results as {path, recorded, local}."""
    out = []
    for r in results:
        for kind, items in r.result.items():
            for level in items:
                recorded_v = level.t1 if not kind.endswith("_added") else _ABSENT
                local_v = level.t2 if not kind.endswith("_removed") else _ABSENT
                out.append({"path": f"{r.key}.{_json_path(level.path())}".rstrip("."),
                            "recorded": _plain(recorded_v), "local": _plain(local_v)})
    return sorted(out, key=lambda d: d["path"])


@dataclasses.dataclass(frozen=True)
class StatedDeviation:
    """A difference from AWS the platform makes on purpose and says so: a field (the last part
    of the JSON path), AWS's recorded value there and a pattern every local value must match."""
    name: str
    field: str
    recorded: object
    local: re.Pattern
    local_text: str  # the local value as the docs state it
    why: str

    def covers(self, d: dict) -> bool:
        return (d["path"].rsplit(".", 1)[-1] == self.field and d["recorded"] == self.recorded
                and isinstance(d["local"], str) and self.local.fullmatch(d["local"]) is not None)


# The documented list of stated deviations (docs/platform.md's replay section lists it too).
STATED = (
    StatedDeviation(
        name="interpreter note",
        field="StateReason",
        recorded=_ABSENT,  # an Active function has no StateReason on AWS
        # agent/platform/runtimes.go RuntimeNote, word for word but for the versions and path
        local=re.compile(r"The local platform runs \S+ under (Python|Node\.js) [0-9.]+ \([^)]*\), "
                         r"not \1 [0-9.]+: this machine has no other\."),
        local_text="The local platform runs RUNTIME under LANGUAGE VERSION (INTERPRETER), not "
                   "LANGUAGE RUNTIME-VERSION: this machine has no other.",
        why="issue #28 asks that a function's state say when the interpreter's minor version "
            "differs from the runtime's (agent/platform/runtimes.go RuntimeNote)"),
)


def split_stated(diffs: list[dict]) -> tuple[list[dict], list[dict]]:
    """(differences no stated deviation covers, those one does, each naming it)."""
    rest, stated = [], []
    for d in diffs:
        dev = next((s for s in STATED if s.covers(d)), None)
        if dev is None:
            rest.append(d)
        else:
            stated.append({**d, "deviation": dev.name})
    return rest, stated


def _plain(v):
    try:
        json.dumps(v)
        return v
    except TypeError:
        return str(v)


def compare(scope_key: str, observed: dict, *, account_id: str, region_name: str,
            extra_transformers=(), skip_paths=()) -> list[dict]:
    """Normalise ``observed`` ({snapshot key: local answer}) as LocalStack does and diff it with
    the recorded answers of ``scope_key``; [] when equal. The differ the tests use directly."""
    s = new_session(scope_key, account_id, region_name)
    for t in extra_transformers:
        s.add_transformer(t)
    for key, value in observed.items():
        s.match(key, value)
    return _diff(s, skip_paths)


def new_session(scope_key: str, account_id: str, region_name: str) -> ReplaySession:
    prefix = node_prefix(scope_key) if scope_key in index()["tests"] else NODE_PREFIX
    s = ReplaySession(base_file_path=str(SNAPSHOT_BASE), scope_key=prefix + scope_key, verify=True)
    s.transform = normalise.TransformerUtility
    for t, prio in normalise.default_transformers(account_id, region_name):
        s.add_transformer(t, priority=prio)
    s.add_transformer(normalise.module_transformers())
    return s


def _diff(s: ReplaySession, skip_paths) -> list[dict]:
    if not s.called_keys:
        return []
    try:
        results = s._assert_all(skip_verification_paths=list(skip_paths))
    except SnapshotAssertionError as e:
        results = e.result
    return differences(results)


# --- expanding pytest parametrisation as pytest names the cases ---------------------------------

def _cases(fn) -> list[tuple[str, dict]]:
    """[(pytest's case id, {argname: value})] of a function's parametrize marks."""
    marks = [m for m in getattr(fn, "pytestmark", []) if m.name == "parametrize"]
    if not marks:
        return [("", {})]
    per_mark = []
    for m in marks:
        names = m.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        ids = m.kwargs.get("ids")
        options = []
        for i, v in enumerate(m.args[1]):
            pid = None
            if isinstance(v, ParameterSet):
                pid, v = v.id, v.values
            else:
                v = (v,) if len(names) == 1 else tuple(v)
            if pid is None and ids is not None:
                pid = ids[i] if not callable(ids) else ids(v[0])
            if pid is None:
                pid = "-".join(str(x) if isinstance(x, (str, int, float, bool)) or x is None
                               else f"{n}{i}" for n, x in zip(names, v))
            options.append((str(pid), dict(zip(names, v))))
        per_mark.append(options)
    out = []
    for combo in itertools.product(*per_mark):  # pytestmark: the decorator nearest the def first
        out.append(("-".join(c[0] for c in combo), {k: v for c in combo for k, v in c[1].items()}))
    return out


def ported_cases(module) -> dict[str, tuple]:
    """{"Class::test[id]": (class, method name, params)} of every ported test."""
    out = {}
    for cname, cls in inspect.getmembers(module, inspect.isclass):
        if cls.__module__ != module.__name__:
            continue
        for mname, fn in inspect.getmembers(cls, inspect.isfunction):
            if not mname.startswith("test_"):
                continue
            for cid, params in _cases(fn):
                # a test ported from an older commit (extract.OLDER) is named <name>__at_<commit>
                key = f"{cname}::{mname.split('__at_')[0]}" + (f"[{cid}]" if cid else "")
                out[key] = (cls, mname, params)
    return out


# --- fixtures: what LocalStack's conftest gives the tests, for the local platform ---------------

class Fixtures:
    def __init__(self, client, client_for, account_id: str, region_name: str):
        self.client, self.client_for = client, client_for
        self.account_id, self.region_name = account_id, region_name

    def for_test(self, case_id: str, snapshot) -> tuple[dict, list]:
        made: list[str] = []
        cleanups: list = []
        client = self.client

        def wait_ready(name):
            # LocalStack's wait_until_lambda_ready (fixtures.py:1287): until State != Pending
            for _ in range(120):
                if client.get_function(FunctionName=name)["Configuration"]["State"] != "Pending":
                    return
                time.sleep(0.25)

        def create_lambda_function(*, func_name, client=None, **kw):
            c = client or self.client
            kw.setdefault("role", role)
            resp = lsshim.create_lambda_function(func_name, client=c, **kw)
            made.append((c, resp["CreateFunctionResponse"]["FunctionArn"]))
            wait_ready(func_name)
            return resp

        def create_lambda_function_aws(**kw):
            resp = client.create_function(**kw)
            made.append((client, resp["FunctionArn"]))
            wait_ready(resp["FunctionName"])
            return resp

        def aws_client_factory(region_name=None, config=None, **_):
            return SimpleNamespace(lambda_=self.client_for(region_name or self.region_name, config))

        def fn_arn():
            # TestLambdaTag.fn_arn (test_lambda_api.py:2828): a python3.12 function's ARN
            name = f"fn-{lsshim.short_uid()}"
            create_lambda_function(handler_file=lsshim.TEST_LAMBDA_PYTHON_ECHO, func_name=name,
                                   runtime=lsshim.Runtime.python3_12)
            return client.get_function(FunctionName=name)["Configuration"]["FunctionArn"]

        role = f"arn:aws:iam::{self.account_id}:role/lambda-autogenerated-{lsshim.short_uid()}"
        mp = pytest.MonkeyPatch()
        cleanups.append(mp.undo)
        import shutil
        import tempfile
        tmp = tempfile.mkdtemp(prefix="replay-tmp-")
        cleanups.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
        fixtures = {
            "aws_client": SimpleNamespace(lambda_=client),
            "snapshot": snapshot,
            "create_lambda_function": create_lambda_function,
            "create_lambda_function_aws": create_lambda_function_aws,
            "lambda_su_role": role,
            "account_id": self.account_id,
            "region_name": self.region_name,
            "secondary_region_name": "ap-southeast-1",  # LocalStack's SECONDARY_TEST_AWS_REGION_NAME
            "cleanups": cleanups,
            "monkeypatch": mp,
            "request": SimpleNamespace(node=SimpleNamespace(callspec=SimpleNamespace(id=case_id)),
                                       getfixturevalue=lambda name: _fixture(fixtures, name)),
            "dummylayer": (HERE / "functions" / "testlayer.zip").read_bytes(),
            "aws_client_factory": aws_client_factory,
            "fn_arn": fn_arn,  # a factory: called when asked for (LAZY)
            "lambda_client": client,  # LocalStack's fixture before aws_client (extract.OLDER)
            # testing/aws/lambda_utils.py's indirect fixture: its parameter is (scenario, runtime, handler)
            "multiruntime_lambda": lambda param: lsshim.ParametrizedLambda(client, *param, role, made, tmp),
            "tmp_path": Path(tmp),  # pytest's
        }
        return fixtures, made


LAZY = {"fn_arn"}
INDIRECT = {"multiruntime_lambda"}  # parametrised indirectly: the fixture is built from the parameter


def _fixture(fixtures: dict, name: str):
    if name not in fixtures:
        raise NotPortable(f"needs LocalStack's fixture {name!r}, which has no stand-in here")
    return fixtures[name]() if name in LAZY else fixtures[name]


def run_case(fixtures: Fixtures, key: str, cls, method: str, params: dict) -> dict:
    case_id = key.split("[", 1)[1][:-1] if "[" in key else ""
    snapshot = new_session(key, fixtures.account_id, fixtures.region_name)
    fx, made = fixtures.for_test(case_id, snapshot)
    fn = getattr(cls(), method)
    wanted = list(inspect.signature(fn).parameters)
    error = None
    autouse = AUTOUSE.get(cls.__module__)
    try:
        if autouse is not None:  # the module's autouse fixture (test_lambda_common's transformers)
            autouse(snapshot)
        kwargs = {n: fx[n](params[n]) if n in INDIRECT else params[n] if n in params else _fixture(fx, n)
                  for n in wanted}
        fn(**kwargs)
    except pytest.skip.Exception as e:
        return {"outcome": "not ported", "why": f"the LocalStack test skips itself here: {e.msg}"}
    except NotPortable as e:
        return {"outcome": "not ported", "why": str(e)}
    except (Exception, pytest.fail.Exception) as e:  # noqa: BLE001 - the local platform's answer stopped the test
        error = _stopped_by(e)
    finally:
        for cb in reversed(fx["cleanups"]):
            try:
                cb()
            except Exception:  # noqa: BLE001 - cleanup is best effort
                pass
        for c, arn in made:
            try:
                c.delete_function(FunctionName=arn)
            except Exception:  # noqa: BLE001
                pass
    skip = index()["tests"][key]["skip_paths"] + EXTRA_SKIP.get(key, [])
    diffs, stated = split_stated(_diff(snapshot, skip) if "*" not in skip else [])
    unmatched = sorted(set(snapshot.recorded_state) - snapshot.called_keys)
    if not diffs and not unmatched and error is None:
        return {"outcome": STATED_OUTCOME, "stated": stated} if stated else {"outcome": "pass"}
    out = {"outcome": "differs", "differences": diffs}
    if stated:
        out["stated"] = stated
    if error:
        out["stopped"] = error
    if unmatched:
        out["not_reached"] = unmatched
    return out


def _autouse(module):
    """test_lambda_common's autouse fixture `snapshot_transformers`, the function under pytest's
    fixture wrapper."""
    f = getattr(module, "snapshot_transformers", None)
    if f is None:
        return None
    return f._get_wrapped_function() if hasattr(f, "_get_wrapped_function") else getattr(f, "__wrapped__", f)


AUTOUSE: dict = {}
EXTRA_SKIP: dict = {}  # reconstructed.SKIP_PATHS, set by run_all


def _stopped_by(e: Exception) -> str:
    """One line: the test's own line that failed and what the platform answered there."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.endswith(("ported.py", "ported_common.py"))]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno} `{frames[-1].line}`" if frames else "?"
    if frames and frames[-1].line.startswith("with pytest.raises"):
        # the call expected to fail is the with-block's first line
        import linecache
        nxt = linecache.getline(frames[-1].filename, frames[-1].lineno + 1).strip()
        where += f" `{nxt}`"
    resp = getattr(e, "response", None)
    if isinstance(resp, dict) and "Error" in resp:
        what = f"{resp['Error'].get('Code')}: {resp['Error'].get('Message')}"
    else:
        what = f"{type(e).__name__}: {e}"
    return f"{where} -> {what}"[:600]


def run_all(client, client_for, account_id: str, region_name: str, only=None) -> dict:
    """Outcome of every recorded test (data/index.json order)."""
    from . import ported, ported_common, reconstructed
    cases = {**ported_cases(ported), **ported_cases(ported_common)}
    rebuilt = ported_cases(reconstructed)
    assert not set(rebuilt) & set(cases), "a reconstructed case has committed code: port it instead"
    assert set(rebuilt) == set(reconstructed.PROVENANCE), "every reconstructed case states its provenance"
    cases.update(rebuilt)
    assert set(reconstructed.SKIP_PATHS) <= set(rebuilt)
    EXTRA_SKIP.update(reconstructed.SKIP_PATHS)
    AUTOUSE[ported_common.__name__] = _autouse(ported_common)
    fixtures = Fixtures(client, client_for, account_id, region_name)
    out = {}
    for key, meta in sorted(index()["tests"].items()):
        if only and not re.search(only, key):
            continue
        if meta["needs"]:
            out[key] = {"outcome": "not supported", "why": "; ".join(meta["needs"])}
        elif key not in cases:
            fn = key.split("[", 1)[0]
            stale = "[" in key and any(k.startswith(fn + "[") for k in cases)
            why = meta.get("not_ported") or ("this recorded case is no longer in LocalStack's test"
                                             if stale else "not ported yet")
            out[key] = {"outcome": "not ported", "why": why}
        else:
            out[key] = run_case(fixtures, key, *cases[key])
            if key in rebuilt:  # counted as the others, but never mistaken for LocalStack's code
                out[key]["reconstructed"] = reconstructed.PROVENANCE[key]
    return out


def summary(results: dict) -> dict:
    """Counts and rates; `lambda_only` leaves out the tests that need another service."""
    counts = {o: sum(1 for r in results.values() if r["outcome"] == o) for o in OUTCOMES}
    total = len(results)
    lambda_only = total - counts["not supported"]
    ported = counts["pass"] + counts[STATED_OUTCOME] + counts["differs"]
    return {"recorded": total, "lambda_only": lambda_only, "ported": ported, **counts,
            "pass_rate_all": counts["pass"] / total if total else 0.0,
            "pass_rate_lambda_only": counts["pass"] / lambda_only if lambda_only else 0.0,
            "pass_rate_ported": counts["pass"] / ported if ported else 0.0,
            # beside the pass rate, never in it
            "stated_or_pass_rate_lambda_only":
                (counts["pass"] + counts[STATED_OUTCOME]) / lambda_only if lambda_only else 0.0}


def summary_by_file(results: dict) -> dict[str, dict]:
    """summary() of each recorded file's tests (data/index.json names each test's file)."""
    files = {k: index()["tests"].get(k, {}).get("file") for k in results}
    return {f: summary({k: r for k, r in results.items() if files[k] == f}) for f in FILES}


def account_of(client) -> str:
    """The platform's account id, read off an ARN it answers with (there is no STS to ask)."""
    name = f"replay-probe-{uuid.uuid4().hex[:8]}"
    try:
        client.get_function(FunctionName=name)
    except client.exceptions.ResourceNotFoundException as e:
        m = re.search(r":(\d{12}):function:", e.response["Error"]["Message"])
        if m:
            return m.group(1)
    raise RuntimeError("the platform's account id could not be read from a not-found answer")
