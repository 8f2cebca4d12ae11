"""docs/platform.md's Compatibility table names tests that exist: a row whose test was renamed
or removed fails here, so the table cannot claim what nothing checks."""
from __future__ import annotations

import ast
import re
from pathlib import Path

HERE = Path(__file__).parent
DOC = HERE.parents[1] / "docs" / "platform.md"


def compat_rows() -> list[tuple[str, list[str]]]:
    text = DOC.read_text()
    section = text.split("\n## Compatibility\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("operation or behaviour", "") or set(cells[0]) <= {"-"}:
            continue
        rows.append((cells[0], re.findall(r"`([\w/.]+\.(?:py|go))::(\w+)`", cells[-1])))
    return rows


def defined_tests(path: Path) -> set[str]:
    if path.suffix == ".go":  # the platform's own Go tests (agent/platform/*_test.go)
        return set(re.findall(r"^func (Test\w+)\(t \*testing\.T\)", path.read_text(), re.M))
    tree = ast.parse(path.read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.name.startswith("test_")}


def test_every_row_names_a_test_that_exists():
    rows = compat_rows()
    assert len(rows) >= 30, "the Compatibility table was not found or lost rows"
    for what, refs in rows:
        assert refs, f"row {what!r} names no test"
        for file, name in refs:
            path = HERE / file if "/" not in file else HERE.parents[1] / file
            assert path.exists(), f"row {what!r}: {file} does not exist"
            assert name in defined_tests(path), f"row {what!r}: {file}::{name} does not exist"


def test_every_conformance_test_module_is_in_the_table():
    named = {file for _, refs in compat_rows() for file, _ in refs}
    for module in ("test_runtimes.py", "test_control_plane.py", "test_cli.py", "test_managed_runtimes.py"):
        assert module in named, module
