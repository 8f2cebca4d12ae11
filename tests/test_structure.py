"""The Python half's structure, as docs/architecture.md draws it: folders in layers, each importing
only from the layers below it; no import circle between modules; no private name used across
modules. Imports inside function bodies count like any other (they are allowed in command
modules, where they keep ``faascope --help`` fast, and elsewhere only with a ``# lazy:`` comment
saying why; never to hide a circle, since the circle check sees them).

The graph is read from the source with ``ast`` (nothing is imported), so a violation is found
whether or not the code path runs in a test.
"""
from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from own_sources import python_sources

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = "faascope"

#: the folders of src/faascope from the bottom up; a module may import from its own folder and
#: from any folder of a lower layer, never from a higher one (docs/architecture.md)
LAYERS: list[set[str]] = [
    {"errors"},
    {"units", "binaries", "schemas", "calibration", "processes", "hoststat"},
    {"tiers", "store"},
    {"cost", "provider_kinds"},
    {"specs"},
    {"designs", "providers"},
    {"standins", "analysis"},
    {"report", "compare"},
    {"driver"},
    {"stagger", "tune", "fidelity"},
    {"cli"},
    {"__main__"},
]
#: modules whose functions may import lazily (the command line's entry points)
LAZY_OK = {"cli", "commands"}


def _modules() -> dict[str, Path]:
    mods = {}
    for p in python_sources():
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


MODULES = _modules()


def _target(mod: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(mod: str, path: Path):
    """(imported module, names imported from it, line, at module level?) for each faascope
    import of a module."""
    tree = ast.parse(path.read_text(), str(path))
    top = {id(n) for n in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == PKG:
                    yield a.name, [], node.lineno, id(node) in top
        elif isinstance(node, ast.ImportFrom):
            t = _target(mod, path, node)
            if t.split(".")[0] != PKG:
                continue
            for a in node.names:
                sub = f"{t}.{a.name}"
                if sub in MODULES:  # `from faascope.x import module`
                    yield sub, [], node.lineno, id(node) in top
                else:
                    yield t, [a.name], node.lineno, id(node) in top


EDGES = [(m, t, names, line, top) for m, p in MODULES.items() for t, names, line, top in _imports(m, p)]


def _where(mod: str) -> str:
    p = MODULES[mod]
    return str(p.relative_to(SRC)) if p.is_relative_to(SRC) else str(p)


def _folder(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ""


def _layer(folder: str) -> int:
    for i, layer in enumerate(LAYERS):
        if folder in layer:
            return i
    raise AssertionError(f"src/faascope/{folder} is in no layer of tests/test_structure.py "
                         "(and docs/architecture.md): place it")


def test_every_folder_has_a_layer():
    for mod in MODULES:
        if _folder(mod):
            _layer(_folder(mod))


def test_imports_only_go_down_the_layers():
    bad = []
    for m, t, _, line, _ in EDGES:
        a, b = _folder(m), _folder(t)
        if not a or not b or a == b:
            continue  # the package root (__version__) is below everything
        if _layer(b) > _layer(a) or (_layer(b) == _layer(a)):
            bad.append(f"{_where(m)}:{line} imports {t} (layer of {b} is not "
                       f"below {a})")
    assert not bad, "\n".join(bad)


def test_no_import_circle_between_modules():
    graph = defaultdict(set)
    for m, t, *_ in EDGES:
        if t in MODULES and t != m and t != PKG:
            graph[m].add(t)
    # Tarjan's strongly connected components: a component of more than one module is a circle
    index, low, stack, on, circles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in list(MODULES):
        if v not in index:
            visit(v)
    assert not circles, f"import circles: {circles}"


def test_no_private_name_imported_across_modules():
    bad = [f"{_where(m)}:{line} imports {n} from {t}"
           for m, t, names, line, _ in EDGES for n in names
           if n.startswith("_") and not n.startswith("__") and t != m]
    assert not bad, "\n".join(bad)


def test_no_private_attribute_of_an_imported_name():
    """``module._name`` or ``Class._name`` of a module or class imported from another faascope
    module: the owner should offer it under a public name."""
    bad = []
    for mod, path in MODULES.items():
        tree = ast.parse(path.read_text(), str(path))
        imported = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    and (n.module or "").startswith(PKG) for a in n.names}
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                    and not node.attr.startswith("__") and isinstance(node.value, ast.Name) \
                    and node.value.id in imported and node.value.id not in defined:
                bad.append(f"{_where(mod)}:{node.lineno} uses "
                           f"{node.value.id}.{node.attr}")
    assert not bad, "\n".join(bad)


def _justified_as_lazy(mod: str, line: int) -> bool:
    """An import inside a function whose line (or the line above) says ``# lazy: <why>``, e.g.
    a drawing back end that pulls in matplotlib only when a figure is drawn."""
    lines = MODULES[mod].read_text().splitlines()
    return any("# lazy:" in lines[i] for i in (line - 1, line - 2) if 0 <= i < len(lines))


def test_function_body_imports_only_in_command_modules():
    bad = [f"{_where(m)}:{line} imports {t} inside a function (move it to the top, or say "
           "why it must wait with '# lazy: <why>')"
           for m, t, _, line, top in EDGES
           if not top and m.split(".")[-1] not in LAZY_OK and not _justified_as_lazy(m, line)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("bad_source, rule", [
    ("from faascope.driver.runner import run_campaign\n", "layers"),
    ("def f():\n    from faascope.store.reader import ResultsFile\n", "body"),
    ("from faascope.store.reader import _private\n", "private"),
    ("from faascope.store.reader import ResultsFile\nResultsFile._names\n", "attribute"),
])
def test_the_checks_catch_what_they_are_for(tmp_path, monkeypatch, bad_source, rule):
    """Each check fails on a module written to break its rule (a check that cannot fail is no
    check): a probe module taken as if it were src/faascope/store/zz_probe.py."""
    probe = tmp_path / "zz_probe.py"
    probe.write_text(bad_source)
    me = sys.modules[__name__]
    name = "faascope.store.zz_probe"
    monkeypatch.setattr(me, "MODULES", {**MODULES, name: probe})
    monkeypatch.setattr(me, "EDGES", EDGES + [(name, t, names, line, top)
                                              for t, names, line, top in _imports(name, probe)])
    check = {"layers": test_imports_only_go_down_the_layers,
             "body": test_function_body_imports_only_in_command_modules,
             "private": test_no_private_name_imported_across_modules,
             "attribute": test_no_private_attribute_of_an_imported_name}[rule]
    with pytest.raises(AssertionError):
        check()
