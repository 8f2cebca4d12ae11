"""A spec is kilobytes of shallow YAML: anything else is refused with exit status 2 and the
field named, before it can grow the process (issue #29: ``faascope plan /dev/zero`` grew to
23.5 GB; a 300-level YAML nesting ended in a RecursionError traceback)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from faascope.errors import BadInput
from faascope.specs.loader import MAX_SPEC_BYTES, MAX_SPEC_DEPTH, load_spec


def _refused(path) -> str:
    with pytest.raises(BadInput) as err:
        load_spec(path)
    assert err.value.field == "SPEC"
    return str(err.value)


def test_an_endless_file_is_refused_after_the_cap():
    assert "larger than" in _refused("/dev/zero")


def test_a_file_over_the_cap_is_refused(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("name: x\n# " + "a" * MAX_SPEC_BYTES + "\n")
    assert "larger than" in _refused(big)


@pytest.mark.parametrize("text", [
    "".join("  " * i + f"k{i}:\n" for i in range(300)) + "  " * 300 + "v: 1\n",  # block, 300 levels
    "x: " + "[" * 1000 + "]" * 1000 + "\n",  # flow, 1,000 levels: past Python's recursion limit
    "x: " + "[" * (MAX_SPEC_DEPTH + 1) + "]" * (MAX_SPEC_DEPTH + 1) + "\n",  # one past the cap
])
def test_deep_nesting_is_refused(tmp_path, text):
    spec = tmp_path / "deep.yaml"
    spec.write_text(text)
    assert "levels deep" in _refused(spec)


def test_aliases_expanding_to_billions_are_refused(tmp_path):
    lines = ["a0: &a0 [" + ",".join(["x"] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    spec = tmp_path / "laughs.yaml"
    spec.write_text("\n".join(lines) + "\n")
    assert "expands to" in _refused(spec)


def test_plan_on_dev_zero_exits_2_without_a_traceback():
    r = subprocess.run([sys.executable, "-m", "faascope", "plan", "/dev/zero"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "SPEC" in r.stderr and "larger than" in r.stderr
