"""Property-based fuzzing of the user-facing parsers: whatever the input, a spec or a rule is
either accepted or refused with BadInput/RuleError naming what is wrong; nothing else escapes,
and no input executes code."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faascope.specs.rules import Rule, RuleError
from faascope.errors import BadInput
from faascope.specs.loader import parse_spec
from faascope.units import SizeError, parse_size

ROOT = Path(__file__).resolve().parents[2]
THESIS = yaml.safe_load((ROOT / "examples" / "thesis-local-fileio.yaml").read_text())

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                    st.text(max_size=20), st.sampled_from(["128KiB", "10KB", "1GiB", "-1B", "128k", "../x", "$(id)"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=12), inner, max_size=4)),
                      max_leaves=12)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(section=st.sampled_from(sorted(THESIS)), key=st.text(max_size=15), value=values)
def test_mutated_spec_is_accepted_or_refused_cleanly(section, key, value):
    spec = yaml.safe_load(yaml.safe_dump(THESIS))
    if isinstance(spec[section], dict) and key:
        spec[section][key] = value
    else:
        spec[section] = value
    try:
        parse_spec(spec, source="fuzz.yaml")
    except BadInput as exc:
        assert str(exc).strip(), "a refusal must say what is wrong"


@settings(max_examples=120, deadline=None)
@given(value=values)
def test_arbitrary_document_is_refused_cleanly(value):
    try:
        parse_spec(value, source="fuzz.yaml")
    except BadInput:
        pass


CODE = ["__import__('os').system('touch /tmp/faascope-pwned')", "open('/etc/passwd').read()",
        "(lambda: 1)()", "memory.__class__", "[x for x in ()]", "exec('1')", "file_size.bit_length()",
        "globals()", "io_size if True else 0", "f'{io_size}'"]


@pytest.mark.parametrize("text", CODE)
def test_rules_never_execute_code(text):
    with pytest.raises(RuleError):
        Rule.parse(text).evaluate({"io_size": 1, "file_size": 2, "memory": 3})
    assert not os.path.exists("/tmp/faascope-pwned")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_any_rule_text_parses_or_is_refused(text):
    try:
        rule = Rule.parse(text)
    except RuleError:
        return
    try:
        rule.evaluate({"io_size": 512, "file_size": 10000, "memory": 128 << 20, "profile": "gcf"})
    except RuleError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=16), st.integers(), st.floats(), st.booleans()))
def test_any_size_parses_to_a_nonnegative_int_or_is_refused(value):
    try:
        n = parse_size(value)
    except SizeError:
        return
    assert isinstance(n, int) and n >= 0
