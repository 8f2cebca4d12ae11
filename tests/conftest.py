"""Puts tests/ itself on sys.path for every test directory, so that the helpers they share
(go_binaries) import by name; and the one fixture several folders share (a platform of their
own). (pytest's default "prepend" import mode already does so when it
loads this file; the explicit insert says so and does not depend on it.)"""
from __future__ import annotations

import sys

import pytest

from faascope import standins
from faascope.providers import local_platform
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)


@pytest.fixture(scope="module")
def platform_dir(tmp_path_factory):
    """A local platform of the test module's own (any free port, no shared directory), as a
    user's running one: campaigns name its data directory; stand-ins it was left with and the
    platform itself are stopped at the end."""
    d = tmp_path_factory.mktemp("platform")
    local_platform.start(profile="lambda", data_dir=d, port=0, keep_alive="30s")
    yield d
    standins.stop_saved(d)
    local_platform.stop(d)
