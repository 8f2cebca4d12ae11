"""Where the Go binaries built at install time live."""
from __future__ import annotations

import platform
from pathlib import Path

from faascope.errors import Failure

BIN_DIR = Path(__file__).parent / "_bin"
# The managed runtimes (one directory a family: its committed bootstrap and AWS's runtime
# interface client, which scripts/setup.sh installs); the platform mounts one at /var/runtime.
RUNTIMES_DIR = Path(__file__).parent / "_runtimes"
HOST_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
# Lambda's names for architectures -> Go's
LAMBDA_ARCH = {"x86_64": "amd64", "arm64": "arm64"}


# In a source checkout (editable install) the Go sources sit beside the package; rebuild when
# they changed, so a stale binary never measures with yesterday's code.
_SOURCE_ROOT = Path(__file__).resolve().parents[2]
_checked = False


def _rebuild_if_stale() -> None:
    global _checked
    if _checked:
        return
    _checked = True
    agent_dir = _SOURCE_ROOT / "agent"
    if not (agent_dir / "go.mod").exists() or not BIN_DIR.exists():
        return
    built = [p.stat().st_mtime for p in BIN_DIR.iterdir() if p.name.startswith("faascope-")]
    if not built:
        return
    newest_src = max(p.stat().st_mtime for p in agent_dir.rglob("*")
                     if p.suffix in (".go", ".mod", ".sum") and not p.name.endswith("_test.go"))
    if newest_src > min(built):
        import importlib.util

        spec = importlib.util.spec_from_file_location("faascope_gobuild", _SOURCE_ROOT / "gobuild.py")
        if spec and spec.loader:
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            mod.build_go(_SOURCE_ROOT)


def binary(name: str) -> Path:
    _rebuild_if_stale()
    path = BIN_DIR / name
    if not path.exists():
        raise Failure(f"{path} is missing: reinstall faascope (pip install .) so its Go build hook runs")
    return path


def agent_binary(arch: str | None = None) -> Path:
    goarch = LAMBDA_ARCH[arch] if arch else HOST_ARCH.get(platform.machine(), "amd64")
    return binary(f"faascope-agent-{goarch}")


def platform_binary() -> Path:
    return binary("faascope-platform")


def dispatch_binary() -> Path:
    """The burst dispatcher (agent/cmd/faascope-dispatch), built for this machine."""
    return binary("faascope-dispatch")


def shaper_binary() -> Path:
    """The stand-ins' shaping proxy (agent/cmd/faascope-shaper), built for this machine."""
    return binary("faascope-shaper")
