"""Every JSON path faascope reads out of a recorded response names a property its contract
defines: the agent's response (``invocations.response_json``) against
src/faascope/schemas/agent-response.schema.json, the platform's (``invocations.platform_json``)
against what documents it (the ``X-Faascope-*`` reply headers in docs/platform.md, the REPORT
line's fields that providers.lambda_api parses).

The paths are those of the SQL the store really runs (the flat view, the reader's series), read
out of that SQL; a path literal anywhere in the source that the SQL examined here does not
contain fails the test, so a new reader cannot slip past it. The agent's fields outside SQL are
read by one function, :func:`faascope.schemas.response.parse_response`, whose key reads are
checked the same way (by ``ast``), as are the presence checks of providers.invocation.classify.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from own_sources import python_sources

from faascope.providers.lambda_api import PLATFORM_HEADER_PREFIX, _REPORT_FIELDS
from faascope.schemas import resolve, response_schema
from faascope.store.reader import ResultsFile
from faascope.store.schema import BURST_VIEW, flat_view_sql

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "faascope"
SCHEMA = resolve(response_schema(), response_schema())

#: json_extract / json_each / json_type over a document: (function, document, path)
CALL = re.compile(r"json_(extract|each|type)\(\s*([A-Za-z_][\w.]*)\s*,\s*'(\$[^']*)'\s*\)")
#: a json_each over the response with its alias, if any (whose ``value`` is an element)
EACH = re.compile(r"json_each\(\s*i\.response_json\s*,\s*'(\$[^']*)'\s*\)"
                  r"(?:\s+(?!FROM\b|WHERE\b|ORDER\b|UNION\b)(\w+))?", re.IGNORECASE)


# ------------------------------------------------------------------------------ the schema
def _branches(node: dict):
    """``node`` and every subschema that may apply where it does (anyOf/oneOf/allOf branches,
    if/then/else: a workload kind's own fields are in its ``then``)."""
    yield node
    for k in ("anyOf", "oneOf", "allOf"):
        for sub in node.get(k, []):
            yield from _branches(sub)
    for k in ("then", "else"):
        if isinstance(node.get(k), dict):
            yield from _branches(node[k])


def schema_has(parts: list[str], node: dict = SCHEMA) -> bool:
    """Whether the response schema defines the property path ``parts`` ("[*]": an array's
    element)."""
    if not parts:
        return True
    head, rest = parts[0], parts[1:]
    for b in _branches(node):
        if head == "[*]":
            if isinstance(b.get("items"), dict) and schema_has(rest, b["items"]):
                return True
        elif head in b.get("properties", {}) and schema_has(rest, b["properties"][head]):
            return True
    return False


def _parts(path: str) -> list[str]:
    assert re.fullmatch(r"\$(\.([A-Za-z_]\w*|\[\*\]))*", path), f"a path this test cannot read: {path}"
    return path.split(".")[1:]


# ------------------------------------------------------------------------------ the SQL
def _captured_reader_sql() -> list[str]:
    """The SQL of ResultsFile's methods that read series out of the responses, as they run it."""
    seen: list[str] = []
    rf = object.__new__(ResultsFile)
    rf._frame = lambda sql: seen.append(sql)  # type: ignore[method-assign]
    rf._sql = lambda sql, params=(): seen.append(sql) or []  # type: ignore[method-assign]
    for name in ("hops", "network_samples", "request_samples", "cells_without_success"):
        getattr(rf, name)()
    return seen


def examined_sql() -> list[str]:
    factors = [{"name": "memory", "field": "function.memory_mb"},
               {"name": "direct", "field": "workload.direct", "boolean": True}]
    return [flat_view_sql(factors, True), flat_view_sql(factors, False), BURST_VIEW,
            *_captured_reader_sql()]


def paths_in(sql: str) -> list[tuple[str, str]]:
    """(document, path) of every JSON path in ``sql``: document ``response`` (with a
    json_each's element as ``[*]``), ``platform``, or the column's name for the others."""
    each = EACH.findall(sql)
    out = []
    for _, doc, path in CALL.findall(sql):
        if doc == "i.response_json":
            out.append(("response", path))
        elif doc == "i.platform_json":
            out.append(("platform", path))
        elif doc == "value" or doc.endswith(".value"):
            alias = doc[:-len(".value")] if doc != "value" else ""
            over = {p for p, a in each if a == alias}
            assert len(over) == 1, f"{doc} in {sql!r}: of which json_each? ({each})"
            out.append(("response", over.pop() + ".[*]" + path[1:]))
        else:
            out.append((doc, path))
    return out


def all_paths() -> list[tuple[str, str]]:
    return [p for sql in examined_sql() for p in paths_in(sql)]


def test_the_reader_sees_every_path_it_is_meant_to():
    # the extraction would pass vacuously if it missed a kind of path: a few known ones
    got = set(all_paths())
    for want in [("response", "$.workload.elapsed_s"), ("response", "$.instance.cpu_quota"),
                 ("response", "$.instance.num_cpu"), ("response", "$.workload.hops.[*].end_ns"),
                 ("response", "$.workload.hops.[*].payload_bytes"),
                 ("response", "$.workload.latency_samples.values_s"),
                 ("response", "$.workload.in.samples"), ("platform", "$.report.duration_ms"),
                 ("platform", "$.net_out_bucket_capacity_bytes")]:
        assert want in got, want


def test_the_schema_check_can_fail():
    assert schema_has(["instance", "cpu_quota"]) and schema_has(["workload", "hops", "[*]", "end_ns"])
    assert schema_has(["workload", "latency", "p999_s"]) and schema_has(["workload", "in", "samples"])
    for bad in (["instance", "cpu_quotas"], ["workload", "hops", "[*]", "elapsed"],
                ["workload", "latency", "p95_s"], ["timing", "received_ns"], ["workload", "hops", "end_ns"]):
        assert not schema_has(bad), bad


def test_every_response_path_names_a_property_of_the_response_schema():
    bad = sorted({p for doc, p in all_paths() if doc == "response" and not schema_has(_parts(p))})
    assert not bad, ("JSON paths over response_json that agent-response.schema.json does not "
                     "define:\n" + "\n".join(bad))


def _documented_platform_fields() -> set[str]:
    """The keys of ``platform_json``: the local platform's reply headers named in
    docs/platform.md (``X-Faascope-Net-In-…`` stands for ``Out`` too, as the docs say), lower
    case without the prefix, '-' as '_' (providers.lambda_api), and the REPORT line's fields
    under ``report``."""
    text = (ROOT / "docs" / "platform.md").read_text()
    headers = set(re.findall(r"X-Faascope-[A-Za-z]+(?:-[A-Za-z]+)*", text))
    assert "(and `Out`)" in text
    headers |= {h.replace("-Net-In-", "-Net-Out-") for h in headers}
    keys = {h.lower()[len(PLATFORM_HEADER_PREFIX):].replace("-", "_") for h in headers}
    return keys | {f"report.{name}" for name, _ in _REPORT_FIELDS.values()}


def test_every_platform_path_names_a_documented_field():
    fields = _documented_platform_fields()
    assert {"cold", "setup_ms", "front_end_ms", "net_in_bucket_bytes", "report.billed_duration_ms"} <= fields
    bad = sorted({p for doc, p in all_paths() if doc == "platform" and p[2:] not in fields})
    assert not bad, ("JSON paths over platform_json that neither docs/platform.md's X-Faascope-* "
                     "headers nor the REPORT fields define:\n" + "\n".join(bad))


# ------------------------------------------------------------------------------ the source
def _string_templates(path: Path) -> list[str]:
    """Every string in a module's source, f-strings with their replacement fields as "{}"."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            out.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
    return out


#: the recorded JSON that is neither the agent's nor the platform's response (the campaign's
#: plan, the function's configuration, a run's levels: faascope's own, written by the store)
OTHER_DOCUMENTS = {"plan_json", "i.config_json", "i.levels_json"}


def test_every_path_literal_in_the_source_is_in_the_sql_examined_here():
    """A JSON path written anywhere in src/faascope (a "'$.…'" in a string) must occur in the
    SQL this test checks; else a new reader of responses would go unchecked."""
    examined = "\n".join(examined_sql())
    missing = []
    for p in python_sources():
        for s in _string_templates(p):
            for m in re.finditer(r"'(\$[^']*)'", s):
                lit = m.group(1)
                doc = re.search(r"json_\w+\(\s*([^,()]+?)\s*,\s*$", s[:m.start()])
                if doc and doc.group(1) in OTHER_DOCUMENTS:
                    continue
                pattern = "'" + ".+?".join(re.escape(x) for x in re.split(r"\{[^}]*\}", lit)) + "'"
                if not re.search(pattern, examined):
                    missing.append(f"{p.relative_to(ROOT)}: {lit}")
    assert not missing, ("JSON paths in the source that this test's SQL does not contain (add "
                         "the SQL that uses them to examined_sql):\n" + "\n".join(missing))


# ------------------------------------------------------------------------------ outside SQL
def _key_reads(func: ast.FunctionDef, roots: dict[str, list[str]]) -> list[list[str]]:
    """The paths of ``name.get("k")``, ``name["k"]`` and ``"k" in name`` in ``func``, for the
    names in ``roots`` (name -> the path it holds)."""
    out = []
    for node in ast.walk(func):
        key = target = None
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant)):
            key, target = node.args[0].value, node.func.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key, target = node.slice.value, node.value
        elif (isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant)
              and isinstance(node.ops[0], ast.In)):
            key, target = node.left.value, node.comparators[0]
        if isinstance(target, ast.Name) and target.id in roots and isinstance(key, str):
            out.append(roots[target.id] + [key])
    return out


def _function(path: Path, name: str) -> ast.FunctionDef:
    tree = ast.parse(path.read_text())
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def test_the_agent_response_reads_only_fields_of_the_schema():
    src = SRC / "schemas" / "response.py"
    reads = _key_reads(_function(src, "parse_response"),
                       {"d": [], "inst": ["instance"], "t": ["timings"], "err": ["error"]})
    reads += _key_reads(_function(src, "parse_workload_result"), {"w": ["workload"]})
    from faascope.schemas.response import COMMON_RESULT_FIELDS
    reads += [["workload", k] for k in COMMON_RESULT_FIELDS]
    assert ["instance", "cpu_quota"] in reads and ["workload", "elapsed_s"] in reads
    bad = [".".join(r) for r in reads if not schema_has(r)]
    assert not bad, f"AgentResponse reads fields agent-response.schema.json does not define: {bad}"


def test_classify_reads_the_agent_response_through_agent_response():
    """providers.invocation.classify tells an agent response by its fields ("ok" in it) and
    reads the rest through parse_response; its other key reads are Lambda's function-error
    body (``errorType``, ``errorMessage``: the runtime API's error format)."""
    func = _function(SRC / "providers" / "invocation.py", "classify")
    reads = _key_reads(func, {"parsed": []})
    agent = [r for r in reads if r[0] not in ("errorType", "errorMessage")]
    assert agent, "the check sees no presence test: has classify changed?"
    bad = [".".join(r) for r in agent if not schema_has(r)]
    assert not bad, bad
    gets = [n for n in ast.walk(func) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "get" and isinstance(n.func.value, ast.Name)
            and n.func.value.id == "parsed" and n.args[0].value not in ("errorType", "errorMessage")]
    assert not gets, "classify reads the agent's fields by key: use parse_response"
