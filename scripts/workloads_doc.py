"""Writes the generated parts of docs/workloads.md from their one source: each workload kind's
parameters from the agent's request schema (src/faascope/schemas/agent-request.schema.json) and
the results columns from the store's measures table (faascope.store.measures.MEASURES).

    python scripts/workloads_doc.py           # rewrite docs/workloads.md's generated blocks
    python scripts/workloads_doc.py --check   # exit 1 if they are out of date (tests run this)
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from faascope.schemas import unit_of, workload_def, workload_kinds
from faascope.store.measures import MEASURES

DOC = Path(__file__).resolve().parents[1] / "docs" / "workloads.md"
BLOCK = re.compile(r"(<!-- generated: (?P<name>[a-z-]+) -->\n).*?(<!-- end generated -->)", re.S)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _values(prop: dict) -> str:
    if "enum" in prop:
        return ", ".join(f"`{v}`" for v in prop["enum"])
    t = prop.get("type", "")
    t = t if isinstance(t, str) else " or ".join(t)
    unit = unit_of(prop)
    lo, hi = prop.get("minimum"), prop.get("maximum")
    rng = f" {lo} … {hi}" if lo is not None or hi is not None else ""
    return f"{t}{rng}" + (f" ({unit})" if unit else "")


def parameters() -> str:
    out = []
    for kind in workload_kinds():
        d = workload_def(kind)
        req = set(d.get("required", []))
        out.append(f"### `{kind}`\n\n{_cell(d.get('description', ''))}\n")
        props = {k: v for k, v in d.get("properties", {}).items() if k != "kind"}
        if not props:
            out.append("No parameters.\n")
            continue
        out.append("| parameter | values | default | meaning |\n|---|---|---|---|")
        for name, prop in props.items():
            default = ("required" if name in req else
                       f"`{json.dumps(prop['default'])}`" if "default" in prop else "–")
            out.append(f"| `{name}` | {_values(prop)} | {default} | "
                       f"{_cell(prop.get('description', ''))} |")
        out.append("")
    return "\n".join(out)


def columns() -> str:
    rows = ["| column | meaning | unit | better |", "|---|---|---|---|"]
    rows += [f"| `{m.name}` | {_cell(m.meaning)} | {m.unit or '–'} | {m.better or 'neither'} |"
             for m in MEASURES]
    return "\n".join(rows) + "\n"


GENERATORS = {"parameters": parameters, "columns": columns}


def render(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + GENERATORS[m.group("name")]() + m.group(3), text)


def main(argv: list[str]) -> int:
    text = DOC.read_text()
    new = render(text)
    if "--check" in argv:
        if new != text:
            print(f"{DOC} is out of date: run python scripts/workloads_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
