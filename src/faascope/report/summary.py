"""summary.md: the report as Markdown, for pasting into an issue or a paper draft. Tables are the
analysis renderer's sections (the same rows `faascope analyze --format markdown` prints); figures
are links to figures/*.png."""
from __future__ import annotations

from faascope.report.figures import Fig
from faascope.report.items import Block, Details, KeyValues, Table, Text


def _cell(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def table_md(t: Table) -> list[str]:
    sec = t.section
    lines = []
    if sec.title:
        lines += [f"**{sec.title}**", ""]
    if sec.rows:
        lines.append("| " + " | ".join(_cell(h) for h in sec.headers) + " |")
        lines.append("|" + "|".join("---" for _ in sec.headers) + "|")
        lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in sec.rows]
        lines.append("")
    for n in ([t.caption] if t.caption else []) + list(sec.notes):
        lines += [n.strip(), ""]
    return lines


def item_md(item, figdir: str = "figures") -> list[str]:
    if isinstance(item, Fig):
        png = next((n for n in item.files if n.endswith(".png")), None)
        others = [n for n in item.files if not n.endswith(".png")]
        lines = [f"**{item.title}**", ""]
        if png:
            lines += [f"![{item.title}]({figdir}/{png})", ""]
        else:
            lines += [f"[Interactive figure in report.html](report.html#fig-{item.name}) (publication figures: "
                      "`faascope report … --formats png` or `--pdf`)", ""]
        cap = item.caption + (" " + ", ".join(f"[{n.rsplit('.', 1)[-1].upper()}]({figdir}/{n})" for n in others)
                              if others else "")
        lines += [cap, ""]
        if item.note:
            lines += [f"> {item.note}", ""]
        return lines
    if isinstance(item, Text):
        if item.kind == "warn":
            return [f"> ⚠ {item.text}", ""]
        return [item.text, ""]
    if isinstance(item, KeyValues):
        lines = [f"**{item.title}**", ""] if item.title else []
        return lines + [f"- {k}: {v}" for k, v in item.pairs] + [""]
    if isinstance(item, Table):
        return table_md(item)
    if isinstance(item, Details):
        return [f"<details><summary>{item.summary}</summary>", "", f"```{item.lang}", item.text.rstrip(), "```", "",
                "</details>", ""]
    raise TypeError(f"unknown report item {type(item).__name__}")


def summary(title: str, subtitle: str, report_blocks: list[Block],
            scenario_blocks: list[tuple[str, str, str, list[Block]]]) -> str:
    lines = [f"# {title}", "", f"_{subtitle}_ Interactive version: [report.html](report.html).", ""]
    for b in report_blocks:
        lines += [f"## {b.title}", ""]
        for i in b.items:
            lines += item_md(i)
    for _anchor, heading, meta, blocks in scenario_blocks:
        lines += [f"## {heading}", ""]
        if meta:
            lines += [meta, ""]
        for b in blocks:
            lines += [f"### {b.title}", ""]
            for i in b.items:
                lines += item_md(i)
    return "\n".join(lines).rstrip() + "\n"
