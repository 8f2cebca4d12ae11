"""What the report of a results store says, and the files it writes."""
from __future__ import annotations

import re
import struct
from pathlib import Path

from click.testing import CliRunner

from faascope.cli import cli
from faascope.report.sections import SECTIONS


def png_info(path: Path) -> tuple[int, int, float]:
    """(width, height, dpi) of a PNG, from its IHDR and pHYs chunks."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", data[16:24])
    i = data.find(b"pHYs")
    ppm = struct.unpack(">I", data[i + 4:i + 8])[0] if i > 0 else 0
    return w, h, ppm * 0.0254


def test_store_report_overview(store_report):
    html = store_report.html.read_text()
    md = store_report.summary.read_text()
    for text in ("Campaign overview", "report-test", "two_level", "Excluded cells (16)", "io_size &lt;= file_size",
                 "file_size &lt; memory", "Errors", "Runtime.ExitError", "retries", "warm-ups", "versions",
                 "machine", "Spec as written", "seed 7"):
        assert text in html, text
    # exact size labels, one unit family per factor: the spec's 128KiB stays binary, 10KB decimal
    assert "128 KiB" in html and "10 KB" in html and "1024 MB" in html
    assert "automatically" in html  # the design is incomplete: scenarios per file_size chosen for the user
    assert md.startswith("# faascope report: report-test")
    assert "| profile | memory | file_size | io_size | op | excluded by rule |" in md


def test_store_report_figures_are_files_named_after_what_they_show(store_report):
    figdir = store_report.out / "figures"
    names = sorted(p.name for p in figdir.iterdir())
    assert len(names) == len(store_report.figures)
    for f in store_report.figures:
        assert f.files == [f"{f.name}.png"]
        assert re.fullmatch(r"[a-z_]+_latency_seconds_file_size=(10000|1024000000)", f.name), f.name
        w, h, dpi = png_info(figdir / f"{f.name}.png")
        assert round(dpi) == 200 and w > 800 and h > 300
    kinds = {f.name.split("_latency_seconds")[0] for f in store_report.figures}
    assert kinds == {"ecdf", "histogram", "mean_median_ci", "cv", "anova_variation", "tukey", "cold_warm",
                     "timeseries", "time_of_day", "cost_vs_latency"}
    # summary.md links every PNG, and the links resolve
    md = store_report.summary.read_text()
    links = re.findall(r"\]\((figures/[^)]+)\)", md)
    assert {Path(x).name for x in links} >= {f"{f.name}.png" for f in store_report.figures}
    assert all((store_report.out / x).exists() for x in links)


def test_html_is_self_contained(store_report):
    html = store_report.html.read_text()
    markup = re.sub(r"<script[^>]*>.*?</script>", "", html, flags=re.S)  # plotly.js holds URL strings it never loads
    assert "<script src" not in html.replace(" ", "") and "<link" not in markup
    assert not re.search(r"""(src|href)=["']https?://""", markup)
    assert "@import" not in markup and "url(http" not in markup
    assert html.count("</script>") >= len(store_report.figures) + 1
    assert html.count("Plotly.newPlot(") == len(store_report.figures)
    # plotly.js is inlined exactly once
    assert len(re.findall(r"\* plotly\.js v\d", html)) == 1


def test_every_axis_has_units(store_report):
    # a unit in the axis title ("(%)", "(UTC)"), or on the ticks with an SI prefix ("20µs"): a
    # seconds axis says its unit on every tick, never as a bare 2e-05
    for f in store_report.figures:
        layout = f.plotly.layout
        axes = [getattr(layout, k) for k in dir(layout) if re.fullmatch(r"[xy]axis\d*", k)]
        axes = [ax for ax in axes if ax is not None]
        titles = [ax.title.text for ax in axes if ax.title and ax.title.text]
        scaled = [ax for ax in axes if ax.ticksuffix == "s" and ax.exponentformat == "SI"]
        assert scaled or any(("(s)" in t or "(%)" in t or "(UTC)" in t or "($)" in t) for t in titles), (f.name, titles)
        for ax in scaled:
            if ax.ticktext:  # log ticks: every label carries the unit, with a prefix below a second
                assert all(t.endswith("s") and "e-" not in t for t in ax.ticktext), ax.ticktext


def test_cold_and_warm_and_time_sections(store_report):
    html = store_report.html.read_text()
    assert "Cold and warm invocations per cell" in html
    assert "hour of day (UTC)" in html
    assert "Drift: median of the first and the last fifth" in html


def test_section_registry_is_documented():
    keys = [s.key for s in SECTIONS]
    assert len(keys) == len(set(keys))
    assert {s.scope for s in SECTIONS} == {"report", "scenario"}
    doc = (Path(__file__).resolve().parents[2] / "docs" / "report.md").read_text()
    for k in keys:
        assert f"`{k}`" in doc, k


def test_cli_on_a_store_with_defaults(fake_store, tmp_path):
    r = CliRunner().invoke(cli, ["report", str(fake_store), "--out", str(tmp_path / "r"), "--formats", "none",
                                 "--bootstrap", "100", "--log-x"])
    assert r.exit_code == 0, r.output
    assert "report.html" in r.output
    assert not (tmp_path / "r" / "figures").exists()
    html = (tmp_path / "r" / "report.html").read_text()
    assert "Log scale (--log-x)" in html


def test_pdf_and_svg_figures(store_report, tmp_path):
    from faascope.report.figures import save_static

    fig = next(f for f in store_report.figures if f.name.startswith("ecdf_"))
    assert save_static(fig, tmp_path, ("pdf", "svg")) == [f"{fig.name}.pdf", f"{fig.name}.svg"]
    pdf = (tmp_path / f"{fig.name}.pdf").read_bytes()
    assert pdf[:5] == b"%PDF-" and b"/FontFile2" in pdf and b"/Type3" not in pdf  # TrueType, not Type 3
    svg = (tmp_path / f"{fig.name}.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "latency_seconds" in svg  # text stays text
    # the ticks carry the unit with an SI prefix (EngFormatter): "20 ms", never "0.02" or "2e-05"
    assert re.search(r">[0-9.]+ [µm]?s<", svg) or re.search(r"[0-9] [µm]?s\b", svg), "no unit on the ticks"


def test_unvalidated_plotly_figures_equal_validated_ones(store_report, monkeypatch):
    # the renderer skips plotly's property validation for speed; the same figures built with it on
    # must serialise to the same JSON (a wrong property name or value would differ or raise)
    import json

    import plotly.io as pio

    from faascope.report.plot import render_plotly

    monkeypatch.setattr(render_plotly, "VALIDATE", True)
    for f in store_report.figures:
        checked = render_plotly.to_plotly(f.plot, f.height)
        assert checked._validate is True and f.plotly._validate is False
        assert json.loads(pio.to_json(f.plotly, validate=False)) == json.loads(pio.to_json(checked, validate=False)), f.name


def test_intervals_are_printed_only_where_they_cover(store_report):
    # issue #25: a cell of a few invocations printed "[-0.64 s, 4.76 s]"; now its interval is
    # left out and the reason printed (faascope.analysis.intervals)
    md = store_report.summary.read_text()
    html = re.sub(r"<script[^>]*>.*?</script>", "", store_report.html.read_text(), flags=re.S)
    assert "too few (n = " in html
    for text in (md, html):
        assert not re.search(r"\[\s*-\d", text), re.search(r".{80}\[\s*-\d.{40}", text)
