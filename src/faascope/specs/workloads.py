"""The spec's workload models, generated from the agent's request schema.

agent-request.schema.json is the one source of the workload contract: its ``$defs.workload``
names the kinds, and each kind's ``$defs.<kind>`` its fields with their types, enums, limits and
defaults. This module builds one pydantic model per kind from it at import time
(``pydantic.create_model``), so a kind or field added to the schema is at once usable in a spec
(as ``workload:``, a factor, an override or a name in rules), and nothing about it is written
twice in Python. ``tests/test_schemas.py`` checks the generated models against the schema, and
the Go decoder is checked against the same schema (agent/workloads/schema_agreement_test.go).

Why generated pydantic models rather than only ``jsonschema`` validation: the spec layer needs
more than a yes/no on a whole request. A factor's level is validated and normalised on its own
(``factors.io_size[1]``), before any cell exists; sizes and durations are read in exact units
(``10KB``, ``4KiB``, ``2s``) and stored normalised; errors name the field and the allowed values;
and defaults feed the rules. pydantic gives all of that per field, and the rest of the spec is
pydantic already. What pydantic cannot express from the schema — its cross-field conditionals
(``allOf``/``if``/``then``: a dd engine needs a sequential pattern, an inline transfer takes no
bucket, a sort input is a multiple of 100 …) — is then checked with ``jsonschema`` against the
same schema on the cell's whole request (:meth:`WorkloadModel.schema_problems`), so no rule of
the schema is re-implemented here.

Units: the schema marks integer properties that are byte sizes with ``"x-unit": "bytes"`` and
those in milliseconds with ``"x-unit": "ms"`` (an annotation JSON Schema validators ignore). Such
fields take exact sizes (``10KB`` = 10,000, ``4KiB`` = 4,096, ``128k`` refused as ambiguous;
:func:`faascope.units.parse_size`) or durations (``2s`` = 2000, ``250ms``; a bare number is ms,
the field's own unit), and are normalised to the integer the agent takes.

The thin layer on top: friendlier messages for the fileio/sharedfs rules users meet most
(:data:`CROSS_FIELD_RULES`), which run before the schema's conditionals and say what to change.
"""
from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Callable, Literal, Optional

from jsonschema import Draft202012Validator
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, model_validator

from faascope.schemas import unit_of, workload_def, workload_kinds
from faascope.units import DURATION_RE, parse_size

#: milliseconds per duration unit (exact, so 0.5s is 500 ms, not 499.99…)
MS_PER_UNIT = {"ms": Decimal(1), "s": Decimal(1000), "m": Decimal(60_000), "min": Decimal(60_000),
               "h": Decimal(3_600_000), "d": Decimal(86_400_000)}


def parse_ms(value: Any) -> int:
    """Milliseconds from an integer (ms, the agent's unit) or a duration such as ``250ms``,
    ``2s``, ``1m``; a bare number is ms."""
    if isinstance(value, bool):
        raise ValueError(f"expected a duration, got the boolean {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value.is_integer():
            return int(value)
        raise ValueError(f"a duration in ms must be a whole number, got {value!r}")
    if isinstance(value, str):
        m = DURATION_RE.match(value)
        if m:
            try:
                ms = Decimal(m.group("num")) * MS_PER_UNIT[m.group("unit") or "ms"]
            except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
                ms = None
            if ms is not None and ms == ms.to_integral_value():
                return int(ms)
            if ms is not None:
                raise ValueError(f"{value!r} is not a whole number of milliseconds")
    raise ValueError(f"cannot read {value!r} as a duration; write milliseconds or a number with "
                     "ms, s, m, h or d (e.g. 250ms, 2s)")


#: how each x-unit's values are read in specs
UNIT_PARSERS: dict[str, Callable[[Any], int]] = {"bytes": parse_size, "ms": parse_ms}

#: class names kept from the hand-written models (and readable ones for the rest)
MODEL_NAMES = {"noop": "NoopWorkload", "spin": "SpinWorkload", "fileio": "FileIOWorkload",
               "object": "ObjectWorkload", "kv": "KVWorkload", "sharedfs": "SharedFSWorkload",
               "network": "NetworkWorkload", "transfer": "TransferWorkload", "app": "AppWorkload"}


# --------------------------------------------------------------------------------------------
# the thin layer: friendly messages for the cross-field rules users meet most
# --------------------------------------------------------------------------------------------
def fileio_rules(w: Any) -> None:
    """fileio's and sharedfs' rules that the agent enforces, said before anything is deployed
    and with what to change (the schema says the same, less helpfully, or cannot say it)."""
    if w.io_size > w.file_size:
        raise ValueError(f"io_size ({w.io_size} B) must not exceed file_size "
                         f"({w.file_size} B); add the rule 'io_size <= file_size'")
    if w.direct and w.io_size % 512:
        raise ValueError(f"with direct: true, io_size must be a multiple of 512 B "
                         f"(got {w.io_size})")
    if w.op == "read" and w.fsync != "none":
        raise ValueError("fsync applies to writes only; use fsync: none with op: read")
    if w.engine == "dd" and w.pattern != "sequential":
        raise ValueError("engine dd does sequential I/O only; use pattern: sequential")
    if w.path is not None and (w.path.startswith("/") or ".." in w.path.split("/")):
        raise ValueError("path must be relative to the temp directory, without '..'")


CROSS_FIELD_RULES: dict[str, Callable[[Any], None]] = {"fileio": fileio_rules,
                                                        "sharedfs": fileio_rules}


# --------------------------------------------------------------------------------------------
# the schema's conditionals, checked with jsonschema
# --------------------------------------------------------------------------------------------
def _forbid_as_not(node: Any) -> Any:
    """The schema with each ``false`` property schema written ``{"not": {}}``: same meaning, but
    jsonschema then reports the property's name in the error's path."""
    if isinstance(node, list):
        return [_forbid_as_not(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k == "properties" and isinstance(v, dict):
            out[k] = {p: ({"not": {}} if s is False else _forbid_as_not(s)) for p, s in v.items()}
        else:
            out[k] = _forbid_as_not(v)
    return out


def _describe_if(cond: dict) -> str:
    parts = []
    for name, s in (cond.get("properties") or {}).items():
        if isinstance(s, dict) and "const" in s:
            parts.append(f"{name} is {json.dumps(s['const'])}")
        elif isinstance(s, dict) and "enum" in s:
            parts.append(f"{name} is one of {', '.join(json.dumps(v) for v in s['enum'])}")
    missing = (cond.get("not") or {}).get("required")
    if missing:
        parts.append(f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set")
    return " and ".join(parts) or json.dumps(cond)


def _condition(schema: dict, schema_path: list) -> str:
    """' when <condition>' for an error found under an if/then/else of ``schema``, else ''."""
    node: Any = schema
    cond = ""
    for part in schema_path:
        if part in ("then", "else") and isinstance(node, dict) and isinstance(node.get("if"), dict):
            described = _describe_if(node["if"])
            cond = f" when {described}" if part == "then" else f" unless {described}"
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
    return cond


def _message(err: Any, cond: str) -> str:
    v = err.validator
    got = json.dumps(err.instance) if not isinstance(err.instance, (dict, list)) else None
    if v == "not" and err.validator_value == {}:
        return f"not allowed{cond}"
    if v == "const":
        return f"must be {json.dumps(err.validator_value)}{cond} (got {got})"
    if v == "enum":
        return (f"must be one of {', '.join(json.dumps(x) for x in err.validator_value)}{cond} "
                f"(got {got})")
    if v == "multipleOf":
        return f"must be a multiple of {err.validator_value}{cond} (got {got})"
    if v in ("maximum", "minimum"):
        word = "at most" if v == "maximum" else "at least"
        return f"must be {word} {err.validator_value}{cond} (got {got})"
    if v == "pattern":
        return f"{got} does not match the pattern {err.validator_value}{cond}"
    if v == "not" and isinstance(err.validator_value, dict) and "pattern" in err.validator_value:
        return f"{got} must not match the pattern {err.validator_value['pattern']}{cond}"
    return err.message + cond


class WorkloadModel(BaseModel):
    """Base of the generated models: strict keys, the cross-field rules, and the request."""
    model_config = ConfigDict(extra="forbid", validate_default=True)

    @model_validator(mode="after")
    def _cross_field(self) -> "WorkloadModel":
        rules = CROSS_FIELD_RULES.get(getattr(self, "kind", None))
        if rules is not None:
            rules(self)
        return self

    def _errors(self, payload: dict) -> list:
        validator = KIND_VALIDATORS[self.kind]
        return sorted(validator.iter_errors(payload), key=lambda e: list(e.absolute_path))

    def agent_request(self) -> dict:
        """The workload as the agent takes it: what the spec set plus the schema's defaults,
        except defaults of fields the schema's own conditionals forbid for this request (an
        inline transfer sends no max_attempts, a tmp app no backend)."""
        payload = self.model_dump(mode="json", exclude_none=True)
        while True:
            drop = {e.absolute_path[0] for e in self._errors(payload)
                    if e.validator == "not" and e.validator_value == {}
                    and len(e.absolute_path) == 1 and e.absolute_path[0] not in self.model_fields_set}
            if not drop:
                return payload
            payload = {k: v for k, v in payload.items() if k not in drop}

    def schema_problems(self) -> list[tuple[str, str]]:
        """(field, message) for each way the request breaks the schema (its conditionals, the
        patterns pydantic does not check); empty when the agent's schema accepts it."""
        payload = self.agent_request()
        schema = SCHEMAS_FOR_CHECKS[self.kind]
        out = []
        for e in self._errors(payload):
            path = ".".join(str(p) for p in e.absolute_path)
            out.append((path, _message(e, _condition(schema, list(e.absolute_schema_path)))))
        return out


# --------------------------------------------------------------------------------------------
# generation
# --------------------------------------------------------------------------------------------
def _annotation(prop: dict, where: str) -> tuple[Any, dict[str, Any]]:
    """The Python type and pydantic constraints of one schema property."""
    if "const" in prop:
        return Literal[prop["const"]], {}
    if "enum" in prop:
        return Literal[tuple(prop["enum"])], {}
    t = prop.get("type")
    c: dict[str, Any] = {}
    if t in ("integer", "number"):
        for key, arg in (("minimum", "ge"), ("maximum", "le"), ("exclusiveMinimum", "gt"),
                         ("exclusiveMaximum", "lt"), ("multipleOf", "multiple_of")):
            if key in prop:
                c[arg] = prop[key]
        unit = unit_of(prop)
        if t == "integer" and unit is not None:
            return Annotated[int, BeforeValidator(UNIT_PARSERS[unit])], c
        if unit is not None:
            raise ValueError(f"{where}: x-unit is for integer properties")
        return (int if t == "integer" else float), c
    if t == "string":
        for key, arg in (("minLength", "min_length"), ("maxLength", "max_length"),
                         ("pattern", "pattern")):
            if key in prop:
                c[arg] = prop[key]
        return str, c
    if t == "boolean":
        return bool, c
    raise ValueError(f"{where}: cannot make a spec field of the schema {prop!r}")


def _build(kind: str) -> type[WorkloadModel]:
    d = workload_def(kind)
    required = set(d.get("required", ())) | {"kind"}  # the discriminator is always sent
    fields: dict[str, Any] = {}
    for name, prop in d["properties"].items():
        ann, constraints = _annotation(prop, f"$defs.{kind}.properties.{name}")
        desc = prop.get("description")
        if name in required:
            fields[name] = (ann, Field(..., description=desc, **constraints))
        elif "default" in prop:
            fields[name] = (ann, Field(prop["default"], description=desc, **constraints))
        else:
            fields[name] = (Optional[ann], Field(None, description=desc, **constraints))
    model = create_model(MODEL_NAMES.get(kind, f"{kind.capitalize()}Workload"),
                         __base__=WorkloadModel, __module__=__name__, **fields)
    model.__doc__ = d.get("description")
    return model


def _check_schema(kind: str) -> dict:
    return _forbid_as_not(workload_def(kind))


#: kind -> its request schema as checked (``false`` written ``{"not": {}}``)
SCHEMAS_FOR_CHECKS: dict[str, dict] = {k: _check_schema(k) for k in workload_kinds()}
KIND_VALIDATORS: dict[str, Draft202012Validator] = {
    k: Draft202012Validator(s) for k, s in SCHEMAS_FOR_CHECKS.items()}
#: kind -> its generated model, in the schema's order
WORKLOAD_MODELS: dict[str, type[WorkloadModel]] = {k: _build(k) for k in workload_kinds()}


def schema_field_names(kind: str) -> list[str]:
    """The request fields of a kind, as the schema lists them (for tests and messages)."""
    return list(workload_def(kind)["properties"])
