"""The AWS CLI, unmodified, against the local platform: a deploy tool's path (create, wait,
invoke, versions, delete) with a third-party function (aws-lambda-go)."""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import uuid

import pytest

from .conftest import ROLE

pytestmark = pytest.mark.skipif(shutil.which("aws") is None, reason="the AWS CLI is installed by scripts/setup.sh (test extra)")


def aws(endpoint, *args, region="us-east-1"):
    env = os.environ | {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": region, "AWS_PAGER": ""}
    r = subprocess.run(["aws", "lambda", *args, "--endpoint-url", endpoint, "--output", "json"],
                       env=env, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def test_aws_cli_create_wait_invoke_publish_delete(platform_endpoint, package, tmp_path):
    name = f"conf-cli-{uuid.uuid4().hex[:8]}"
    zpath = tmp_path / "fn.zip"
    zpath.write_bytes(package("go"))
    rc, out, err = aws(platform_endpoint, "create-function", "--function-name", name, "--runtime", "provided.al2023",
                       "--role", ROLE, "--handler", "bootstrap", "--zip-file", f"fileb://{zpath}")
    assert rc == 0, err
    try:
        assert json.loads(out)["FunctionName"] == name
        rc, _, err = aws(platform_endpoint, "wait", "function-active-v2", "--function-name", name)
        assert rc == 0, err
        payload = tmp_path / "in.json"
        payload.write_text(json.dumps({"op": "print", "line": "from the CLI ✓"}, ensure_ascii=False))
        outfile = tmp_path / "out.json"
        rc, out, err = aws(platform_endpoint, "invoke", "--function-name", name, "--payload", f"fileb://{payload}",
                           "--log-type", "Tail", str(outfile))
        assert rc == 0, err
        meta = json.loads(out)
        assert meta["StatusCode"] == 200 and "FunctionError" not in meta
        assert "from the CLI ✓" in base64.b64decode(meta["LogResult"]).decode()
        assert json.loads(outfile.read_text()) == {"printed": True}
        rc, out, err = aws(platform_endpoint, "publish-version", "--function-name", name)
        assert rc == 0, err
        assert json.loads(out)["Version"] == "1"
        rc, out, err = aws(platform_endpoint, "get-function", "--function-name", name, "--qualifier", "nope")
        assert rc != 0 and "ResourceNotFoundException" in err
    finally:
        rc, _, err = aws(platform_endpoint, "delete-function", "--function-name", name)
        assert rc == 0, err
    rc, _, err = aws(platform_endpoint, "get-function", "--function-name", name)
    assert rc != 0 and "ResourceNotFoundException" in err
