"""The INIT phase's CPU on the lambda profile (agent/platform/initcpu.go), held to lambda-perf's
published Init Durations (src/faascope/calibration/distributions/lambda-perf-init.json).

On Lambda a runtime's Init Duration does not depend on the memory size (lambda-perf's medians:
Go 49.8 / 49.8 ms, python3.12 83.7 / 83.5 ms, nodejs20.x 141.7 / 140.3 ms at 128 / 1024 MB). The
profile runs INIT at init_vcpu and adds init_overhead inside it (both in the platform-lambda
table): without them a 128 MB function's start-up was held to 7.2 % of a vCPU, and python3.12's
Init Duration was ~960 ms at 128 MB against ~100 ms at 1024 MB here. Go's figure is the
overhead's fit (held to x1.5); python3.12's and nodejs20.x's are predictions (held to x2: their
start-ups here are not Lambda's, see PREDICTED_WITHIN). Each local figure is the fastest of five
cold starts, in rounds: the machine's own load only adds time."""
from __future__ import annotations

import base64
import io
import re
import zipfile
from pathlib import Path

import pytest

from faascope.calibration.reference import reference
from faascope.providers import local_platform
from tests.conformance import builds
from tests.conformance.conftest import ROLE, client_for

FUNCTIONS = Path(__file__).resolve().parents[1] / "conformance" / "functions"
SIZES = (128, 1024)
COLD_STARTS = 5
#: the runtimes measured: (Runtime, Handler, the lambda-perf set's prefix)
RUNTIMES = {"go": ("provided.al2023", "bootstrap", "go_provided_al2023"),
            "python": ("python3.12", "handler.handler", "python312"),
            "node": ("nodejs20.x", "index.handler", "nodejs20x")}
WITHIN = 1.5
#: the managed runtimes' inits are predictions: their start-up here is not Lambda's (measured
#: 2026-11-28 on a quiet machine: python3.12 x1.12-1.15 of lambda-perf's median, slower,
#: nodejs20.x x0.68-0.73, faster; under a load average of 5, nodejs20.x x1.8), so they are held
#: to x2, the Go init (the fit) to x1.5. Without the runtime client's bytecode python3.12's was
#: x1.58 here and x2.04 in CI (tests/conformance/test_runtime_bytecode.py)
PREDICTED_WITHIN = 2.0
FIT = "go"


def _zip(files: dict[str, Path]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, path in files.items():
            z.write(path, name)
    return buf.getvalue()


def _code(name: str) -> bytes:
    if name == "go":
        return builds.BUILDERS["go"]()
    if name == "python":
        return _zip({"handler.py": FUNCTIONS / "managed_python" / "handler.py"})
    return _zip({"index.js": FUNCTIONS / "managed_node" / "index.js"})


@pytest.fixture(scope="module")
def init_ms(tmp_path_factory) -> dict[tuple[str, int], float]:
    """(runtime, memory MB) -> the fastest Init Duration of COLD_STARTS cold starts, ms. The cold
    starts run in rounds, one of every function per round, so a slow stretch of the machine
    (minutes of ×1.35-2 measured on 2026-11-28) lands on every function alike: run one function's
    three back to back, python3.12 at 128 MB caught one in a clean-clone run (222.7 ms against
    146.0 at 1024 MB, and 94 ms on a quiet machine)."""
    data = tmp_path_factory.mktemp("init-cpu")
    state = local_platform.start(profile="lambda", data_dir=data, port=0, keep_alive="10m")
    lam = client_for(state["endpoint"])
    inits: dict[tuple[str, int], list[float]] = {}
    try:
        for name, (runtime, handler, _) in RUNTIMES.items():
            code = _code(name)
            for mb in SIZES:
                fn = f"init-{name}-{mb}"
                lam.create_function(FunctionName=fn, Runtime=runtime, Role=ROLE, Handler=handler,
                                    Code={"ZipFile": code}, MemorySize=mb, Timeout=30)
                lam.get_waiter("function_active_v2").wait(FunctionName=fn)
                inits[(name, mb)] = []
        for i in range(COLD_STARTS):
            for name, mb in inits:
                fn = f"init-{name}-{mb}"
                # a configuration change retires the warm instance: the next invoke is cold
                lam.update_function_configuration(FunctionName=fn,
                                                  Environment={"Variables": {"N": str(i)}})
                lam.get_waiter("function_updated_v2").wait(FunctionName=fn)
                r = lam.invoke(FunctionName=fn, Payload=b"{}", LogType="Tail")
                assert "FunctionError" not in r, r["Payload"].read()
                log = base64.b64decode(r["LogResult"]).decode()
                m = re.search(r"Init Duration: ([0-9.]+) ms", log)
                assert m, log
                inits[(name, mb)].append(float(m.group(1)))
    finally:
        local_platform.stop(data)
    return {k: min(v) for k, v in inits.items()}


def _published(name: str, mb: int) -> float:
    return reference("lambda-perf-init", f"{RUNTIMES[name][2]}_{mb}").full_quantiles_s["p50"] * 1e3


@pytest.mark.parametrize("name", list(RUNTIMES))
def test_init_duration_does_not_grow_at_128_mb(init_ms, name):
    published = _published(name, 128) / _published(name, 1024)
    assert 1 / WITHIN < published < WITHIN  # the premise, from the committed data
    local = init_ms[(name, 128)] / init_ms[(name, 1024)]
    assert 1 / WITHIN < local < WITHIN, (name, init_ms)


@pytest.mark.parametrize("name", list(RUNTIMES))
@pytest.mark.parametrize("mb", SIZES)
def test_init_duration_is_close_to_lambda_perf(init_ms, name, mb):
    within = WITHIN if name == FIT else PREDICTED_WITHIN
    ratio = init_ms[(name, mb)] / _published(name, mb)
    assert 1 / within < ratio < within, (name, mb, init_ms[(name, mb)], _published(name, mb))
