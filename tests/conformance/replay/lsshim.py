"""Stand-ins for the LocalStack test utilities that the ported tests (ported.py) call, so their
bodies stay as LocalStack wrote them. Each does what LocalStack's does against AWS (the behaviour
recorded), minus what only matters inside LocalStack; sources are named per item
(localstack-core/localstack/...; Apache-2.0, NOTICE beside this file)."""
from __future__ import annotations

import io
import time
import uuid
import zipfile
from pathlib import Path
from types import SimpleNamespace

FUNCTIONS = Path(__file__).parent / "functions"
TEST_LAMBDA_PYTHON_ECHO = str(FUNCTIONS / "lambda_echo.py")
TEST_LAMBDA_PYTHON_VERSION = str(FUNCTIONS / "lambda_python_version.py")
TEST_LAMBDA_VERSION = str(FUNCTIONS / "lambda_version.py")
TEST_LAMBDA_NODEJS = str(FUNCTIONS / "lambda_handler.js")

LAMBDA_DEFAULT_HANDLER = "handler.handler"  # utils/testutil.py:59
LAMBDA_DEFAULT_RUNTIME = "python3.12"        # utils/testutil.py:60
LAMBDA_TIMEOUT_SEC = 30                      # utils/testutil.py:62


class Runtime:
    """localstack.aws.api.lambda_.Runtime: the values are the API's strings."""
    python3_8 = "python3.8"
    python3_9 = "python3.9"
    python3_10 = "python3.10"
    python3_11 = "python3.11"
    python3_12 = "python3.12"
    python3_13 = "python3.13"
    nodejs18_x = "nodejs18.x"
    nodejs20_x = "nodejs20.x"
    java21 = "java21"
    provided_al2023 = "provided.al2023"


class Architecture:
    x86_64 = "x86_64"
    arm64 = "arm64"


class _Markers:
    """localstack.testing.pytest.markers: only decorations here (the replay reads skip paths from
    data/index.json, extracted from the original markers)."""

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return lambda fn: fn


markers = _Markers()


def short_uid() -> str:  # utils/strings.py
    return str(uuid.uuid4())[:8]


def long_uid() -> str:
    return str(uuid.uuid4())


def load_file(path: str, mode: str = "r"):
    """utils/files.py load_file (text, or bytes with mode "rb")."""
    return Path(path).read_bytes() if "b" in mode else Path(path).read_text()


def get_partition(region: str) -> str:
    return "aws"


def is_aws_cloud() -> bool:
    # The branches LocalStack guards with this are AWS's eventual consistency (IAM role
    # propagation sleeps): the local platform is consistent at once, so they are not taken.
    return False


def wait_until(fn, wait: float = 1.0, max_retries: int = 10, strategy: str = "exponential", **_):
    """utils/sync.py wait_until: retry fn until it returns truthy."""
    for i in range(max_retries):
        if fn():
            return True
        time.sleep(min(wait * (2 ** i if strategy == "exponential" else 1), 5))
    return False


def create_lambda_archive(script: str, get_content: bool = False, libs=None, runtime: str | None = None,
                          file_name: str | None = None, **_):
    """utils/testutil.py:72 create_lambda_archive: the script as handler.py (handler.js for
    node runtimes), mode 0777, in a zip. Stored, not deflated: under pytest LocalStack zips with
    utils/archives.py:98 create_zip_file_python, zipfile's default ZIP_STORED, so a 50 MiB script
    is a zip over Lambda's 50 MiB limit (TestLambdaSizeLimits relies on it)."""
    runtime = runtime or LAMBDA_DEFAULT_RUNTIME
    if not file_name:
        file_name = "handler.js" if runtime.startswith("nodejs") else "handler.py"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        info = zipfile.ZipInfo(file_name, date_time=(2020, 1, 1, 0, 0, 0))
        info.external_attr = 0o100777 << 16
        z.writestr(info, script)
    data = buf.getvalue()
    assert get_content, "the replay only uses archives as bytes"
    return data


def create_zip_file(file_path: str, get_content: bool = False, **_):
    return create_lambda_archive(load_file(file_path), get_content=True, file_name=Path(file_path).name)


def create_lambda_function(func_name, zip_file=None, handler_file=None, handler=None, runtime=None,
                           envvars=None, tags=None, layers=None, client=None, role=None, timeout=None,
                           **kwargs):
    """utils/testutil.py:184 create_lambda_function (without event sources or S3 uploads)."""
    runtime = runtime or LAMBDA_DEFAULT_RUNTIME
    if not zip_file and handler_file:
        content = load_file(handler_file) if Path(handler_file).exists() else handler_file
        zip_file = create_lambda_archive(content, get_content=True, runtime=runtime)
    args = {"FunctionName": func_name, "Runtime": runtime, "Handler": handler or LAMBDA_DEFAULT_HANDLER,
            "Role": role, "Code": {"ZipFile": zip_file}, "Timeout": timeout or LAMBDA_TIMEOUT_SEC,
            "Environment": {"Variables": envvars or {}}, "Tags": tags or {}}
    args.update(kwargs)
    if layers:
        args["Layers"] = layers
    return {"CreateFunctionResponse": client.create_function(**args), "CreateEventSourceMappingResponse": None}


testutil = SimpleNamespace(create_lambda_function=create_lambda_function,
                           create_lambda_archive=create_lambda_archive, create_zip_file=create_zip_file)

TEST_LAMBDA_PYTHON_ECHO_ZIP = str(FUNCTIONS / "echo.zip")
# services/lambda_/runtimes.py:84-104, in that order (the recorded cases are named after them)
DEPRECATED_RUNTIMES = ["java8", "go1.x", "provided", "ruby2.7", "nodejs14.x", "python3.7",
                       "dotnetcore3.1", "nodejs12.x"]


class LogFormat:
    JSON = "JSON"
    Text = "Text"


def to_str(b, encoding: str = "utf-8"):
    return b.decode(encoding) if isinstance(b, (bytes, bytearray)) else b


def _resource_arn(name: str, pattern: str, account_id: str, region_name: str) -> str:
    return pattern % (get_partition(region_name), region_name, account_id, name)


def lambda_function_arn(function_name: str, account_id: str, region_name: str) -> str:
    """utils/aws/arns.py:266 (a plain name: the unqualified ARN)."""
    if function_name.startswith("arn:"):
        return function_name
    return f"arn:aws:lambda:{region_name}:{account_id}:function:{function_name}"


def lambda_event_source_mapping_arn(uuid_: str, account_id: str, region_name: str) -> str:
    return _resource_arn(uuid_, "arn:%s:lambda:%s:%s:event-source-mapping:%s", account_id, region_name)


def capacity_provider_arn(name: str, account_id: str, region_name: str) -> str:
    return _resource_arn(name, "arn:%s:lambda:%s:%s:capacity-provider:%s", account_id, region_name)


def s3_bucket_arn(bucket_name: str, *_, **__) -> str:  # utils/aws/arns.py
    return f"arn:aws:s3:::{bucket_name}"


arns = SimpleNamespace(lambda_function_arn=lambda_function_arn, s3_bucket_arn=s3_bucket_arn,
                       lambda_event_source_mapping_arn=lambda_event_source_mapping_arn,
                       capacity_provider_arn=capacity_provider_arn)


def check_concurrency_quota(aws_client, min_concurrent_executions: int):
    """tests/aws/services/lambda_/test_lambda.py:166: skip below the quota the test needs."""
    import pytest
    limit = aws_client.lambda_.get_account_settings()["AccountLimit"]["ConcurrentExecutions"]
    if limit < min_concurrent_executions:
        pytest.skip(f"Account limit for Lambda ConcurrentExecutions is too low: ({limit}/{min_concurrent_executions})")


# localstack/config.py:1024-1060: the defaults, which are Lambda's documented quotas
config = SimpleNamespace(
    LAMBDA_RUNTIME_VALIDATION=0,
    LAMBDA_LIMITS_CONCURRENT_EXECUTIONS=1_000,
    LAMBDA_LIMITS_MINIMUM_UNRESERVED_CONCURRENCY=100,
    LAMBDA_LIMITS_CODE_SIZE_ZIPPED=52_428_800,
    LAMBDA_LIMITS_CODE_SIZE_UNZIPPED=262_144_000,
    LAMBDA_LIMITS_CREATE_FUNCTION_REQUEST_SIZE=70_167_211,
)


class ShortCircuitWaitException(Exception):
    """utils/sync.py: stops a wait_until at once."""


# --- stand-ins for the names of later ports (extract.OLDER, SnapStart, layers, code location) ---

def _batched(iterable, n: int, *, strict: bool = False):
    """itertools.batched (Python 3.12; `strict` 3.13), which test_layer_compatibilities calls."""
    it = iter(iterable)
    while batch := tuple(itertools_.islice(it, n)):
        if strict and len(batch) != n:
            raise ValueError("batched(): incomplete batch")
        yield batch


import itertools as itertools_  # noqa: E402

itertools = SimpleNamespace(**{n: getattr(itertools_, n) for n in dir(itertools_) if not n.startswith("_")},
                            batched=getattr(itertools_, "batched", _batched))

# services/lambda_/runtimes.py IMAGE_MAPPING's keys, in order (ALL_RUNTIMES), at 98e540601 (the
# dotnet10 PR, 2026-01-13), where test_layer_compatibilities was recorded (12-01-2026: its third
# batch has provided.al2 and provided, which later commits dropped).
ALL_RUNTIMES = ["nodejs24.x", "nodejs22.x", "nodejs20.x", "nodejs18.x", "nodejs16.x", "nodejs14.x",
                "nodejs12.x", "python3.14", "python3.13", "python3.12", "python3.11", "python3.10",
                "python3.9", "python3.8", "python3.7", "java25", "java21", "java17", "java11", "java8.al2",
                "java8", "dotnet10", "dotnet8", "dotnet6", "dotnetcore3.1", "go1.x", "ruby3.4", "ruby3.3",
                "ruby3.2", "ruby2.7", "provided.al2023", "provided.al2", "provided"]
ARCHITECTURES = ["arm64", "x86_64"]  # services/lambda_/api_utils.py:113
# services/lambda_/runtimes.py:164
SNAP_START_SUPPORTED_RUNTIMES = ["java11", "java17", "java21", "java25", "python3.12", "python3.13",
                                 "dotnet8", "dotnet10"]
# testing/aws/lambda_utils.py:38-45 HANDLERS, by runtime family
MULTIRUNTIME_HANDLERS = {"python": "handler.handler", "nodejs": "index.handler", "provided": "function.handler",
                         "java": "echo.Handler", "dotnet": "dotnet::Dotnet.Function::FunctionHandler",
                         "ruby": "function.handler"}
# services/lambda_/runtimes.py TESTED_RUNTIMES and RUNTIMES_AGGREGATED at the replay's source commit:
# the multiruntime tests' runtimes (the recorded cases of a runtime the platform does not offer
# are "not supported" by data/index.json before any is run).
RUNTIMES_AGGREGATED = {
    "nodejs": ["nodejs24.x", "nodejs22.x", "nodejs20.x", "nodejs18.x", "nodejs16.x"],
    "python": ["python3.14", "python3.13", "python3.12", "python3.11", "python3.10", "python3.9", "python3.8"],
    "java": ["java25", "java21", "java17", "java11", "java8.al2"],
    "ruby": ["ruby3.2", "ruby3.3", "ruby3.4"],
    "dotnet": ["dotnet6", "dotnet8", "dotnet10"],
    "provided": ["provided.al2023", "provided.al2"],
}
TESTED_RUNTIMES = [r for rs in RUNTIMES_AGGREGATED.values() for r in rs]


def _family(runtime: str) -> str:
    return next(f for f in MULTIRUNTIME_HANDLERS if runtime.startswith(f))


def _multiruntime(scenario: str, runtimes=None):
    """testing/aws/lambda_utils.py:58 generate_tests: the test runs once per runtime (all of
    TESTED_RUNTIMES unless named), its `multiruntime_lambda` (indirect) built from (scenario,
    runtime, handler), ids the runtimes."""
    import pytest
    runtimes = sorted(runtimes) if runtimes is not None else TESTED_RUNTIMES
    values = [(scenario, r, MULTIRUNTIME_HANDLERS[_family(r)]) for r in runtimes]
    return pytest.mark.parametrize("multiruntime_lambda", values, ids=list(runtimes))


_Markers.multiruntime = staticmethod(_multiruntime)
_Markers.lambda_runtime_update = staticmethod(lambda cls: cls)


class ParametrizedLambda:
    """testing/aws/lambda_utils.py:152 ParametrizedLambda.create_function: the scenario's package
    for the runtime (its zip at `zip_file_path`, which a test may replace), with its defaults,
    waiting until the function is no longer Pending. The packages are LocalStack's
    tests/aws/services/lambda_/functions/common/<scenario>/<family>/src/, copied to
    functions/common/<scenario>/<family>/ (their Makefiles zip src/ as it is); a scenario with no
    copy here (a compiled provided function, java, dotnet, ruby) is NotPortable."""

    def __init__(self, lambda_client, scenario: str, runtime: str, handler: str, role: str, made: list,
                 tmp_dir: str | None = None):
        import tempfile
        src = FUNCTIONS / "common" / scenario / _family(runtime)
        if not src.is_dir():
            from .replay import NotPortable
            raise NotPortable(f"LocalStack builds the {scenario} function for {runtime} with its own "
                              "Makefile (a compiled Go/Rust binary), which the replay does not build")
        self.lambda_client, self.scenario, self.runtime, self.handler, self.role = \
            lambda_client, scenario, runtime, handler, role
        self.made = made
        self.zip_file_path = str(Path(tmp_dir or tempfile.mkdtemp(prefix="replay-mr-")) / f"{scenario}-{short_uid()}.zip")
        with zipfile.ZipFile(self.zip_file_path, "w") as z:
            for f in sorted(src.rglob("*")):
                if f.is_file():
                    info = zipfile.ZipInfo(str(f.relative_to(src)), date_time=(2020, 1, 1, 0, 0, 0))
                    info.external_attr = (0o100755 if f.stat().st_mode & 0o111 else 0o100644) << 16
                    z.writestr(info, f.read_bytes())

    def create_function(self, **kwargs):
        kwargs.setdefault("FunctionName", f"{self.scenario}-{short_uid()}")
        kwargs.setdefault("Runtime", self.runtime)
        kwargs.setdefault("Handler", self.handler)
        kwargs.setdefault("Role", self.role)
        kwargs.setdefault("Code", {"ZipFile": Path(self.zip_file_path).read_bytes()})
        result = self.lambda_client.create_function(**kwargs)
        self.made.append((self.lambda_client, result["FunctionArn"]))
        wait_until(lambda: self.lambda_client.get_function(FunctionName=kwargs["FunctionName"])
                   ["Configuration"]["State"] != "Pending", wait=0.1, strategy="linear", max_retries=300)
        return result


def to_bytes(obj, encoding: str = "utf-8") -> bytes:  # utils/strings.py to_bytes
    return obj.encode(encoding) if isinstance(obj, str) else obj


def cp_r(src: str, dst: str, **_) -> None:  # utils/files.py cp_r (a file here)
    import shutil
    shutil.copy(src, dst)


class _Requests:
    """The one call of `requests` the ported tests make (requests.get(url).content), by urllib:
    the replay needs no HTTP library besides the standard one."""

    @staticmethod
    def get(url: str, **_):
        import urllib.request
        with urllib.request.urlopen(url, timeout=30) as r:
            return SimpleNamespace(content=r.read(), status_code=r.status)


requests = _Requests()
