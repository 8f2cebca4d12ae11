"""Builds the third-party conformance functions (functions/<runtime>/) into Lambda zip packages.

Each package is cached by the content of its sources and the toolchain's version, under
$FAASCOPE_CONFORMANCE_CACHE (default ~/.cache/faascope/conformance): CI builds each once, and a
developer's rerun reuses them. Nothing of faascope's goes into a package: these are functions
as a user of aws-lambda-go, awslambdaric or lambda_runtime builds them.
"""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

FUNCTIONS = Path(__file__).parent / "functions"
GO = shutil.which("go") or "/usr/local/go/bin/go"
CARGO = shutil.which("cargo") or str(Path.home() / ".cargo/bin/cargo")
# The interpreter the sandbox has: the host's /usr is bound read-only into every sandbox.
SANDBOX_PYTHON = "/usr/bin/python3"

# Seconds each build took in this session (0 when it came from the cache); the tests print them.
build_seconds: dict[str, float] = {}


def cache_dir() -> Path:
    d = Path(os.environ.get("FAASCOPE_CONFORMANCE_CACHE")
             or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "faascope" / "conformance")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _tool_version(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def _digest(src: Path, extra: str) -> str:
    h = hashlib.sha256(extra.encode())
    for p in sorted(src.rglob("*")):
        if p.is_file() and "target" not in p.relative_to(src).parts:
            h.update(str(p.relative_to(src)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def zip_tree(files: dict[str, Path]) -> bytes:
    """A zip of arcname -> file, bootstrap (and every other executable) with mode 0755."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, path in sorted(files.items()):
            info = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            mode = 0o755 if os.access(path, os.X_OK) or arc == "bootstrap" else 0o644
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, path.read_bytes())
    return buf.getvalue()


def _cached(runtime: str, key: str, build) -> bytes:
    out = cache_dir() / f"{runtime}-{key}.zip"
    if out.exists():
        build_seconds.setdefault(runtime, 0.0)
        return out.read_bytes()
    t0 = time.monotonic()
    data = build()
    build_seconds[runtime] = time.monotonic() - t0
    tmp = out.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)
    for stale in cache_dir().glob(f"{runtime}-*.zip"):  # packages of sources that changed since
        if stale != out:
            stale.unlink(missing_ok=True)
    return data


def _run(argv, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def go_zip() -> bytes:
    """aws-lambda-go, static (CGO_ENABLED=0), as AWS's docs build provided.al2023 functions."""
    src = FUNCTIONS / "go"
    key = _digest(src, _tool_version([GO, "version"]))

    def build():
        work = cache_dir() / f"go-build-{key}"
        work.mkdir(exist_ok=True)
        env = os.environ | {"CGO_ENABLED": "0", "GOOS": "linux", "GOFLAGS": "-mod=readonly -buildvcs=false"}
        _run([GO, "build", "-trimpath", "-tags", "lambda.norpc", "-ldflags=-s -w", "-o",
              str(work / "bootstrap"), "."], cwd=src, env=env, timeout=600)
        data = zip_tree({"bootstrap": work / "bootstrap"})
        shutil.rmtree(work, ignore_errors=True)
        return data

    return _cached("go", key, build)


def python_zip() -> bytes:
    """awslambdaric installed for the sandbox's interpreter's ABI, under python/ in the package."""
    src = FUNCTIONS / "python"
    pyver = _tool_version([SANDBOX_PYTHON, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
    key = _digest(src, "py" + pyver)

    def build():
        work = cache_dir() / f"python-build-{key}"
        shutil.rmtree(work, ignore_errors=True)
        (work / "python").mkdir(parents=True)
        _run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-compile",
              "--target", str(work / "python"), "--python-version", pyver, "--implementation", "cp",
              "--only-binary=:all:", "-r", str(src / "requirements.txt")], timeout=600)
        # The package must import under the interpreter that will run it, not only pytest's.
        _run([SANDBOX_PYTHON, "-c", "import awslambdaric.bootstrap"], env={"PYTHONPATH": str(work / "python")})
        files = {"bootstrap": src / "bootstrap", "handler.py": src / "handler.py"}
        for p in (work / "python").rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts:
                files["python/" + str(p.relative_to(work / "python"))] = p
        data = zip_tree(files)
        shutil.rmtree(work, ignore_errors=True)
        return data

    return _cached("python", key, build)


def rust_zip() -> bytes:
    """lambda_runtime (crates.io), release build; the target directory is kept for reruns."""
    src = FUNCTIONS / "rust"
    key = _digest(src, _tool_version([CARGO, "--version"]))

    def build():
        target = cache_dir() / "rust-target"
        _run([CARGO, "build", "--release", "--locked", "--target-dir", str(target)], cwd=src, timeout=1200,
             env=os.environ | {"PATH": os.environ.get("PATH", "") + ":" + str(Path(CARGO).parent)})
        return zip_tree({"bootstrap": target / "release" / "bootstrap"})

    return _cached("rust", key, build)


BUILDERS = {"go": go_zip, "python": python_zip, "rust": rust_zip}
