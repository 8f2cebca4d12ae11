"""The agent's JSON Schemas (agent-request.schema.json, agent-response.schema.json): the one
source of the agent's request contract, read here for the layers above.

The Go decoder is tested field by field against the request schema
(agent/workloads/schema_agreement_test.go) and the Python spec models are generated from it
(:mod:`faascope.specs.workloads`), so this module only reads the files and answers the questions
both need: which workload kinds exist, which properties each kind has (with ``$ref`` resolved),
and which integer properties are byte sizes or milliseconds (the ``x-unit`` annotation).
"""
from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parent
REQUEST_SCHEMA = SCHEMA_DIR / "agent-request.schema.json"
RESPONSE_SCHEMA = SCHEMA_DIR / "agent-response.schema.json"
#: the ``x-unit`` values the request schema uses on integer properties
UNITS = ("bytes", "ms")


@lru_cache(maxsize=None)
def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def request_schema() -> dict:
    """The request schema (a copy: callers may not change the shared one)."""
    return copy.deepcopy(_load(REQUEST_SCHEMA))


def response_schema() -> dict:
    return copy.deepcopy(_load(RESPONSE_SCHEMA))


def _pointer(root: dict, ref: str) -> Any:
    if not ref.startswith("#/"):
        raise ValueError(f"only local references are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def resolve(root: dict, node: Any) -> Any:
    """``node`` with every ``$ref`` replaced by what it points to (the referring object's own
    keys, such as a more specific description, win over the referenced ones)."""
    if isinstance(node, list):
        return [resolve(root, n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    if "$ref" in node:
        out.update(resolve(root, _pointer(root, node["$ref"])))
    for k, v in node.items():
        if k != "$ref":
            out[k] = resolve(root, v)
    return out


def workload_kinds() -> list[str]:
    """The kinds the request's ``workload.kind`` admits, in the schema's order."""
    return list(_load(REQUEST_SCHEMA)["$defs"]["workload"]["properties"]["kind"]["enum"])


@lru_cache(maxsize=None)
def _workload_defs() -> dict[str, dict]:
    root = _load(REQUEST_SCHEMA)
    return {kind: resolve(root, root["$defs"][kind]) for kind in workload_kinds()}


def workload_def(kind: str) -> dict:
    """The request schema of one workload kind, ``$ref`` resolved (a copy)."""
    return copy.deepcopy(_workload_defs()[kind])


def unit_of(prop: dict) -> str | None:
    """``bytes``, ``ms`` or None: what an integer property's number counts."""
    unit = prop.get("x-unit")
    if unit is not None and unit not in UNITS:
        raise ValueError(f"unknown x-unit {unit!r} (known: {', '.join(UNITS)})")
    return unit
