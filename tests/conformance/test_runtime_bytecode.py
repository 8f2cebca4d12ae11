"""The python3.* runtime's client ships compiled, for every interpreter the platform runs it on.

The platform mounts the client (src/faascope/_runtimes/python) read-only at /var/runtime, so
CPython cannot cache what it compiles there: without bytecode installed beside the source, every
cold start compiled awslambdaric and simplejson again. Measured with
tests/calibration/test_init_cpu.py on this machine: python3.12's Init Duration 132 ms without
(x1.58 lambda-perf's 83.7 ms; x2.04 on a loaded CI machine), 94 ms with. scripts/setup.sh and
scripts/interpreters.sh compile it, one tag per interpreter."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

RUNTIMES = Path(__file__).resolve().parents[2] / "src" / "faascope" / "_runtimes"
CLIENT = RUNTIMES / "python"

#: run by each interpreter: every module of the client whose bytecode is missing or stale (the
#: pyc header's source mtime and size, PEP 552's timestamp form, against the source's)
CHECK = r"""
import importlib.util, os, sys
root = sys.argv[1]
bad = []
for d, _, files in os.walk(root):
    if "__pycache__" in d:
        continue
    for f in files:
        if not f.endswith(".py") or f == "bootstrap.py":  # bootstrap.py runs as __main__
            continue
        src = os.path.join(d, f)
        pyc = importlib.util.cache_from_source(src)
        try:
            head = open(pyc, "rb").read(16)
        except OSError:
            bad.append(os.path.relpath(src, root) + ": no bytecode")
            continue
        st = os.stat(src)
        if (head[:4] != importlib.util.MAGIC_NUMBER or int.from_bytes(head[8:12], "little") != int(st.st_mtime) & 0xFFFFFFFF
                or int.from_bytes(head[12:16], "little") != st.st_size & 0xFFFFFFFF):
            bad.append(os.path.relpath(src, root) + ": stale bytecode")
print("\n".join(bad))
"""


def _interpreters() -> list[Path]:
    """The machine's CPython (the sandbox's when the platform has no /var/lang of the runtime's)
    and each runtime's own (scripts/interpreters.sh)."""
    found = [Path("/usr/bin/python3")] if Path("/usr/bin/python3").exists() else []
    return found + sorted(RUNTIMES.glob("lang/python*/bin/python3"))


@pytest.mark.parametrize("python", _interpreters(), ids=str)
def test_the_client_has_current_bytecode(python: Path):
    out = subprocess.run([str(python), "-S", "-c", CHECK, str(CLIENT)], capture_output=True,
                         text=True, check=True, timeout=60).stdout.strip()
    assert out == "", f"{python}: {out}"
