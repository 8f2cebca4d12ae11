"""Managed runtimes (python3.*, nodejs*.x) on the local platform, held to AWS's recorded answers.

The functions (functions/managed_python, functions/managed_node) are zipped as a user zips them:
handler source only, no bootstrap, no runtime client. What AWS answered the same calls is
LocalStack's recording against real AWS (recorded/localstack_runtimes, NOTICE there). Where the
platform departs from it, the departure is in ENV_DIFFERENCES and in docs/platform.md ("Managed
runtimes"), and the tests fail if either list and the platform disagree.
"""
from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import uuid
import zipfile
from pathlib import Path

import pytest

from faascope.binaries import platform_binary
from faascope.providers import local_platform

from .conftest import ROLE, client_for

HERE = Path(__file__).parent
RECORDED = HERE / "recorded" / "localstack_runtimes"
DOC = HERE.parents[1] / "docs" / "platform.md"
PINS = HERE.parents[1] / "scripts" / "interpreters.txt"
COMMON = "tests/aws/services/lambda_/test_lambda_common.py::TestLambdaRuntimesCommon::"

# Variable -> (AWS's recorded value, the platform's; None = unset there). Every other variable AWS
# recorded is the same here (a <placeholder> only has to be present).
ENV_DIFFERENCES = {
    "AWS_LAMBDA_RUNTIME_API": ("169.254.100.1:9001", "127.0.0.1:9001"),
    "AWS_SESSION_TOKEN": ("<aws-session-token:1>", None),
    "AWS_XRAY_CONTEXT_MISSING": ("LOG_ERROR", None),
    "AWS_XRAY_DAEMON_ADDRESS": ("169.254.100.1:2000", None),
    "_AWS_XRAY_DAEMON_ADDRESS": ("169.254.100.1", None),
    "_AWS_XRAY_DAEMON_PORT": ("2000", None),
}
PLATFORM_ONLY_VALUES_VARY: set[str] = set()  # variables only the platform sets whose values vary

SOURCES = {"python": (HERE / "functions" / "managed_python", "python3.12", "handler.handler"),
           "nodejs": (HERE / "functions" / "managed_node", "nodejs20.x", "index.handler")}
RECORDED_AS = {"python": "python3.12", "nodejs": "nodejs20.x"}


def recorded(test: str, family: str) -> dict:
    snap = json.loads((RECORDED / "test_lambda_common.snapshot.json").read_text())
    return snap[f"{COMMON}{test}[{RECORDED_AS[family]}]"]["recorded-content"]


def zip_dir(src: Path, extra: dict[str, tuple[bytes, int]] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(src.iterdir()):
            z.write(p, p.name)
        for name, (data, mode) in (extra or {}).items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            z.writestr(info, data)
    return buf.getvalue()


def interpreter_version(family: str) -> str:
    """The machine's interpreter's version as the runtimes name it ("3.11", "20")."""
    argv = {"python": ["/usr/bin/python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            "nodejs": ["/usr/bin/node", "-p", "process.versions.node.split('.')[0]"]}[family]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    """A platform of this module's own, whose function logs the tests read (data/platform/logs)."""
    data = tmp_path_factory.mktemp("managed-runtimes")
    state = local_platform.start(profile="lambda", data_dir=data, port=0, keep_alive="10m")
    yield state["endpoint"], data
    local_platform.stop(data)


@pytest.fixture(scope="module")
def mlam(platform):
    return client_for(platform[0])


@pytest.fixture(scope="module")
def make(mlam):
    made = []

    def create(family: str, runtime: str | None = None, memory: int = 1024, env: dict | None = None,
               extra: dict | None = None) -> tuple[str, dict]:
        src, default_runtime, handler = SOURCES[family]
        name = f"managed-{family}-{uuid.uuid4().hex[:6]}"
        out = mlam.create_function(FunctionName=name, Runtime=runtime or default_runtime, Role=ROLE, Handler=handler,
                                   Code={"ZipFile": zip_dir(src, extra)}, MemorySize=memory, Timeout=30,
                                   Environment={"Variables": env or {}})
        made.append(name)
        mlam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
        return name, out

    yield create
    for name in made:
        try:
            mlam.delete_function(FunctionName=name)
        except Exception:  # noqa: BLE001 - best effort at teardown
            pass


def invoke(lam, name, payload) -> tuple[dict, dict]:
    r = lam.invoke(FunctionName=name, Payload=json.dumps(payload).encode())
    return r, json.loads(r["Payload"].read())


def matches(recorded_value: str, value: str) -> bool:
    """value is what AWS recorded: a <placeholder> of LocalStack's recorder stands for any text,
    and its 111111111111 for any account id (it replaces the recording account's)."""
    parts = [re.escape(p).replace("111111111111", r"\d{12}") for p in re.split(r"<[^>]+>", recorded_value)]
    return re.fullmatch(".+".join(parts), value) is not None


def env_departures(aws: dict, ours: dict) -> dict:
    """Variable -> (AWS's value, ours) wherever they differ."""
    out = {}
    for k in sorted(set(aws) | set(ours)):
        a, o = aws.get(k), ours.get(k)
        if a is not None and o is not None and matches(a, o):
            continue
        out[k] = (a, o)
    return out


@pytest.mark.parametrize("family", ["python", "nodejs"])
def test_environment_and_context_are_aws_recorded(mlam, make, family):
    """test_introspection_invoke: the function's environment and context are AWS's, but for
    ENV_DIFFERENCES."""
    rec = recorded("test_introspection_invoke", family)
    name, created = make(family, env={"TEST_KEY": "TEST_VAL"})
    for k in ("Runtime", "Handler", "PackageType", "State", "StateReason", "StateReasonCode", "MemorySize"):
        assert created.get(k) == rec["create_function_result"][k], k
    r, out = invoke(mlam, name, {"simple": "payload"})
    assert "FunctionError" not in r, out
    aws_env = rec["invocation_result_payload"]["environment"]
    got = env_departures(aws_env, out["environment"])
    want = {k: v for k, v in ENV_DIFFERENCES.items()}
    for k in PLATFORM_ONLY_VALUES_VARY:
        assert out["environment"].get(k), k
        got[k] = (got[k][0], want[k][1])
    assert got == want
    ctx, aws_ctx = out["ctx"], rec["invocation_result_payload"]["ctx"]
    for k, v in aws_ctx.items():
        assert matches(v, str(ctx[k])), (k, v, ctx[k])
    assert ctx["invoked_function_arn"].endswith(":function:" + name)
    assert ctx["log_stream_name"] == out["environment"]["AWS_LAMBDA_LOG_STREAM_NAME"]


TEMPDIR_PROBES = {
    "python": ("python3.12", "index.handler", "index.py",
               "import os, tempfile\n"
               "def handler(event, context):\n"
               "    return {'tempdir': tempfile.gettempdir(), 'home': os.path.expanduser('~'),\n"
               "            'TMPDIR': os.environ.get('TMPDIR'), 'HOME': os.environ.get('HOME')}\n"),
    "nodejs": ("nodejs20.x", "index.handler", "index.js",
               "const os = require('os');\n"
               "exports.handler = async () => ({tempdir: os.tmpdir(), home: os.homedir(),\n"
               "  TMPDIR: process.env.TMPDIR || null, HOME: process.env.HOME || null});\n"),
}


@pytest.mark.parametrize("family", ["python", "nodejs"])
def test_temp_and_home_directories_without_tmpdir_or_home(mlam, family):
    """AWS sets neither TMPDIR nor HOME (test_introspection_invoke's recording), nor does the
    platform: the language's own temporary directory is still /tmp, the only writable place, and
    the home directory the sandbox user's (/tmp, from the sandbox's passwd)."""
    runtime, handler, filename, source = TEMPDIR_PROBES[family]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(filename, source)
    name = f"tempdir-{family}-{uuid.uuid4().hex[:6]}"
    mlam.create_function(FunctionName=name, Runtime=runtime, Role=ROLE, Handler=handler,
                         Code={"ZipFile": buf.getvalue()}, Timeout=30)
    try:
        mlam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
        r, out = invoke(mlam, name, {})
        assert "FunctionError" not in r, out
        assert out == {"tempdir": "/tmp", "home": "/tmp", "TMPDIR": None, "HOME": None}
    finally:
        mlam.delete_function(FunctionName=name)


@pytest.mark.parametrize("family", ["python", "nodejs"])
def test_uncaught_exception_is_aws_recorded_shape(mlam, make, family):
    """test_uncaught_exception_invoke: Unhandled, with the runtime's own fields and message."""
    rec = recorded("test_uncaught_exception_invoke", family)["error_result"]
    name, _ = make(family)
    r, out = invoke(mlam, name, {"error_msg": "some_error_msg"})
    assert r["FunctionError"] == rec["FunctionError"] == "Unhandled"
    assert r["StatusCode"] == rec["StatusCode"]
    assert set(out) == set(rec["Payload"])
    assert out["errorMessage"] == rec["Payload"]["errorMessage"]
    assert out["errorType"] == rec["Payload"]["errorType"]
    trace = out.get("stackTrace", out.get("trace"))
    assert isinstance(trace, list) and trace and all(isinstance(x, str) for x in trace)


@pytest.mark.parametrize("family", ["python", "nodejs"])
def test_wrapper_script_runs(mlam, make, family):
    """test_runtime_wrapper_invoke: AWS_LAMBDA_EXEC_WRAPPER runs before the runtime (managed
    runtimes only; provided.* ignores it, as Lambda does)."""
    wrapper = b'#!/bin/sh\nexport WRAPPER_VAR=test-value-1\nexec "$@"\n'
    name, _ = make(family, env={"AWS_LAMBDA_EXEC_WRAPPER": "/var/task/environment_wrapper"},
                   extra={"environment_wrapper": (wrapper, 0o755)})
    _, out = invoke(mlam, name, {"simple": "payload"})
    assert out["environment"]["WRAPPER_VAR"] == "test-value-1"


def pinned_interpreters() -> dict[str, str]:
    """Runtime -> the CPython release scripts/interpreters.txt pins for it (their one source)."""
    out = {}
    for line in PINS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            runtime, version, _sha = line.split()
            out[runtime] = version
    return out


def unpinned_other(family: str) -> str | None:
    """A runtime of the family with neither an exact interpreter nor the machine's version: one
    that runs under the machine's, with the note (None if every one is pinned or the machine's)."""
    table = json.loads(subprocess.run([str(platform_binary()), "--list-runtimes"], capture_output=True,
                                      text=True, check=True).stdout)
    have, pins = interpreter_version(family), pinned_interpreters()
    return next((r["name"] for r in table
                 if r["family"] == family and r["name"] not in pins and r["version"] != have), None)


@pytest.mark.parametrize("family,runtime", [("python", "unpinned"), ("python", "python3.11"), ("nodejs", "nodejs20.x")])
def test_interpreter_version_mismatch_is_said(mlam, make, platform, family, runtime):
    """A runtime without an interpreter of its own version runs on the machine's one interpreter
    of its language: where that one's version is not the runtime's, the function's StateReason and
    the first line of its log say so; where it is, neither does. (Every nodejs runtime this
    machine lacks is pinned: the Node side of the note is
    agent/platform/interpreters_test.go's TestNoNoteWithTheExactInterpreter.)"""
    if runtime == "unpinned":
        runtime = unpinned_other(family)
    version = runtime.removeprefix("python").removeprefix("nodejs").removesuffix(".x")
    have = interpreter_version(family)
    name, _ = make(family, runtime=runtime)
    _, out = invoke(mlam, name, {})
    assert out["environment"]["AWS_EXECUTION_ENV"] == f"AWS_Lambda_{runtime}"
    assert out["python" if family == "python" else "node"] == have
    reason = mlam.get_function(FunctionName=name)["Configuration"].get("StateReason")
    log = (platform[1] / "platform" / "logs" / f"{name}.log").read_text()
    if have == version:
        assert reason is None
        assert "this machine has no other" not in log
        return
    lang = "Python" if family == "python" else "Node.js"
    assert reason and f"{lang} {have}" in reason and f"{lang} {version}" in reason and runtime in reason
    assert log.splitlines()[0] == reason


@pytest.mark.parametrize("runtime,release", sorted(pinned_interpreters().items()))
def test_pinned_runtime_runs_on_its_own_interpreter(mlam, make, platform, runtime, release):
    """A runtime scripts/interpreters.txt pins runs on that CPython or Node release (installed by
    scripts/interpreters.sh, which scripts/test.sh runs), at /var/lang as on Lambda, with no note
    in its state or log; a Python one has the modules functions reach AWS with (ssl for https,
    zlib, …). Without the install it runs on the machine's interpreter and this fails, saying what
    to run: it cannot pass on a machine that lacks the interpreter."""
    family = "python" if runtime.startswith("python") else "nodejs"
    name, _ = make(family, runtime=runtime)
    event = {"import": ["ssl", "zlib", "ctypes", "bz2", "lzma", "sqlite3", "uuid", "json"]} if family == "python" else {}
    r, out = invoke(mlam, name, event)
    assert "FunctionError" not in r, out
    got = out["python_release" if family == "python" else "node_release"]
    assert got == release, (
        f"{runtime} ran on {got} ({out['executable']}), not its pinned {release}: "
        f"run `bash scripts/interpreters.sh` (scripts/test.sh does) to install it")
    assert out["executable"].startswith("/var/lang/bin/")
    if family == "python":
        assert set(out["imports"].values()) == {"ok"}, out["imports"]
    assert mlam.get_function(FunctionName=name)["Configuration"].get("StateReason") is None
    log = (platform[1] / "platform" / "logs" / f"{name}.log").read_text()
    assert "this machine has no other" not in log


LIMIT_FILES = ["/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/memory.max",  # cgroup v2
               "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us",  # v1
               "/sys/fs/cgroup/memory/memory.limit_in_bytes", "/proc/self/mounts"]


def limits_of(files: dict) -> dict:
    """CPU quota (vCPUs), memory limit (bytes) and /tmp's file system, from the files above."""
    if not files["/sys/fs/cgroup/cpu.max"].startswith("error"):
        q, per = files["/sys/fs/cgroup/cpu.max"].split()
        cpu = None if q == "max" else int(q) / int(per)
        mem = files["/sys/fs/cgroup/memory.max"].strip()
    else:
        q, per = int(files["/sys/fs/cgroup/cpu/cpu.cfs_quota_us"]), int(files["/sys/fs/cgroup/cpu/cpu.cfs_period_us"])
        cpu = None if q < 0 else q / per
        mem = files["/sys/fs/cgroup/memory/memory.limit_in_bytes"].strip()
    tmp = [ln.split()[2] for ln in files["/proc/self/mounts"].splitlines() if ln.split()[1] == "/tmp"]
    return {"vcpu": cpu, "memory_bytes": int(mem) if mem.isdigit() else None, "tmp_fs": tmp}


def test_lambda_profile_applies_to_a_managed_runtime(mlam, make, lam, deploy):
    """A python3.12 function on the lambda profile gets the CPU quota, memory limit and /tmp a
    provided.al2023 function of the same memory gets: memory exactly MemorySize MiB, a fractional
    CPU below 1 vCPU at 512 MB, an ext4 /tmp."""
    name, _ = make("python", memory=512)
    _, out = invoke(mlam, name, {"read": LIMIT_FILES})
    py = limits_of(out["files"])
    go = deploy("go", "limits", memory=512)
    got = {}
    for f in LIMIT_FILES:
        r = lam.invoke(FunctionName=go, Payload=json.dumps({"op": "read", "line": f}).encode())
        body = json.loads(r["Payload"].read())
        assert "FunctionError" not in r, body
        got[f] = body["content"] if body["content"] is not None else "error: " + body["error"]
    custom = limits_of(got)
    assert py["memory_bytes"] == 512 * 2**20
    assert py["vcpu"] is not None and 0 < py["vcpu"] < 1
    assert py["tmp_fs"] == ["ext4"]
    assert py == custom


def test_docs_list_the_platforms_runtimes():
    """docs/platform.md's "Managed runtimes" lists exactly the platform's runtime table (Go owns
    it: `faascope-platform --list-runtimes`), never a copy that could drift."""
    table = json.loads(subprocess.run([str(platform_binary()), "--list-runtimes"], capture_output=True,
                                      text=True, check=True).stdout)
    section = doc_section()
    line = next(ln for ln in section.splitlines() if ln.startswith("Offered:"))
    assert re.findall(r"`([a-z0-9.]+)`", line) == [r["name"] for r in table]


def doc_section() -> str:
    text = DOC.read_text()
    section = text[text.index("### Managed runtimes"):]
    return section[:re.search(r"\n#{2,3} ", section[1:]).start() + 1]


def test_docs_list_each_difference():
    """docs/platform.md's "Managed runtimes" names every variable where the platform departs from
    AWS's recording, with AWS's value beside it."""
    section = doc_section()
    for k, (aws, _) in ENV_DIFFERENCES.items():
        assert f"`{k}`" in section, k
        if aws is not None and not aws.startswith("<"):
            assert f"`{aws}`" in section, (k, aws)


@pytest.mark.skipif(shutil.which("aws") is None, reason="the AWS CLI is installed by scripts/setup.sh (test extra)")
def test_aws_cli_creates_and_invokes_python312(platform, tmp_path):
    """`aws lambda create-function --runtime python3.12 --handler app.handler --zip-file fileb://…`
    then `aws lambda invoke`, as a user types them."""
    from .test_cli import aws  # the CLI as test_cli.py drives it

    ep = platform[0]
    with zipfile.ZipFile(tmp_path / "f.zip", "w") as z:  # the module as app.py, Handler app.handler
        z.write(SOURCES["python"][0] / "handler.py", "app.py")
    name = f"cli-py-{uuid.uuid4().hex[:6]}"
    rc, out, err = aws(ep, "create-function", "--function-name", name, "--runtime", "python3.12",
                       "--handler", "app.handler", "--role", ROLE, "--zip-file", f"fileb://{tmp_path / 'f.zip'}")
    assert rc == 0, err
    assert json.loads(out)["Runtime"] == "python3.12"
    try:
        rc, _, err = aws(ep, "wait", "function-active-v2", "--function-name", name)
        assert rc == 0, err
        (tmp_path / "in.json").write_text('{"simple": "payload"}')
        rc, out, err = aws(ep, "invoke", "--function-name", name, "--payload", f"fileb://{tmp_path / 'in.json'}",
                           str(tmp_path / "out.json"))
        assert rc == 0, err
        assert json.loads(out)["StatusCode"] == 200 and "FunctionError" not in json.loads(out)
        body = json.loads((tmp_path / "out.json").read_text())
        assert body["environment"]["AWS_EXECUTION_ENV"] == "AWS_Lambda_python3.12"
        assert body["ctx"]["function_name"] == name
    finally:
        aws(ep, "delete-function", "--function-name", name)


def test_node_es_module_handler(mlam):
    """index.handler in an index.mjs (an ES module, Node's default for new code) runs as in
    index.js: aws-lambda-ric finds either."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("index.mjs", "export const handler = async (event) => ({esm: true, got: event});\n")
    name = f"managed-esm-{uuid.uuid4().hex[:6]}"
    mlam.create_function(FunctionName=name, Runtime="nodejs20.x", Role=ROLE, Handler="index.handler",
                         Code={"ZipFile": buf.getvalue()})
    try:
        mlam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
        r, out = invoke(mlam, name, {"a": 1})
        assert "FunctionError" not in r, out
        assert out == {"esm": True, "got": {"a": 1}}
    finally:
        mlam.delete_function(FunctionName=name)
