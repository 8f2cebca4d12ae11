"""Versioned JSON tables shipped inside a package: ``<package>/<dir>/<table>@<version>.json``.

The one loader of the calibration tables (:mod:`faascope.calibration`) and the price tables
(:mod:`faascope.cost.pricing`): finding the files, listing the versions, picking the newest
unless one is named, reading a file once. It lives here, in the lowest layer that has tables
(tests/test_structure.py, LAYERS), so that ``cost`` can use it without ``calibration`` looking up.
What a table *means* (its entries, its checks, its error messages) stays with each caller.
"""
from __future__ import annotations

import copy
import json
from functools import lru_cache
from importlib import resources
from typing import Callable, Optional

from faascope.errors import BadInput


class VersionedTables:
    """The tables of one package folder."""

    def __init__(self, package: str, directory: str = "tables") -> None:
        self.package = package
        self.directory = directory
        # per instance, so two packages' folders never share a cache
        self.index = lru_cache(maxsize=None)(self._index)
        self._raw = lru_cache(maxsize=None)(self._read)

    def _index(self) -> dict[str, dict[str, str]]:
        """table name -> {version: file name}."""
        out: dict[str, dict[str, str]] = {}
        root = resources.files(self.package).joinpath(self.directory)
        for entry in root.iterdir():
            n = entry.name
            if n.endswith(".json") and "@" in n:
                name, _, version = n[:-5].partition("@")
                out.setdefault(name, {})[version] = n
        return out

    def available(self) -> dict[str, list[str]]:
        """Every table and its versions, oldest first."""
        return {k: sorted(v) for k, v in sorted(self.index().items())}

    def _read(self, name: str, version: str) -> dict:
        fname = self.index()[name][version]
        return json.loads(resources.files(self.package).joinpath(self.directory, fname).read_text())

    def load_raw(self, name: str, version: Optional[str],
                 no_table: Callable[[], BadInput],
                 no_version: Callable[[str, list[str]], BadInput]) -> tuple[str, dict]:
        """(version, a fresh copy of the table's JSON): the newest version unless ``version`` is
        named. ``no_table()`` / ``no_version(version, versions)`` make the caller's own error."""
        versions = self.index().get(name)
        if not versions:
            raise no_table()
        if version is None:
            version = max(versions)
        if version not in versions:
            raise no_version(version, sorted(versions))
        return version, copy.deepcopy(self._raw(name, version))
