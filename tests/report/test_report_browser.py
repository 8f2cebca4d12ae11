"""report.html in headless Chromium: it renders offline without console errors, every figure is
drawn, and screenshots are saved (the test's tmp dir, and a copy in reports/screenshots/)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import keep_copy

pytestmark = pytest.mark.skipif(not (shutil.which("chromium") or Path("/usr/bin/chromium").exists()),
                                reason="Debian's chromium is not installed")

FIGURE_STATE = """
Array.from(document.querySelectorAll('figure.fig')).map(f => {
  const plot = f.querySelector('.js-plotly-plot');
  const data = plot ? (plot._fullData || []) : [];
  const points = data.reduce((n, t) => n + ((t.x && t.x.length) || (t.y && t.y.length) || (t.q1 && t.q1.length) || 0), 0);
  return {name: f.dataset.figure, plot: !!plot,
          svgs: plot ? plot.querySelectorAll('.main-svg').length : 0,
          traces: plot ? plot.querySelectorAll('g.trace').length : 0,
          data: data.length, points: points,
          width: plot ? plot.getBoundingClientRect().width : 0,
          height: plot ? plot.getBoundingClientRect().height : 0};
})
"""


def check_page(report, tmp_path: Path, label: str) -> dict:
    from cdp import Browser

    html = report.html.resolve()
    with Browser() as b:
        page = b.open(html.as_uri())
        n = page.evaluate("window.FAASCOPE_REPORT.figures")
        assert n == len(report.figures) > 0
        page.wait_for(f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {n}", 90)
        page.b.pump(0.5)  # let late errors arrive
        state = page.evaluate(FIGURE_STATE)
        assert page.console_errors == [], page.console_errors
        # self-contained: the page asked for nothing but itself (no CDN, no fonts, no network)
        assert [u for u in page.requests if not u.startswith(("file:", "data:", "about:"))] == []
        assert page.evaluate("typeof Plotly") == "object"
        # every figure drawn: one plot per figure, each with its SVG layers and at least one non-empty trace
        assert len(state) == n
        assert page.evaluate("document.querySelectorAll('.js-plotly-plot').length") == n
        for s in state:
            assert s["plot"] and s["svgs"] >= 1, s
            assert s["data"] >= 1 and s["traces"] >= 1 and s["points"] >= 1, s
            assert s["width"] > 300 and s["height"] > 150, s
        shots = [page.screenshot(tmp_path / f"{label}-top.png")]
        y = page.evaluate("document.querySelector('h2.scenario').getBoundingClientRect().top + window.scrollY")
        shots.append(page.screenshot(tmp_path / f"{label}-scenario-1.png",
                                     clip={"x": 0, "y": y - 10, "width": 1400, "height": 3000}))
        for s in shots:
            assert s.stat().st_size > 20_000
            keep_copy(s, s.name)
        # the log/linear buttons work: switching the first ECDF to linear redraws it without errors
        page.evaluate("Plotly.relayout(document.querySelector('.js-plotly-plot'), {'xaxis.type': 'linear', "
                      "'xaxis.dtick': null}).then(() => true)", await_promise=True)
        assert page.console_errors == []
        return {"figures": n, "state": state}


def test_thesis_report_renders_in_chromium(thesis_report, tmp_path):
    out = check_page(thesis_report, tmp_path, "thesis")
    assert out["figures"] == 4 * 8  # 4 scenarios; no cold-start column in the thesis data


def test_store_report_renders_in_chromium(store_report, tmp_path):
    out = check_page(store_report, tmp_path, "store")
    names = [s["name"] for s in out["state"]]
    assert any(n.startswith("cold_warm_") for n in names)
    assert any(n.startswith("time_of_day_") for n in names)
