"""The names a rule (design.rules, an override's when) may use, and the one check that it uses
no other."""
from __future__ import annotations

from typing import Optional

from faascope.specs.fields import (
    DEPLOYMENT_FACTOR,
    FUNCTION_ALIASES,
    LOAD_ALIASES,
    MB_AS_BYTES,
    PROVIDER_NAME,
)
from faascope.specs.loaded import LoadedSpec
from faascope.specs.model import SPEC_WORKLOADS
from faascope.specs.rules import Rule


def known_names(loaded: LoadedSpec, kinds: list[str]) -> set[str]:
    names = set(FUNCTION_ALIASES) | set(MB_AS_BYTES) | {"kind", DEPLOYMENT_FACTOR, PROVIDER_NAME}
    if loaded.spec.load is not None or any(f.section == "load" for f in loaded.factors):
        names |= set(LOAD_ALIASES)
    for k in kinds:
        names |= set(SPEC_WORKLOADS[k].model_fields)
    names |= {f.name for f in loaded.factors if f.name.isidentifier()}
    return names


def unknown_names(rule: Rule, known: set[str], quoted: Optional[str] = None) -> Optional[str]:
    """The problem when ``rule`` uses a name the spec does not define (None when it uses none):
    the unknown names and the known ones. ``quoted``: the rule's text, quoted in the message
    (design.rules); without it the message is an override's (``name(s)``, the rule unquoted)."""
    unknown = sorted(rule.names - known)
    if not unknown:
        return None
    names, known_list = ", ".join(map(repr, unknown)), ", ".join(sorted(known))
    if quoted is None:
        return f"unknown name(s) {names}; known names: {known_list}"
    return (f"unknown name{'s' if len(unknown) > 1 else ''} {names} in {quoted!r}; "
            f"known names: {known_list}")
