"""A small checker of request bodies against a Google API discovery document's schemas (the
documented REST shape): unknown fields, output-only fields, types, enums, int32 ranges and
google-duration strings are errors."""
from __future__ import annotations

import json
import re
from pathlib import Path

DATA = Path(__file__).parent / "data"


def load(name: str) -> dict:
    return json.loads((DATA / name).read_text())


class ShapeError(AssertionError):
    pass


def check(doc: dict, schema: str, value, path: str = "$") -> None:
    _check(doc, {"$ref": schema}, value, path)


def _check(doc: dict, s: dict, v, path: str) -> None:
    if "$ref" in s:
        return _check(doc, doc["schemas"][s["$ref"]], v, path)
    t = s.get("type")
    if t == "object":
        if not isinstance(v, dict):
            raise ShapeError(f"{path}: expected an object, got {type(v).__name__}")
        props, addl = s.get("properties"), s.get("additionalProperties")
        for k, x in v.items():
            if props and k in props:
                p = props[k]
                desc = p.get("description", "")
                if p.get("readOnly") or desc.startswith("Output only"):
                    raise ShapeError(f"{path}.{k}: output-only field sent")
                _check(doc, p, x, f"{path}.{k}")
            elif addl is not None:
                _check(doc, addl, x, f"{path}.{k}")
            else:
                raise ShapeError(f"{path}.{k}: unknown field (schema has: {', '.join(sorted(props or {}))})")
    elif t == "array":
        if not isinstance(v, list):
            raise ShapeError(f"{path}: expected an array")
        for i, x in enumerate(v):
            _check(doc, s["items"], x, f"{path}[{i}]")
    elif t == "string":
        if not isinstance(v, str):
            raise ShapeError(f"{path}: expected a string, got {v!r}")
        if "enum" in s and v not in s["enum"]:
            raise ShapeError(f"{path}: {v!r} not in {s['enum']}")
        if s.get("format") == "google-duration" and not re.fullmatch(r"\d+(\.\d{1,9})?s", v):
            raise ShapeError(f"{path}: {v!r} is not a google-duration such as '300s'")
        if s.get("format") in ("int64", "uint64") and not re.fullmatch(r"-?\d+", v):
            raise ShapeError(f"{path}: {v!r} is not an int64 string")
    elif t == "integer":
        if isinstance(v, bool) or not isinstance(v, int):
            raise ShapeError(f"{path}: expected an integer, got {v!r}")
        if s.get("format") == "int32" and not -2**31 <= v < 2**31:
            raise ShapeError(f"{path}: {v} out of int32")
    elif t == "boolean":
        if not isinstance(v, bool):
            raise ShapeError(f"{path}: expected a boolean")
    elif t == "number":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ShapeError(f"{path}: expected a number")
