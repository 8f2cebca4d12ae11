"""The pieces a report section is made of. Each renders to HTML (report.html) and to Markdown
(summary.md); figures additionally to files under figures/ (see figures.py)."""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from faascope.analysis.render import Section as TableSection
from faascope.report.figures import Fig

_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")
#: [text](#anchor): a link within the report (only to anchors: the report links nowhere else)
_LINK = re.compile(r"\[([^\]]+)\]\(#([A-Za-z0-9_.=-]+)\)")


def inline_html(text: str) -> str:
    """Escape, then `code`, **bold** and [links](#anchor) as in the Markdown version."""
    s = html.escape(str(text), quote=False)
    s = _CODE.sub(r"<code>\1</code>", s)
    s = _LINK.sub(r'<a href="#\2">\1</a>', s)
    return _BOLD.sub(r"<strong>\1</strong>", s)


@dataclass
class Text:
    """A paragraph (simple Markdown: `code`, **bold**, [links](#anchor)). kind: "p", "note" (grey), "warn"
    (amber), "answer" (the headline: lines separated by two spaces and a newline, as Markdown breaks them)."""
    text: str
    kind: str = "p"


@dataclass
class KeyValues:
    """A two-column table of facts (campaign overview)."""
    pairs: list[tuple[str, str]]
    title: str | None = None


@dataclass
class Table:
    """A table; `section` is the analysis renderer's Section (title, headers, rows, notes)."""
    section: TableSection
    caption: str | None = None


@dataclass
class Details:
    """Collapsible preformatted text (e.g. the spec as written)."""
    summary: str
    text: str
    lang: str = ""


@dataclass
class Block:
    """One section of the report: a heading and its items (Text, KeyValues, Table, Details, Fig)."""
    key: str
    title: str
    items: list = field(default_factory=list)
    level: int = 2

    @property
    def figures(self) -> list[Fig]:
        return [i for i in self.items if isinstance(i, Fig)]


def table(title: str, headers: list[str], rows: list[list], notes: list[str] | None = None,
          caption: str | None = None) -> Table:
    return Table(TableSection(title, headers, [[str(c) for c in r] for r in rows], list(notes or [])), caption)
