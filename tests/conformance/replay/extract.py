"""Regenerates data/ from LocalStack's repository (a maintainer's tool; CI never runs it: it needs
the repository, CI has only what this writes).

    python3 -m tests.conformance.replay.extract /path/to/localstack/git-dir [commit]

Copies test_lambda_api's snapshot and validation files verbatim and writes data/index.json: for
each recorded test, what it needs beyond Lambda (read from its fixtures and the clients it uses),
its LocalStack `skip_snapshot_verify` paths, and its marker. The rules below are the whole
classification; a test none of them names is "Lambda-only" (an IAM role ARN aside: the platform
accepts any role ARN, so `lambda_su_role` needs nothing)."""
from __future__ import annotations

import ast
import builtins
import json
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).parent
DATA = HERE / "data"
TEST_FILE = "tests/aws/services/lambda_/test_lambda_api.py"
# test_lambda_common: the multiruntime tests (the execution environment per runtime), copied whole
# to ported_common.py but for its LocalStack imports (lsshim's stand-ins)
COMMON_FILE = "tests/aws/services/lambda_/test_lambda_common.py"
SOURCE_FILES = [f.replace(".py", suffix) for f in (TEST_FILE, COMMON_FILE)
                for suffix in (".snapshot.json", ".validation.json")]

# fixture or aws_client attribute -> what it needs that the local platform does not offer
NEEDS = {
    "s3_bucket": "needs S3", "s3_create_bucket": "needs S3", "s3": "needs S3",
    "sqs_create_queue": "needs SQS", "sqs_get_queue_arn": "needs SQS", "sqs": "needs SQS",
    "dynamodb_create_table": "needs DynamoDB", "dynamodb": "needs DynamoDB",
    "kinesis_create_stream": "needs Kinesis", "wait_for_stream_ready": "needs Kinesis", "kinesis": "needs Kinesis",
    "create_event_source_mapping": "needs an event source (SQS, DynamoDB or Kinesis)",
    "ecr_image": "needs ECR (container images)",
    "ec2": "needs EC2 (VPC configuration)",
    "create_secret": "needs Secrets Manager",
    "secondary_aws_client": "needs a second AWS account",
    "sts": "needs STS",
    "kms": "needs KMS",
}
# Cases whose fixture is chosen by a parameter (request.getfixturevalue), invisible to the rules.
CASE_NEEDS = {
    "TestLambdaTag::test_tag_lifecycle[event_source_mapping]": "needs SQS (esm_arn maps a queue)",
}

# What lsshim.py (and the module header write_ported gives ported.py) provides by name; a test
# whose body loads any other module-level name is not ported (its missing names are printed).
PROVIDED = set("""pytest json re base64 io itertools sha256 ClientError ParamValidationError Config
SortingTransformer BytesIO randint Callable logging LOG KB string_length_bytes environment_length_bytes
markers short_uid long_uid load_file get_partition is_aws_cloud wait_until create_lambda_archive
create_zip_file testutil Runtime Architecture TEST_LAMBDA_PYTHON_ECHO TEST_LAMBDA_PYTHON_VERSION
TEST_LAMBDA_VERSION TEST_LAMBDA_NODEJS threading TEST_LAMBDA_PYTHON_ECHO_ZIP DEPRECATED_RUNTIMES
LogFormat to_str arns lambda_function_arn lambda_event_source_mapping_arn capacity_provider_arn
check_concurrency_quota config ShortCircuitWaitException ALL_RUNTIMES ARCHITECTURES
SNAP_START_SUPPORTED_RUNTIMES requests""".split())
FIXTURES = {"aws_client", "snapshot", "create_lambda_function", "create_lambda_function_aws",
            "lambda_su_role", "account_id", "region_name", "secondary_region_name", "cleanups",
            "monkeypatch", "request", "dummylayer", "aws_client_factory", "fn_arn",
            "multiruntime_lambda",  # lsshim.ParametrizedLambda (python's echo scenario)
            "lambda_client"}  # LocalStack's fixture before aws_client (tests ported from OLDER)
# Tests left out although every name is provided: none now. (The concurrency-limit tests are
# ported: they read the account's quota with GetAccountSettings and their transformers replace the
# quota's numbers in AWS's messages, so the recording fixes the messages, not the quota. The
# concurrent-update tests are ported with LocalStack's executor patch replaced by the platform's
# update window.)
NOT_PORTED: dict[str, str] = {}
# Recorded tests whose test LocalStack later removed or changed: ported from the commit of the
# test file at which they were recorded (the snapshot's recorded-date), with that file's path.
# Their methods are named <name>__at_<commit[:10]> in ported.py (the replay reads them as <name>).
OLDER = {
    # recorded 30-09-2022; removed by d6171629f (2023-01-18, "Lambda revisions")
    "TestLambdaVersions::test_publish_with_wrong_revisionid":
        ("e5453ec09b10784c8ba7770f4fd7919672cf6cb7", "tests/integration/awslambda/test_lambda_api.py"),
    # recorded 30-09-2022; removed by 85d1973c6 (2022-10-07); it uploads to S3
    "TestLambdaSizeLimits::test_oversized_lambda":
        ("692cb52b7ca105a1c6b470a247eba73d0da7a8a7", "tests/integration/awslambda/test_lambda_api.py"),
    # recorded 10-04-2024 unparametrised; f67ad4d15 (2024-10-29) parametrised it by resource type
    "TestLambdaTag::test_tag_lifecycle":
        ("9ed51b166c18eecceed60c4ee76d94de5aaf5526", "tests/aws/services/lambda_/test_lambda_api.py"),
}
# Recorded tests and cases no commit of LocalStack's test file has: the snapshot kept entries of
# test code that changed before it was committed (searched with `git log -S` over all history).
NEVER_COMMITTED = {
    "TestLambdaPermissions::test_add_lambda_permission_optional_fields":
        "no LocalStack commit has this test (recorded 21-12-2022, committed in fe9811f9d as "
        "test_add_lambda_permission_fields) and its recording is empty ({}), so there is no answer "
        "of AWS to rebuild a call from",
    # reconstructed.py rebuilds its calls (this reason shows only if it is taken out of there)
    "TestLambdaPermissions::test_lambda_permission_versioning":
        "no LocalStack commit has this test: recorded 21-12-2022, committed (fe9811f9d) as test_lambda_permission_fn_versioning",
    "TestLambdaPermissions::test_lambda_permission_revisions":
        "no LocalStack commit has this test (recorded 23-12-2022 in the PR of fe9811f9d, which committed "
        "none by this name), and its calls are not reconstructed: its recording would pin few of them "
        "(two GetFunction pairs of one function whose version 1 runs python3.8 and $LATEST python3.9, "
        "policies of version 1 with statements s3_2 and s3_3, two precondition failures whose calls "
        "are not named) and it records an API AWS has since changed (no LoggingConfig, "
        "RuntimeVersionConfig or SnapStart in GetFunction; 'Call the GetFunction/GetAlias API' where "
        "AWS now says GetPolicy), so a rebuilt test could only differ or be guessed into passing",
}
NEVER_COMMITTED_CASES = {
    f"TestLambdaFunction::test_function_name_and_qualifier_validation[{case}-{fn}]":
        "no LocalStack commit has this case: recorded 22-08-2024 in the PR squash-merged as ff1c31bce, "
        "whose committed test has one qualifier_too_long case and no function_name_and_qualifier_too_long"
    for case in ("qualifier_too_long0", "qualifier_too_long1", "function_name_and_qualifier_too_long")
    for fn in ("create_function", "delete_function", "get_function", "invoke")
}
# Of those, the cases whose recording is empty ({}): reconstructed.py rebuilds the others' calls
NEVER_COMMITTED_CASES.update({
    f"TestLambdaFunction::test_function_name_and_qualifier_validation[{case}-create_function]":
        "no LocalStack commit has this case (recorded 22-08-2024 in the PR squash-merged as ff1c31bce) "
        "and its recording is empty ({}: the test skipped or stopped before its snapshot), so there is "
        "no answer of AWS to rebuild the call from (reconstructed.py rebuilds the case's other calls)"
    for case in ("qualifier_too_long1", "function_name_and_qualifier_too_long")
})
# Runtimes the local platform offers (agent/platform/runtimes.go Runtimes); a multiruntime case of
# another is "not supported".
OFFERED_RUNTIMES = ("provided.al2023", "provided.al2", "python3.8", "python3.9", "python3.10", "python3.11",
                    "python3.12", "python3.13", "python3.14", "nodejs18.x", "nodejs20.x", "nodejs22.x")
# test_lambda_common's tests that need another service inside the function (invisible to NEEDS)
COMMON_NEEDS = {
    "TestLambdaCallingLocalstack::test_manual_endpoint_injection":
        "needs SQS (the function creates and lists SQS queues through the AWS SDK)",
}
# test_lambda_common's cases whose function LocalStack compiles (its Makefiles: cargo lambda for
# Rust, go build for Go), which the replay does not build
COMMON_NOT_PORTED = {
    f"TestLambdaRuntimesCommon::{t}[{r}]":
        "its provided function is Rust compiled by LocalStack's Makefile (cargo lambda build), not built here"
    for t in ("test_introspection_invoke", "test_uncaught_exception_invoke")
    for r in ("provided.al2023", "provided.al2")
}
COMMON_IMPORTS = {
    "from localstack.services.lambda_.runtimes import RUNTIMES_AGGREGATED, TESTED_RUNTIMES":
        "from .lsshim import RUNTIMES_AGGREGATED, TESTED_RUNTIMES  # replay: LocalStack's lists, copied",
    "from localstack.testing.pytest import markers": "from .lsshim import markers  # replay: stand-in",
    "from localstack.utils.files import cp_r": "from .lsshim import cp_r  # replay: stand-in",
    "from localstack.utils.strings import short_uid, to_bytes":
        "from .lsshim import short_uid, to_bytes  # replay: stand-ins",
}

# Edits to the copied source, each (method, old, new, why); nothing else is changed.
EDITS = [
    ("test_function_name_and_qualifier_validation",
     """            and not is_aws_cloud()
        ):
            pytest.skip("Not implemented")""",
     """            and False  # replay: LocalStack skips these cases for its own gaps; AWS's answers are recorded
        ):
            pytest.skip("Not implemented")""",
     "the cases LocalStack skips for its own gaps are replayed"),
] + [
    # test_lambda_concurrent_{code,config}_updates hold the first update in progress by patching
    # LocalStack's docker executor; here the platform's own update window (agent/platform:
    # Config.UpdateWindow) holds it, so the patch, and the skip where it cannot be applied, go.
    # The rest (the threading.Event set and cleared, the calls, the waiter) is LocalStack's.
    edit for method in ("test_lambda_concurrent_code_updates", "test_lambda_concurrent_config_updates")
    for edit in (
        (method,
         """    @pytest.mark.skipif(
        not is_docker_runtime_executor(),""",
         """    @pytest.mark.skipif(
        False,  # replay: no LocalStack executor to patch: the platform's update window holds the update""",
         "the skip where LocalStack's executor cannot be patched does not apply"),
        (method,
         """        # patch a function necessary for the lambda update to wait until we release it
        # to be able to reliably capture the in-progress update state in LocalStack
        from localstack.services.lambda_.invocation import docker_runtime_executor
        from localstack.services.lambda_.invocation.docker_runtime_executor import (
            get_runtime_client_path,
        )
""",
         """        # replay: LocalStack's patch of its docker executor (these imports and the setattr
        # below) left out: the platform's update window (Config.UpdateWindow) holds the update
""",
         "LocalStack's executor patch is replaced by the platform's update window"),
        (method,
         """        def _runtime_client_path(*args, **kwargs):
            update_finish_event.wait()
            return get_runtime_client_path(*args, **kwargs)

        monkeypatch.setattr(
            docker_runtime_executor, "get_runtime_client_path", _runtime_client_path
        )
""",
         """        # replay: (the patch of get_runtime_client_path left out)
""",
         "LocalStack's executor patch is replaced by the platform's update window"),
    )
]


def git_show(repo: str, commit: str, path: str) -> str:
    return subprocess.run(["git", "-C", repo, "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def _marker_info(decorators) -> tuple[list[str], list[str]]:
    skip, markers = [], []
    for d in decorators:
        text = ast.unparse(d)
        if "skip_snapshot_verify" in text and isinstance(d, ast.Call):
            args = list(d.args) + [k.value for k in d.keywords if k.arg == "paths"]
            for a in args:
                try:
                    skip += list(ast.literal_eval(a))
                except ValueError:
                    pass
            if not args and not d.keywords:
                skip.append("*")  # the whole test's snapshot is unverified
        elif text.startswith("markers.aws."):
            markers.append(text.split(".")[-1])
        elif text.startswith("pytest.mark.skip(") and isinstance(d, ast.Call):
            reason = next((ast.literal_eval(k.value) for k in d.keywords if k.arg == "reason"), "")
            markers.append("skip: " + reason)
    return skip, markers


def test_functions(source: str) -> dict[str, dict]:
    tree = ast.parse(source)
    out = {}
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        cls_skip, _ = _marker_info(cls.decorator_list)
        for fn in cls.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith("test_")):
                continue
            skip, markers = _marker_info(fn.decorator_list)
            names = {a.arg for a in fn.args.args[1:]}
            names |= {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                      and isinstance(n.value, ast.Name) and n.value.id == "aws_client"}
            needs = sorted({NEEDS[n] for n in names if n in NEEDS})
            out[f"{cls.name}::{fn.name}"] = {"needs": needs, "skip_paths": cls_skip + skip,
                                             "markers": markers, "line": fn.lineno,
                                             "multiruntime": any("multiruntime" in ast.unparse(d)
                                                                 for d in fn.decorator_list)}
    return out


def main(repo: str, commit: str = "HEAD") -> None:
    commit = subprocess.run(["git", "-C", repo, "rev-parse", commit], check=True, capture_output=True,
                            text=True).stdout.strip()
    DATA.mkdir(exist_ok=True)
    for path in SOURCE_FILES:
        (DATA / Path(path).name).write_text(git_show(repo, commit, path))
    functions = test_functions(git_show(repo, commit, TEST_FILE))
    older = {}
    for key, (old_commit, path) in OLDER.items():
        fn = test_functions(git_show(repo, old_commit, path))[key]
        older[key] = dict(fn, source={"commit": old_commit, "path": path})
    snapshot = json.loads((DATA / Path(SOURCE_FILES[0]).name).read_text())
    tests = {}
    for node in snapshot:
        short = node.split(".py::", 1)[1]
        base = short.split("[", 1)[0]
        # an OLDER test stands for its unparametrised recording only (the current test's cases stay)
        fn = (older[base] if base in older and short == base else None) or functions.get(base, {
            "needs": [], "skip_paths": [], "markers": [], "line": 0,
            "not_ported": NEVER_COMMITTED.get(base, "its test is no longer in LocalStack's test file")})
        needs = fn["needs"] + ([CASE_NEEDS[short]] if short in CASE_NEEDS else [])
        if fn.get("multiruntime") and "[" in short:
            runtime = short.split("[", 1)[1][:-1]
            if runtime not in OFFERED_RUNTIMES:
                needs.append(f"needs the {runtime} runtime, which the local platform does not offer")
        tests[short] = dict(fn, needs=needs)
        tests[short].pop("multiruntime", None)
        if short in NEVER_COMMITTED_CASES:
            tests[short]["not_ported"] = NEVER_COMMITTED_CASES[short]
    left = write_ported(git_show(repo, commit, TEST_FILE), commit, tests,
                        {k: git_show(repo, c, p) for k, (c, p) in OLDER.items()})
    for short, entry in tests.items():
        if short.split("[")[0] in left:
            entry["not_ported"] = left[short.split("[")[0]]
    for entry in tests.values():
        entry["file"] = "test_lambda_api"
    tests.update(common_tests(repo, commit))
    (DATA / "index.json").write_text(json.dumps(
        {"source": {"repository": "https://github.com/localstack/localstack", "commit": commit,
                    "files": SOURCE_FILES + [TEST_FILE, COMMON_FILE]},
         "tests": tests}, indent=1, sort_keys=True) + "\n")
    print(f"{len(tests)} recorded tests from {commit}")


def common_tests(repo: str, commit: str) -> dict:
    """test_lambda_common's recorded cases for index.json, and ported_common.py: the file whole,
    its LocalStack imports replaced by lsshim's (COMMON_IMPORTS)."""
    source = git_show(repo, commit, COMMON_FILE)
    functions = test_functions(source)
    snapshot = json.loads((DATA / Path(SOURCE_FILES[2]).name).read_text())
    out = {}
    for node in snapshot:
        short = node.split(".py::", 1)[1]
        base, runtime = short.split("[", 1)[0], short.split("[", 1)[1][:-1]
        fn = dict(functions[base])
        fn.pop("multiruntime")
        needs = [COMMON_NEEDS[base]] if base in COMMON_NEEDS else []
        if runtime not in OFFERED_RUNTIMES:
            needs.append(f"needs the {runtime} runtime, which the local platform does not offer")
        out[short] = dict(fn, needs=needs, file="test_lambda_common")
        if short in COMMON_NOT_PORTED and not needs:
            out[short]["not_ported"] = COMMON_NOT_PORTED[short]
    for old, new in COMMON_IMPORTS.items():
        assert old in source, f"import {old!r} no longer in {COMMON_FILE}"
        source = source.replace(old, new)
    (HERE / "ported_common.py").write_text(PORTED_COMMON_HEADER.format(commit=commit) + source)
    return out


PORTED_COMMON_HEADER = '''# LocalStack's test_lambda_common, copied whole from
# https://github.com/localstack/localstack/blob/{commit}/tests/aws/services/lambda_/test_lambda_common.py
# (Apache-2.0; NOTICE beside this file) by extract.py (`common_tests`); the only edits are its
# LocalStack imports, each marked `# replay:`.
# ruff: noqa
# fmt: off
'''


def _names(fn) -> tuple[set, set]:
    """(module-level names the method loads, fixtures it asks for)."""
    stored = {a.arg for a in ast.walk(fn) if isinstance(a, ast.arg)}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            stored.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            stored.add(n.name)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            stored.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            stored |= {(a.asname or a.name).split(".")[0] for a in n.names}
    loads = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    params = set()
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and ast.unparse(d.func).endswith("parametrize") \
                and isinstance(d.args[0], ast.Constant):
            params |= {x.strip() for x in d.args[0].value.split(",")}
    return loads - stored - set(dir(builtins)), {a.arg for a in fn.args.args[1:]} - params


def write_ported(source: str, commit: str, index: dict, older: dict | None = None) -> dict:
    """ported.py: the Lambda-only test methods (and their classes' helpers) whose every name
    lsshim provides, copied verbatim but for EDITS; a test of OLDER from its own source (older:
    {test: that source}), renamed <name>__at_<commit[:10]>. Returns {test: why not ported} for
    the rest."""
    older = older or {}
    lambda_only = {k.split("[")[0] for k, v in index.items() if not v["needs"] and "not_ported" not in v}
    classes, left = {}, {}
    for src, only in [(source, None)] + [(text, key) for key, text in older.items()]:
        _collect(src, only, lambda_only, classes, left)
    return _write(source, commit, classes, left)


def _collect(source: str, only, lambda_only: set, classes: dict, left: dict) -> None:
    """Adds the methods of one source to classes (only the test `only` of an older source)."""
    lines = source.splitlines()
    tree = ast.parse(source)
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            key = f"{cls.name}::{fn.name}"
            start = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
            text = "\n".join(lines[start - 1:fn.end_lineno])
            if only is not None:
                if key != only:
                    continue
            if not fn.name.startswith("test_"):
                if not any("fixture" in ast.unparse(d) for d in fn.decorator_list):
                    classes.setdefault(cls.name, []).append((start, text))  # a helper
                continue
            if key not in lambda_only:
                continue
            skip = next((ast.unparse(d) for d in fn.decorator_list
                         if ast.unparse(d).startswith("pytest.mark.skip(")), None)
            if skip:
                left[key] = f"LocalStack's test is marked {skip} (its recording is partial)"
                continue
            for method, old, new, _ in EDITS:
                if method == fn.name:
                    assert old in text, f"edit for {method} no longer applies"
                    text = text.replace(old, new)
            # the names the method loads once edited (an edit may take a LocalStack name away)
            missing, fixtures = _names(ast.parse(textwrap.dedent(text)).body[0])
            missing = (missing - PROVIDED) | {f"fixture {f}" for f in fixtures - FIXTURES}
            attrs = {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                     and isinstance(n.value, ast.Name) and n.value.id == "aws_client"} - {"lambda_"}
            missing |= {f"aws_client.{a}" for a in attrs}
            if missing or key in NOT_PORTED:
                left[key] = NOT_PORTED.get(key) or "needs " + ", ".join(sorted(missing)) + " (no stand-in)"
                continue
            if only is not None:
                c = OLDER[only][0]
                text = text.replace(f"def {fn.name}(", f"def {fn.name}__at_{c[:10]}(", 1)
                start = f"{start} of {c[:10]}:{OLDER[only][1]}"
            classes.setdefault(cls.name, []).append((start, text))


def _write(source: str, commit: str, classes: dict, left: dict) -> dict:
    lines = source.splitlines()
    tree = ast.parse(source)
    out = [PORTED_HEADER.format(commit=commit)]
    for fname in ("string_length_bytes", "environment_length_bytes"):
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == fname)
        out.append("\n" + "\n".join(lines[fn.lineno - 1:fn.end_lineno]) + "\n")
    for cname, methods in classes.items():
        if not any("def test_" in t for _, t in methods):
            continue
        out.append(f"\n\nclass {cname}:")
        for start, text in methods:
            out.append(f"    # L{start}\n{text}\n")
    (HERE / "ported.py").write_text("\n".join(out))
    return left


PORTED_HEADER = '''"""LocalStack's Lambda API tests, copied verbatim from
https://github.com/localstack/localstack/blob/{commit}/tests/aws/services/lambda_/test_lambda_api.py
(Apache-2.0; NOTICE beside this file), so the replay issues the same calls AWS answered.

Written by extract.py (`write_ported`): the Lambda-only test methods whose every name the stand-ins
in lsshim.py provide, with their classes' helper methods; each keeps its line in LocalStack's file
(`# L<n>`). The edits: the imports below (LocalStack's test utilities are lsshim.py's; its
`itertools` adds Python 3.12's batched), extract.EDITS (each marked `# replay:` where it is), and
the tests of extract.OLDER, copied from the commit they were recorded at (`# L<n> of <commit>:<path>`)
and named <name>__at_<commit>."""
# ruff: noqa
# fmt: off
import base64
import io
import json
import logging
import re
import threading
from collections.abc import Callable
from hashlib import sha256
from io import BytesIO
from random import randint

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, ParamValidationError

from .lsshim import *  # noqa: F403 - LocalStack's test utilities, by their names
from .normalise import SortingTransformer

LOG = logging.getLogger(__name__)

KB = 1024
'''


if __name__ == "__main__":
    main(*sys.argv[1:])
