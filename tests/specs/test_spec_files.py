"""A spec file that is not YAML text, or YAML with a key twice: exit 2 naming the problem
(a binary file was a UnicodeDecodeError with exit 1; a duplicate key silently kept the last)."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.errors import BadInput
from faascope.specs.loader import load_spec

GOOD = """name: t
provider: {kind: local}
workload: {kind: noop}
factors:
  memory: [128, 256]
design: {replications: 2}
"""


def plan(path: Path):
    return CliRunner().invoke(cli, ["plan", str(path)])


def test_a_binary_spec_is_bad_input_naming_the_byte(tmp_path):
    f = tmp_path / "spec.yaml"
    f.write_bytes(b"name: t\n" + bytes(range(128, 256)) * 4)
    r = plan(f)
    assert r.exit_code == 2, r.output
    assert "not a text file" in r.output and "0x80" in r.output and "offset 8" in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


@pytest.mark.parametrize("text,key,line,first", [
    (GOOD + "factors:\n  memory: [512]\n", "factors", 7, 4),
    (GOOD.replace("  memory: [128, 256]\n", "  memory: [128, 256]\n  memory: [512]\n"),
     "memory", 6, 5),
])
def test_duplicate_keys_are_refused_naming_the_key_and_line(tmp_path, text, key, line, first):
    f = tmp_path / "spec.yaml"
    f.write_text(text)
    with pytest.raises(BadInput) as ei:
        load_spec(f)
    msg = ei.value.message
    assert f"duplicate key {key!r}" in msg and f"line {line}," in msg and f"first at line {first}" in msg
    r = plan(f)
    assert r.exit_code == 2 and "duplicate key" in r.output


def test_merge_keys_still_override_without_being_duplicates(tmp_path):
    f = tmp_path / "spec.yaml"
    f.write_text(GOOD.replace("workload:", "function: {<<: {memory_mb: 128, timeout_s: 30}, "
                                           "timeout_s: 60}\nworkload:"))
    assert load_spec(f).spec.function.timeout_s == 60
