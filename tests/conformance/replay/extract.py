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
from pathlib import Path

HERE = Path(__file__).parent
DATA = HERE / "data"
TEST_FILE = "tests/aws/services/lambda_/test_lambda_api.py"
SOURCE_FILES = [TEST_FILE.replace(".py", ".snapshot.json"), TEST_FILE.replace(".py", ".validation.json")]

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
check_concurrency_quota config ShortCircuitWaitException""".split())
FIXTURES = {"aws_client", "snapshot", "create_lambda_function", "create_lambda_function_aws",
            "lambda_su_role", "account_id", "region_name", "secondary_region_name", "cleanups",
            "monkeypatch", "request", "dummylayer", "aws_client_factory", "fn_arn"}
# Tests left out although every name is provided: their recorded answers depend on the recording
# account's quotas, which LocalStack imitates by patching its own limits (config.LAMBDA_LIMITS_*).
NOT_PORTED = {
    "TestLambdaReservedConcurrency::test_function_concurrency_limits": "its answers depend on the recording account's concurrency quota (LocalStack patches its limits to 5)",
    "TestLambdaProvisionedConcurrency::test_provisioned_concurrency_limits": "its answers depend on the recording account's concurrency quota (LocalStack patches its limits to 5)",
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
                                             "markers": markers, "line": fn.lineno}
    return out


def main(repo: str, commit: str = "HEAD") -> None:
    commit = subprocess.run(["git", "-C", repo, "rev-parse", commit], check=True, capture_output=True,
                            text=True).stdout.strip()
    DATA.mkdir(exist_ok=True)
    for path in SOURCE_FILES:
        (DATA / Path(path).name).write_text(git_show(repo, commit, path))
    functions = test_functions(git_show(repo, commit, TEST_FILE))
    snapshot = json.loads((DATA / Path(SOURCE_FILES[0]).name).read_text())
    tests = {}
    for node in snapshot:
        short = node.split(".py::", 1)[1]
        fn = functions.get(short.split("[", 1)[0], {
            "needs": [], "skip_paths": [], "markers": [], "line": 0,
            "not_ported": "its test is no longer in LocalStack's test file (recorded before it was removed)"})
        tests[short] = dict(fn, needs=fn["needs"] + ([CASE_NEEDS[short]] if short in CASE_NEEDS else []))
    left = write_ported(git_show(repo, commit, TEST_FILE), commit, tests)
    for short, entry in tests.items():
        if short.split("[")[0] in left:
            entry["not_ported"] = left[short.split("[")[0]]
    (DATA / "index.json").write_text(json.dumps(
        {"source": {"repository": "https://github.com/localstack/localstack", "commit": commit,
                    "files": SOURCE_FILES + [TEST_FILE]},
         "tests": tests}, indent=1, sort_keys=True) + "\n")
    print(f"{len(tests)} recorded tests from {commit}")


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


def write_ported(source: str, commit: str, index: dict) -> dict:
    """ported.py: the Lambda-only test methods (and their classes' helpers) whose every name
    lsshim provides, copied verbatim but for EDITS. Returns {test: why not ported} for the rest."""
    lines = source.splitlines()
    tree = ast.parse(source)
    lambda_only = {k.split("[")[0] for k, v in index.items() if not v["needs"]}
    classes, left = {}, {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
            key = f"{cls.name}::{fn.name}"
            start = min([d.lineno for d in fn.decorator_list] + [fn.lineno])
            text = "\n".join(lines[start - 1:fn.end_lineno])
            if not fn.name.startswith("test_"):
                if not any("fixture" in ast.unparse(d) for d in fn.decorator_list):
                    classes.setdefault(cls.name, []).append((start, text))  # a helper
                continue
            if key not in lambda_only:
                continue
            missing, fixtures = _names(fn)
            missing = (missing - PROVIDED) | {f"fixture {f}" for f in fixtures - FIXTURES}
            attrs = {n.attr for n in ast.walk(fn) if isinstance(n, ast.Attribute)
                     and isinstance(n.value, ast.Name) and n.value.id == "aws_client"} - {"lambda_"}
            missing |= {f"aws_client.{a}" for a in attrs}
            if missing or key in NOT_PORTED:
                left[key] = NOT_PORTED.get(key) or "needs " + ", ".join(sorted(missing)) + " (no stand-in)"
                continue
            for method, old, new, _ in EDITS:
                if method == fn.name:
                    assert old in text, f"edit for {method} no longer applies"
                    text = text.replace(old, new)
            classes.setdefault(cls.name, []).append((start, text))
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
(`# L<n>`). The edits: the imports below (LocalStack's test utilities are lsshim.py's), and
extract.EDITS (each marked `# replay:` where it is)."""
# ruff: noqa
# fmt: off
import base64
import io
import itertools
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
