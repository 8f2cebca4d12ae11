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
        fn = functions.get(short.split("[", 1)[0], {"needs": ["test no longer in the test file"],
                                                   "skip_paths": [], "markers": [], "line": 0})
        tests[short] = fn
    (DATA / "index.json").write_text(json.dumps(
        {"source": {"repository": "https://github.com/localstack/localstack", "commit": commit,
                    "files": SOURCE_FILES + [TEST_FILE]},
         "tests": tests}, indent=1, sort_keys=True) + "\n")
    print(f"{len(tests)} recorded tests from {commit}")


if __name__ == "__main__":
    main(*sys.argv[1:])
