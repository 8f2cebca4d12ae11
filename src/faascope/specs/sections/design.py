"""The design section: its rules (each a valid expression of known names, without a unit slip)
and its time structure (blocks need replications; a schedule is neither blocked nor bursts)."""
from __future__ import annotations

import ast

from faascope.specs.fields import MB_AS_BYTES
from faascope.specs.model import Spec
from faascope.specs.rules import Rule, RuleError
from faascope.specs.sections.names import unknown_names
from faascope.units import MIB


def check_rules(spec: Spec, known: set[str], problems: list[tuple[str, str]]) -> list[Rule]:
    """The design's rules parsed; ``known``: the names they may use."""
    # rules
    rules: list[Rule] = []
    for i, text in enumerate(spec.design.rules):
        try:
            rule = Rule.parse(text)
        except RuleError as exc:
            problems.append((f"design.rules[{i}]", f"{exc} (rule: {text!r})"))
            continue
        unknown = unknown_names(rule, known, quoted=text)
        if unknown:
            problems.append((f"design.rules[{i}]", unknown))
            continue
        lint = lint_mb(rule)
        if lint:
            problems.append((f"design.rules[{i}]", lint))
            continue
        rules.append(rule)
    return rules


def check_time_structure(spec: Spec, problems: list[tuple[str, str]]) -> None:
    """Blocking and a periodic schedule, with each other and with the load section."""
    # blocking needs at least as many replications as blocks
    b = spec.design.blocking
    if b is not None and b.blocks > spec.design.replications:
        problems.append(("design.blocking.blocks", f"{b.blocks} blocks need at least {b.blocks} "
                         f"replications (design.replications is {spec.design.replications})"))
    # a periodic schedule is the design's time structure: not with blocks, not with bursts
    if spec.design.schedule is not None:
        if b is not None:
            problems.append(("design.schedule", "a schedule already spreads the design over "
                             "time; remove design.blocking (each slot is a block)"))
        if spec.load is not None:
            problems.append(("design.schedule", "periodic burst campaigns are not supported; "
                             "remove the load section or the schedule"))


def lint_mb(rule: Rule) -> str | None:
    """Catch ``memory < 1024``: in rules ``memory`` is bytes, so a small bare number is a unit slip."""
    for node in ast.walk(rule.tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            names = [o.id for o in operands if isinstance(o, ast.Name) and o.id in MB_AS_BYTES]
            nums = [o.value for o in operands if isinstance(o, ast.Constant)
                    and isinstance(o.value, (int, float)) and not isinstance(o.value, bool)]
            if names and any(0 < n < MIB for n in nums):
                n = names[0]
                return (f"in rules {n!r} is in bytes (128 MB = 134217728 bytes), so comparing it with "
                        f"{nums[0]} is surely a unit slip; compare with a size such as 2GiB, or use "
                        f"{MB_AS_BYTES[n]} for the plain MB number (rule: {rule.text!r})")
    return None
