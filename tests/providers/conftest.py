"""Fixtures for the provider tests: a real local platform (the Lambda API the AWS provider speaks),
a real agent in HTTP mode (what Cloud Run / Knative / OpenFaaS run), dummy AWS credentials."""
from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request

import pytest

from go_binaries import NOT_BUILT, binaries_ok, skip_unless_built

SECRET_KEY = "FAKE-SECRET-KEY-must-never-be-recorded-0123456789"
SESSION_TOKEN = "FAKE-SESSION-TOKEN-must-never-be-recorded-abcdef"


needs_binaries = skip_unless_built()
_binaries_ok = binaries_ok  # tests/driver/test_burst_fake.py reads it from here


@pytest.fixture
def aws_env(monkeypatch, tmp_path):
    """Credentials from the standard chain (here: the environment), with recognisable secrets."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    yield


@pytest.fixture(scope="module")
def platform_endpoint(tmp_path_factory):
    from faascope.providers import local_platform

    if not binaries_ok():
        pytest.skip(NOT_BUILT)
    d = tmp_path_factory.mktemp("platform")
    state = local_platform.start(profile="lambda", data_dir=d, port=0, keep_alive="2s")
    yield state["endpoint"]
    local_platform.stop(d)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_agent(port: int) -> subprocess.Popen:
    """The agent in HTTP mode (no AWS_LAMBDA_RUNTIME_API), as Cloud Run would run it."""
    from faascope.binaries import agent_binary

    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_LAMBDA")}
    env["PORT"] = str(port)
    p = subprocess.Popen([str(agent_binary())], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.time() + 15
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
                if r.status == 200:
                    return p
        except OSError:
            time.sleep(0.05)
    p.kill()
    raise RuntimeError("the agent did not start in HTTP mode")


@pytest.fixture(scope="module")
def agent_urls():
    """Two agents in HTTP mode on loopback."""
    if not binaries_ok():
        pytest.skip(NOT_BUILT)
    procs, urls = [], []
    for _ in range(2):
        port = free_port()
        procs.append(start_agent(port))
        urls.append(f"http://127.0.0.1:{port}/")
    yield urls
    for p in procs:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
