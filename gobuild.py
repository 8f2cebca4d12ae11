"""Compile the Go agent, platform and burst dispatcher into src/faascope/_bin (used by the build hook and by
faascope itself when a source checkout's Go files changed)."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

HOST_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def build_go(root: Path) -> list[Path]:
    go = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(go).exists():
        raise RuntimeError("faascope needs Go (https://go.dev/dl) to build its agent and platform")
    # go build runs in agent/: a relative root would put the binaries under agent/ (it did once,
    # and they were committed).
    root = Path(root).resolve()
    out = root / "src" / "faascope" / "_bin"
    out.mkdir(parents=True, exist_ok=True)
    host = HOST_ARCH.get(platform.machine(), "amd64")
    # The platform runs here; the agent is packaged for Lambda in both architectures, and the
    # host-arch copy is also what the local platform executes.
    targets = [("faascope-platform", host, "faascope-platform"),
               ("faascope-dispatch", host, "faascope-dispatch"),  # the burst driver's sender
               ("faascope-shaper", host, "faascope-shaper")]  # the stand-ins' cloud-shaped proxy
    targets += [("faascope-agent", arch, f"faascope-agent-{arch}") for arch in ("amd64", "arm64")]
    built = []
    for cmd, arch, name in targets:
        env = dict(os.environ, CGO_ENABLED="0", GOOS="linux", GOARCH=arch)
        dest = out / name
        subprocess.run([go, "build", "-trimpath", "-ldflags=-s -w", "-o", str(dest), f"./cmd/{cmd}"],
                       cwd=root / "agent", env=env, check=True)
        built.append(dest)
    return built
