"""Fixtures for the report tests: a results store made by the real campaign runner with a FAKE,
in-process provider (no platform; latencies drawn from a model of the cell), and reports built
once per session."""
from __future__ import annotations

import json
import math
import random
import secrets
import shutil
from pathlib import Path

import pytest

from faascope.providers.base import FunctionConfig, Provider
from faascope.providers.invocation import InvokeResult, classify

REPO = Path(__file__).resolve().parents[2]
#: the 2024 thesis's measurements, shipped with the examples (examples/data/thesis-2024/README.md)
THESIS_CSV = REPO / "examples/data/thesis-2024/main_experiment.csv"

SPEC = """
name: report-test
description: thesis-style local file I/O design, run with an in-process fake provider
provider:
  kind: local
function:
  memory_mb: 128
  ephemeral_mb: 2048
  timeout_s: 900
workload:
  kind: fileio
  engine: native
  pattern: sequential
  source: urandom
factors:
  profile: [lambda, gcf]
  memory: [128, 2048]
  file_size: [10KB, 1024000KB]
  io_size: [512B, 128KiB]
  op: [read, write]
overrides:
  - when: "op == 'read'"
    set: {direct: true, prepare: true}
design:
  type: two_level
  replications: {reps}
  warmup: 1
  seed: 7
  rules:
    - io_size <= file_size
    - file_size < memory
"""


class FakeFileIOProvider(Provider):
    """Answers like the agent with a latency modelled on the cell (bytes / bandwidth, more spread
    on small memory, a cold-start penalty, evictions); every `fail_every`-th call fails; simulated send
    times are 4 min apart from 2024-04-10 09:00 UTC, so a campaign spans hours."""
    kind = "fake"

    def __init__(self, fail_every: int = 29, retry_every: int = 11, seed: int = 1):
        self.rng = random.Random(seed)
        self.fail_every = fail_every
        self.retry_every = retry_every
        self.cfg: dict[str, FunctionConfig] = {}
        self.instance: dict[str, str | None] = {}
        self.n = 0
        self.t0 = 1_712_739_600 * 10**9  # 2024-04-10T09:00:00Z

    def deploy(self, name, config):
        self.cfg[name] = config
        self.instance[name] = None

    def update_configuration(self, name, config):
        self.deploy(name, config)

    def force_cold(self, name):
        self.instance[name] = None

    def teardown(self, name):
        self.cfg.pop(name, None)

    def invoke(self, name, payload):
        self.n += 1
        w = payload["workload"]
        cfg = self.cfg[name]
        cold = self.instance.get(name) is None or self.rng.random() < 0.15  # eviction now and then
        if cold:
            self.instance[name] = secrets.token_hex(8)
        mem = cfg.memory_mb
        bw = (40e6 if cfg.profile == "lambda" else 90e6) * (mem / 128) ** 0.5
        ops = max(1, w["file_size"] // w["io_size"])
        base = w["file_size"] / bw + ops * (2e-6 if w["op"] == "write" else 6e-6)
        sigma = 0.15 + (0.5 if mem == 128 else 0.1)
        elapsed = base * math.exp(self.rng.gauss(0, sigma)) * (1.6 if cold else 1.0)
        send = self.t0 + self.n * 240 * 10**9
        end = send + int(elapsed * 1e9) + 30_000_000
        if self.fail_every and self.n % self.fail_every == 0:
            body = json.dumps({"errorType": "Runtime.ExitError", "errorMessage": "fake crash"}).encode()
            fields = classify(body, "Unhandled")
        else:
            body = json.dumps({
                "ok": True, "cold": cold,
                "instance": {"id": self.instance[name], "started_at": "", "sandbox": f"/fake/{name}",
                             "boot_id": "fake", "cpu_quota": None, "memory_limit_bytes": None},
                "timings": {"received_ns": send, "workload_start_ns": send, "workload_end_ns": end},
                "workload": {"kind": "fileio", "elapsed_s": elapsed, "bytes": w["file_size"], "ops": ops},
                "error": None}).encode()
            fields = classify(body, None)
        retries = 1 if self.retry_every and self.n % self.retry_every == 0 else 0
        return InvokeResult(**fields, send_ns=send, headers_ns=end, end_ns=end + 1000, attempts=1 + retries,
                            retries=retries, request_id=secrets.token_hex(4))


def make_store(path: Path, reps: int = 10) -> Path:
    from faascope.driver.runner import run_campaign

    spec = path.parent / f"{path.stem}.yaml"
    spec.write_text(SPEC.replace("{reps}", str(reps)))
    run_campaign(spec, path, provider_factory=lambda _: FakeFileIOProvider(), progress=False)
    return path


@pytest.fixture(scope="session")
def fake_store(tmp_path_factory) -> Path:
    return make_store(tmp_path_factory.mktemp("store") / "campaign.db")


@pytest.fixture(scope="session")
def store_report(tmp_path_factory, fake_store):
    """Report of the fake campaign with PNG figures (PDF and SVG are checked on one figure in
    test_report_content.py, to keep the suite fast)."""
    from faascope.report.build import build_report

    out = tmp_path_factory.mktemp("store-report")
    return build_report(fake_store, out, formats=("png",), jobs=2, n_boot=300)


@pytest.fixture(scope="session")
def thesis_report(tmp_path_factory):
    """Report of the thesis reference data (HTML only: the browser test needs no static files)."""
    from faascope.report.build import build_report

    out = tmp_path_factory.mktemp("thesis-report")
    return build_report(THESIS_CSV, out, factors=["system_name", "resource_tier", "io_size_bytes"],
                        scenario=["operation_type", "file_size_bytes"], latest=150, formats=(), n_boot=300)


def keep_copy(src: Path, name: str) -> None:
    """A copy of a screenshot under reports/ (gitignored) for people to look at."""
    dest = REPO / "reports" / "screenshots"
    try:
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, dest / name)
    except OSError:
        pass
