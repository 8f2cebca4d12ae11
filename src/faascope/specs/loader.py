"""Load and validate an experiment spec (YAML or JSON).

Every problem becomes a :class:`faascope.errors.BadInput` (exit status 2) whose message names the
full field path (``workload.file_size``, ``factors.memory[1]``, ``design.rules[0]``) and, where
there is a closed set, the allowed values. Validation happens before anything is deployed or
written. Each section has its checker (:mod:`faascope.specs.sections`); the field names and the
shared checks are in :mod:`faascope.specs.fields`, the validated spec in :mod:`faascope.specs.loaded`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from faascope.errors import BadInput
# resolve_name: callers import it from here
from faascope.specs.fields import format_errors, raise_errors, resolve_name  # noqa: F401
from faascope.specs.loaded import LoadedSpec
from faascope.specs.model import Spec
from faascope.specs.sections.code import check_code
from faascope.specs.sections.design import check_rules, check_time_structure
from faascope.specs.sections.factors import check_factors
from faascope.specs.sections.load import check_load
from faascope.specs.sections.names import known_names
from faascope.specs.sections.overrides import check_overrides
from faascope.specs.sections.provider import check_provider
from faascope.specs.sections.workload import check_workload


class _SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing duplicate keys: YAML forbids them, and PyYAML would keep
    the last one silently (a second ``factors:`` would replace the first without a word)."""


def _mapping_without_duplicates(loader: _SpecLoader, node: yaml.MappingNode, deep: bool = False):
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # "<<" merges: explicit keys override merged ones, as YAML says
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:
            continue  # an unhashable key: construct_mapping reports it
        if first is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first at line {first}); a key may appear "
                "once in a mapping", key_node.start_mark)
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


_SpecLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                            _mapping_without_duplicates)


#: A spec is kilobytes (the largest example is under 2 KiB); past this it is not a spec, and
#: reading on would only grow the process (issue #29: ``plan /dev/zero`` reached 23.5 GB).
MAX_SPEC_BYTES = 1 << 20
#: How deep mappings and lists may nest: a spec needs 6 levels; deeper ones ended in a
#: RecursionError traceback (issue #29: 300 block levels, 1,000 flow levels).
MAX_SPEC_DEPTH = 32
#: How many values a spec may hold with its aliases expanded (a "billion laughs" of aliases is a
#: few hundred bytes of YAML and billions of values to validate).
MAX_SPEC_NODES = 100_000


def read_spec_document(path: Path, field: str = "SPEC") -> Any:
    """The YAML document at ``path``, with its size and nesting capped; BadInput (naming
    ``field``) for anything that is not a readable YAML text of a spec's size."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        raise BadInput(f"spec file not found: {path}", field=field) from None
    except IsADirectoryError:
        raise BadInput(f"{path} is a directory; give a spec file (YAML)", field=field) from None
    except OSError as exc:
        raise BadInput(f"cannot read the spec {path}: {exc}", field=field) from None
    if len(raw) > MAX_SPEC_BYTES:
        raise BadInput(f"{path} is larger than {MAX_SPEC_BYTES:,} bytes (1 MiB); a spec is a few "
                       "kilobytes of YAML", field=field)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{path} is not a text file: byte 0x{raw[exc.start]:02x} at offset "
                       f"{exc.start} is not UTF-8; a spec is YAML text", field=field) from None
    too_deep = BadInput(f"{path} nests mappings or lists more than {MAX_SPEC_DEPTH} levels deep; "
                        "a spec needs a handful", field=field)
    try:
        data = yaml.load(text, Loader=_SpecLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise BadInput(f"{path} is not valid YAML{at}: {getattr(exc, 'problem', exc)}", field=field) from None
    except RecursionError:
        raise too_deep from None
    depth, nodes = _shape(data)
    if depth > MAX_SPEC_DEPTH:
        raise too_deep
    if nodes > MAX_SPEC_NODES:
        raise BadInput(f"{path} expands to {nodes:,} values (YAML aliases count each time they are "
                       f"used), more than {MAX_SPEC_NODES:,}; a spec has a few hundred", field=field)
    return data


def _shape(data: Any) -> tuple[int, int]:
    """(how deep mappings and lists nest, how many nodes there are with every alias expanded)
    in ``data``, without recursion; each distinct node is measured once, so anchors referred to
    many times (a "billion laughs") cost nothing to measure."""
    memo: dict[int, tuple[int, int]] = {}
    stack = [(data, False)]
    while stack:
        node, children_done = stack.pop()
        if not isinstance(node, (dict, list)) or (id(node) in memo and not children_done):
            continue
        children = [c for c in (node.values() if isinstance(node, dict) else node) if isinstance(c, (dict, list))]
        if not children_done:
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in memo)
            continue
        leaves = len(node) - len(children)
        memo[id(node)] = (1 + max((memo[id(c)][0] for c in children), default=0),
                          1 + leaves + sum(memo[id(c)][1] for c in children))
    return memo.get(id(data), (0, 1))


def load_spec(path: str | Path) -> LoadedSpec:
    path = Path(path)
    return parse_spec(read_spec_document(path), source=str(path))


def parse_spec(data: Any, source: str = "") -> LoadedSpec:
    if not isinstance(data, dict):
        raise BadInput(f"the spec must be a mapping with name, provider, function, workload, "
                       f"factors and design (got {type(data).__name__})", field="SPEC")
    try:
        spec = Spec.model_validate(data)
    except ValidationError as exc:
        raise_errors(format_errors(exc, (), Spec), source)
    problems: list[tuple[str, str]] = []
    deployments = check_provider(spec, problems)
    kinds = check_workload(spec, problems)
    check_code(spec, source, problems)
    factors = check_factors(spec, kinds, deployments, problems)
    loaded = LoadedSpec(spec=spec, source=source, factors=factors, rules=[], overrides=[], raw=data,
                        deployments=deployments)
    known = known_names(loaded, kinds)
    loaded.rules = check_rules(spec, known, problems)
    loaded.overrides = check_overrides(spec, factors, kinds, known, problems)
    check_load(spec, factors, kinds, problems)
    check_time_structure(spec, problems)
    raise_errors(problems, source)
    return loaded
