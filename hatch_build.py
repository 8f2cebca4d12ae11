"""Build hook: compile the Go agent and platform into the package.

`pip install .` and `pip install -e .` both run this, so Go and Python are the only
prerequisites. Binaries are static (CGO_ENABLED=0) so the agent runs unchanged on Lambda
(provided.al2023), in Cloud Run and on the local platform.
"""
from __future__ import annotations

import sys
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

sys.path.insert(0, str(Path(__file__).parent))
from gobuild import build_go  # noqa: E402


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
            build_data["force_include"][str(path)] = f"faascope/_bin/{path.name}"
