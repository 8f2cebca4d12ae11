"""Whether the Go binaries (the agent and the local platform) are built, for the tests that run
them: tests/driver and tests/providers."""
from __future__ import annotations

import pytest

NOT_BUILT = "the Go binaries are not built (pip install -e .)"


def binaries_ok() -> bool:
    try:
        from faascope.binaries import agent_binary, platform_binary
        platform_binary()
        agent_binary()
        return True
    except Exception:
        return False


def skip_unless_built() -> pytest.MarkDecorator:
    """A mark that skips the test when the binaries are not built (checked when it is made)."""
    return pytest.mark.skipif(not binaries_ok(), reason=NOT_BUILT)
