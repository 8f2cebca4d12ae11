"""Compatibility rules: small, safe boolean expressions over a cell's factor values.

A rule is a constraint every run cell must satisfy, e.g. ``io_size <= file_size`` or
``profile != 'gcf' or file_size < memory``. Rules are parsed with :mod:`ast` and interpreted by
the walker below, which accepts only a whitelist of node types: comparisons (``== != < <= > >=
in not in``), ``and``/``or``/``not``, names, numbers, strings, booleans, tuples/lists of those
(for ``in``) and the arithmetic ``+ - * / // %`` on numbers. Nothing is ever passed to ``eval``;
there are no calls, attributes, subscripts, comprehensions or lambdas, so a rule cannot run code.

Size literals such as ``1GiB`` or ``512B`` may appear in rules (outside quoted strings); they
are replaced by their exact number of bytes before parsing (:mod:`faascope.units`).
"""
from __future__ import annotations

import ast
import operator
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from faascope.units import UNITS, parse_size

MAX_RULE_LENGTH = 1000

_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_BINOP = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_CONSTANT_NAMES = {"true": True, "false": False, "True": True, "False": False}

# a quoted string (left alone) or a number immediately followed by a size unit
_unit_alt = "|".join(sorted(UNITS, key=len, reverse=True))
_TOKEN_RE = re.compile(
    r"""(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
    rf"|(?P<size>(?<![\w.])\d+(?:\.\d+)?\s?(?:{_unit_alt})\b)",
    re.IGNORECASE,
)


class RuleError(ValueError):
    """A rule that cannot be parsed or evaluated; the message says why."""


def _replace_sizes(text: str) -> str:
    def sub(m: re.Match) -> str:
        if m.group("str"):
            return m.group("str")
        return str(parse_size(m.group("size").replace(" ", "")))

    return _TOKEN_RE.sub(sub, text)


@dataclass
class Rule:
    """One parsed rule. ``text`` is what the user wrote (recorded as the exclusion reason)."""

    text: str
    tree: ast.Expression
    names: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, text: str) -> "Rule":
        if not isinstance(text, str) or not text.strip():
            raise RuleError("a rule must be a non-empty expression such as 'io_size <= file_size'")
        if len(text) > MAX_RULE_LENGTH:
            raise RuleError(f"a rule may be at most {MAX_RULE_LENGTH} characters long")
        try:
            source = _replace_sizes(text)
        except ValueError as exc:
            raise RuleError(str(exc)) from exc
        try:
            tree = ast.parse(source.strip(), mode="eval")
        except SyntaxError as exc:
            raise RuleError(f"not a valid expression ({exc.msg})") from exc
        names: set[str] = set()
        _check(tree.body, names)
        return cls(text=text, tree=tree, names=frozenset(names - set(_CONSTANT_NAMES)))

    def evaluate(self, env: Mapping[str, Any]) -> bool:
        value = _eval(self.tree.body, env)
        if not isinstance(value, bool):
            raise RuleError(
                f"evaluates to {value!r}, not to true or false; write a comparison such as "
                "'io_size <= file_size'"
            )
        return value


def _check(node: ast.AST, names: set[str]) -> None:
    """Reject every node type outside the whitelist; collect the names used."""
    if isinstance(node, ast.BoolOp):
        if not isinstance(node.op, (ast.And, ast.Or)):  # pragma: no cover - only And/Or exist
            raise RuleError("only 'and' and 'or' may join conditions")
        for v in node.values:
            _check(v, names)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.Not, ast.USub, ast.UAdd)):
            raise RuleError(f"operator {type(node.op).__name__} is not allowed in a rule")
        _check(node.operand, names)
    elif isinstance(node, ast.Compare):
        for op in node.ops:
            if type(op) not in _COMPARE and not isinstance(op, (ast.In, ast.NotIn)):
                raise RuleError(
                    f"comparison {type(op).__name__} is not allowed; use == != < <= > >= in, not in"
                )
        _check(node.left, names)
        for c in node.comparators:
            _check(c, names)
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOP:
            raise RuleError(
                f"operator {type(node.op).__name__} is not allowed; use + - * / // % on numbers"
            )
        _check(node.left, names)
        _check(node.right, names)
    elif isinstance(node, ast.Name):
        names.add(node.id)
    elif isinstance(node, ast.Constant):
        if not isinstance(node.value, (int, float, str, bool)):
            raise RuleError(f"constant {node.value!r} is not allowed in a rule")
    elif isinstance(node, (ast.Tuple, ast.List)):
        for e in node.elts:
            if not isinstance(e, (ast.Constant, ast.Name, ast.UnaryOp)):
                raise RuleError("lists in rules may hold only numbers, sizes and strings")
            _check(e, names)
    else:
        raise RuleError(
            f"{type(node).__name__} is not allowed in a rule; rules may use names, numbers, "
            "sizes, strings, comparisons, and/or/not and + - * / // %"
        )


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _eval(node: ast.AST, env: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            result: Any = True
            for v in node.values:
                result = _truth(_eval(v, env))
                if not result:
                    return False
            return True
        for v in node.values:
            if _truth(_eval(v, env)):
                return True
        return False
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return not _truth(v)
        if not _number(v):
            raise RuleError(f"cannot negate {v!r}")
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval(comp, env)
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(right, tuple):
                    raise RuleError("'in' needs a list on its right, e.g. profile in ('lambda', 'gcf')")
                ok = left in right
                ok = ok if isinstance(op, ast.In) else not ok
            else:
                if type(op) not in (ast.Eq, ast.NotEq) and not (
                    (_number(left) and _number(right))
                    or (isinstance(left, str) and isinstance(right, str))
                ):
                    raise RuleError(f"cannot order-compare {left!r} with {right!r}")
                ok = _COMPARE[type(op)](left, right)
            if not ok:
                return False
            left = right
        return True
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        if not (_number(a) and _number(b)):
            raise RuleError(f"arithmetic needs numbers, got {a!r} and {b!r}")
        try:
            return _BINOP[type(node.op)](a, b)
        except ZeroDivisionError as exc:
            raise RuleError("division by zero") from exc
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        if node.id in _CONSTANT_NAMES:
            return _CONSTANT_NAMES[node.id]
        raise RuleError(f"unknown name {node.id!r}; known names: {', '.join(sorted(env))}")
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(_eval(e, env) for e in node.elts)
    raise RuleError(f"{type(node).__name__} is not allowed in a rule")  # pragma: no cover


def _truth(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    raise RuleError(f"{v!r} is not true or false; 'and', 'or' and 'not' need conditions")
