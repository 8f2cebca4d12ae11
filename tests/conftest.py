"""Puts tests/ itself on sys.path for every test directory, so that the helpers they share
(go_binaries) import by name. (pytest's default "prepend" import mode already does so when it
loads this file; the explicit insert says so and does not depend on it.)"""
from __future__ import annotations

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
