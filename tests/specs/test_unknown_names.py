"""The one unknown-name check (faascope.specs.sections.names.unknown_names) keeps the two wordings
the spec loader has always used: a design rule's message quotes the rule and says "name" or
"names"; an override's ``when`` says "name(s)" and does not quote it. The messages are pinned
whole, as a user reads them (exit status 2, the field named first)."""
import json

import pytest

from faascope.errors import BadInput
from faascope.specs.loader import parse_spec

BASE = {
    "name": "t",
    "provider": {"kind": "local"},
    "function": {"memory_mb": 128},
    "workload": {"kind": "noop"},
    "factors": {"memory": [128, 256]},
    "design": {"replications": 1},
}


def _error(**sections) -> BadInput:
    spec = json.loads(json.dumps(BASE))
    spec.update(sections)
    with pytest.raises(BadInput) as exc:
        parse_spec(spec)
    return exc.value


def _known() -> str:
    """The known names of BASE, as the loader lists them (read from a message, then checked)."""
    msg = _error(design={"replications": 1, "rules": ["bogus == 1"]}).message
    return msg.split("known names: ", 1)[1]


def test_a_design_rule_with_one_unknown_name():
    e = _error(design={"replications": 1, "rules": ["bogus == 1"]})
    assert e.field == "design.rules[0]"
    assert e.message == f"design.rules[0]: unknown name 'bogus' in 'bogus == 1'; known names: {_known()}"
    assert "memory" in _known().split(", ") and "profile" in _known().split(", ")


def test_a_design_rule_with_two_unknown_names():
    e = _error(design={"replications": 1, "rules": ["zeta == 1 and alpha == 2"]})
    assert e.message == ("design.rules[0]: unknown names 'alpha', 'zeta' in 'zeta == 1 and alpha == 2'; "
                         f"known names: {_known()}")


def test_an_override_when_with_unknown_names():
    e = _error(overrides=[{"when": "zeta == 1 and alpha == 2", "set": {"timeout_s": 30}}])
    assert e.field == "overrides[0].when"
    assert e.message == f"overrides[0].when: unknown name(s) 'alpha', 'zeta'; known names: {_known()}"
