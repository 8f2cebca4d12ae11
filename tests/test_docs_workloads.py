"""docs/workloads.md lists every workload kind's parameters and every results column from their
one sources (the agent's request schema; the store's MEASURES): regenerating it changes nothing."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from faascope.schemas import workload_kinds
from faascope.store.measures import MEASURES

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "workloads.md"


def test_generated_blocks_are_up_to_date():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "workloads_doc.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_every_kind_and_column_is_on_the_page_with_an_example():
    text = DOC.read_text()
    for kind in workload_kinds():
        assert f"### `{kind}`" in text
    for m in MEASURES:
        assert f"| `{m.name}` |" in text
    examples = {line.split("`")[1] for line in text.splitlines() if line.startswith("| `")
                and "examples/" in line}
    # every example spec the page names exists and every kind has one
    for path in [p for line in text.splitlines() for p in line.split("`") if p.startswith("examples/")]:
        assert (ROOT / path).is_file(), path
    assert examples >= set(workload_kinds()) - {"spin"}  # spin shares noop's row
