"""report.html: one self-contained file. plotly.js is inlined once in <head> (no CDN, no network:
the report opens offline and from an e-mail attachment); every figure is a plotly div drawn by
an inline script; tables and text are plain HTML."""
from __future__ import annotations

import html
import json

from faascope.report.figures import Fig
from faascope.report.items import Block, Details, KeyValues, Table, Text, inline_html
from faascope.report.plot.style import FONT

PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "scrollZoom": False,
                 "toImageButtonOptions": {"format": "svg", "scale": 1},
                 "modeBarButtonsToRemove": ["select2d", "lasso2d", "autoScale2d"]}

CSS = """
:root { --fg:#1d1d1f; --muted:#5f6368; --line:#e3e3e3; --accent:#0072B2; --warn:#8a5300; --warnbg:#fff6e0; }
* { box-sizing: border-box; }
body { margin:0; font-family:%(font)s; color:var(--fg); background:#fafafa; line-height:1.45; font-size:15px; }
header.top { background:#fff; border-bottom:1px solid var(--line); padding:18px 28px 12px; }
header.top h1 { margin:0 0 4px; font-size:24px; }
header.top .sub { color:var(--muted); font-size:13px; }
.layout { display:grid; grid-template-columns: 250px minmax(0, 1fr); gap:0; }
nav.toc { position:sticky; top:0; align-self:start; max-height:100vh; overflow:auto; padding:16px 10px 24px 20px;
          font-size:13px; border-right:1px solid var(--line); background:#fff; min-height:100vh; }
nav.toc a { color:var(--fg); text-decoration:none; display:block; padding:2px 0; }
nav.toc a:hover { color:var(--accent); }
nav.toc .l2 { font-weight:600; margin-top:8px; }
nav.toc .l3 { padding-left:12px; color:var(--muted); }
main { padding:8px 28px 60px; max-width:1250px; }
section.block { background:#fff; border:1px solid var(--line); border-radius:8px; padding:6px 22px 16px; margin:18px 0; }
h2 { font-size:21px; margin:18px 0 6px; }
h2.scenario { border-top:3px solid var(--accent); padding-top:14px; margin-top:36px; }
h3 { font-size:17px; margin:12px 0 6px; }
h4 { font-size:15px; margin:14px 0 4px; }
p { margin:6px 0; }
p.note { color:var(--muted); font-size:13.5px; }
p.warn, .sampled { color:var(--warn); background:var(--warnbg); padding:6px 10px; border-radius:5px; font-size:13.5px; }
code { background:#f1f3f4; padding:0 3px; border-radius:3px; font-size:90%%; }
figure.fig { margin:12px 0 20px; }
figure.fig figcaption { color:var(--muted); font-size:13.5px; margin-top:4px; }
figure.fig .files a { color:var(--accent); margin-left:4px; }
.plot { border:1px solid #f0f0f0; border-radius:4px; }
.table-wrap { overflow-x:auto; margin:8px 0 12px; }
table { border-collapse:collapse; font-size:13px; font-variant-numeric: tabular-nums; }
table caption { text-align:left; font-weight:600; padding:4px 0; font-size:14px; }
th, td { border-bottom:1px solid var(--line); padding:3px 9px; text-align:left; white-space:nowrap; vertical-align:top; }
th { background:#f6f8fa; position:sticky; top:0; }
table.kv td:first-child { color:var(--muted); width:190px; }
table.kv td { white-space:normal; }
td.num { text-align:right; }
td.wrap { white-space:normal; min-width:320px; max-width:640px; overflow-wrap:anywhere; }
details { margin:8px 0; }
details pre { background:#f6f8fa; padding:10px; border-radius:6px; overflow:auto; font-size:12.5px; }
.tablenote { color:var(--muted); font-size:12.5px; margin:2px 0 8px; }
.sc-meta { color:var(--muted); font-size:13.5px; }
section#answer { border:2px solid var(--accent); }
div.answer { margin:8px 0 12px; padding:8px 12px; background:#f3f8fc; border-radius:6px; font-size:15px; line-height:1.6; }
div.answer a { color:var(--accent); }
@media (max-width: 900px) { .layout { grid-template-columns: 1fr; } nav.toc { position:static; min-height:0; } }
""" % {"font": FONT}


def _num(s: str) -> bool:
    t = s.strip().lstrip("<>≤≥[+ ").replace("±", "").replace("%", "").replace(",", "").replace("–", "")
    try:
        float(t.split()[0] if t else "x")
        return True
    except ValueError:
        return False


def table_html(t: Table) -> str:
    sec = t.section
    out = ['<div class="table-wrap"><table>']
    if sec.title:
        out.append(f"<caption>{inline_html(sec.title)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{inline_html(h)}</th>" for h in sec.headers) + "</tr></thead><tbody>")
    for r in sec.rows:
        out.append("<tr>" + "".join(f'<td class="num">{html.escape(c)}</td>' if _num(c) else
                                    f'<td class="wrap">{html.escape(c)}</td>' if len(c) > 60 else
                                    f"<td>{html.escape(c)}</td>" for c in r) + "</tr>")
    out.append("</tbody></table></div>")
    for n in ([t.caption] if t.caption else []) + list(sec.notes):
        out.append(f'<p class="tablenote">{inline_html(n)}</p>')
    return "\n".join(out)


def fig_html(f: Fig, idx: int) -> str:
    import plotly.io as pio

    div = pio.to_html(f.plotly, full_html=False, include_plotlyjs=False, div_id=f"plot-{idx}",
                      config=PLOTLY_CONFIG, default_width="100%", default_height=f"{f.height}px", validate=False)
    files = " ".join(f'<a href="figures/{html.escape(n)}">{html.escape(n.rsplit(".", 1)[-1].upper())}</a>'
                     for n in f.files)
    parts = [f'<figure class="fig" id="fig-{html.escape(f.name)}" data-figure="{html.escape(f.name)}">',
             f"<h4>{inline_html(f.title)}</h4>", f'<div class="plot">{div}</div>',
             f"<figcaption>{inline_html(f.caption)}"
             + (f' <span class="files">Publication figure: {files}</span>' if files else "") + "</figcaption>"]
    if f.note:
        parts.append(f'<p class="sampled">{inline_html(f.note)}</p>')
    parts.append("</figure>")
    return "\n".join(parts)


def item_html(item, counter: list[int]) -> str:
    if isinstance(item, Fig):
        counter[0] += 1
        return fig_html(item, counter[0])
    if isinstance(item, Text):
        if item.kind == "answer":
            lines = "<br>".join(inline_html(line) for line in item.text.split("  \n"))
            return f'<div class="answer">{lines}</div>'
        return f'<p class="{item.kind}">{inline_html(item.text)}</p>'
    if isinstance(item, KeyValues):
        rows = "".join(f"<tr><td>{inline_html(k)}</td><td>{inline_html(v)}</td></tr>" for k, v in item.pairs)
        cap = f"<caption>{inline_html(item.title)}</caption>" if item.title else ""
        return f'<div class="table-wrap"><table class="kv">{cap}<tbody>{rows}</tbody></table></div>'
    if isinstance(item, Table):
        return table_html(item)
    if isinstance(item, Details):
        return (f"<details><summary>{inline_html(item.summary)}</summary><pre>{html.escape(item.text)}</pre></details>")
    raise TypeError(f"unknown report item {type(item).__name__}")


def page(title: str, subtitle: str, report_blocks: list[Block],
         scenario_blocks: list[tuple[str, str, str, list[Block]]]) -> str:
    """scenario_blocks: (anchor, heading, meta line, blocks) per scenario."""
    from plotly.offline import get_plotlyjs

    counter = [0]
    toc = []
    body = []
    for b in report_blocks:
        toc.append(f'<a class="l2" href="#{b.key}">{inline_html(b.title)}</a>')
        body.append(f'<section class="block" id="{b.key}"><h2>{inline_html(b.title)}</h2>')
        body += [item_html(i, counter) for i in b.items]
        body.append("</section>")
    for anchor, heading, meta, blocks in scenario_blocks:
        toc.append(f'<a class="l2" href="#{anchor}">{inline_html(heading)}</a>')
        body.append(f'<h2 class="scenario" id="{anchor}">{inline_html(heading)}</h2>')
        if meta:
            body.append(f'<p class="sc-meta">{inline_html(meta)}</p>')
        for b in blocks:
            bid = f"{anchor}-{b.key}"
            toc.append(f'<a class="l3" href="#{bid}">{inline_html(b.title)}</a>')
            body.append(f'<section class="block" id="{bid}"><h3>{inline_html(b.title)}</h3>')
            body += [item_html(i, counter) for i in b.items]
            body.append("</section>")
    js = get_plotlyjs()
    n_figs = counter[0]
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>",
        f'<meta name="generator" content="faascope report" data-figures="{n_figs}">',
        f"<style>{CSS}</style>",
        # plotly.js, inlined once (self-contained; no CDN)
        f'<script type="text/javascript">{js}</script>',
        "</head><body>",
        f'<header class="top"><h1>{html.escape(title)}</h1><div class="sub">{inline_html(subtitle)}</div></header>',
        '<div class="layout">', '<nav class="toc">' + "\n".join(toc) + "</nav>", "<main>", *body, "</main>", "</div>",
        f"<script>window.FAASCOPE_REPORT = {json.dumps({'figures': n_figs})};</script>",
        "</body></html>",
    ])
