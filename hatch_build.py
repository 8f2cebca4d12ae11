"""Build hook: compile the Go agent and platform into the package.

`pip install .` and `pip install -e .` both run this, so Go and Python are the only
prerequisites. Binaries are static (CGO_ENABLED=0) so the agent runs unchanged on Lambda
(provided.al2023), in Cloud Run and on the local platform.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

HOST_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def build_go(root: Path) -> list[Path]:
    go = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(go).exists() and not shutil.which(go):
        raise RuntimeError("faascope needs Go (https://go.dev/dl) to build its agent and platform")
    out = root / "src" / "faascope" / "_bin"
    out.mkdir(parents=True, exist_ok=True)
    host = HOST_ARCH.get(platform.machine(), "amd64")
    # (binary, GOARCH, output name): the platform runs here; the agent is packaged for Lambda in
    # both architectures, and a host-arch copy is what the local platform executes.
    targets = [("faascope-platform", host, "faascope-platform")]
    for arch in ("amd64", "arm64"):
        targets.append(("faascope-agent", arch, f"faascope-agent-{arch}"))
    built = []
    for cmd, arch, name in targets:
        env = dict(os.environ, CGO_ENABLED="0", GOOS="linux", GOARCH=arch)
        dest = out / name
        subprocess.run(
            [go, "build", "-trimpath", "-ldflags=-s -w", "-o", str(dest), f"./cmd/{cmd}"],
            cwd=root / "agent", env=env, check=True,
        )
        built.append(dest)
    return built


class GoBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        root = Path(self.root)
        built = build_go(root)
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version == "editable":
            return  # the .pth points at src/, where the binaries now are
        for path in built:
            rel = path.relative_to(root).as_posix()
            build_data["force_include"][rel] = f"faascope/_bin/{path.name}"
