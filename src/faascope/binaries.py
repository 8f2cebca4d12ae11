"""Where the Go binaries built at install time live."""
from __future__ import annotations

import platform
from pathlib import Path

from faascope.errors import Failure

BIN_DIR = Path(__file__).parent / "_bin"
HOST_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}
# Lambda's names for architectures -> Go's
LAMBDA_ARCH = {"x86_64": "amd64", "arm64": "arm64"}


def binary(name: str) -> Path:
    path = BIN_DIR / name
    if not path.exists():
        raise Failure(f"{path} is missing: reinstall faascope (pip install .) so its Go build hook runs")
    return path


def agent_binary(arch: str | None = None) -> Path:
    goarch = LAMBDA_ARCH[arch] if arch else HOST_ARCH.get(platform.machine(), "amd64")
    return binary(f"faascope-agent-{goarch}")


def platform_binary() -> Path:
    return binary("faascope-platform")
