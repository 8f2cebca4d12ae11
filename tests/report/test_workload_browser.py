"""The workload-kind sections in headless Chromium: no console errors, every figure drawn (the
checks of test_report_browser.check_page), and a screenshot of the section for people to look at."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import keep_copy
from test_report_browser import check_page

from faascope.report.build import build_report

pytestmark = pytest.mark.skipif(not (shutil.which("chromium") or Path("/usr/bin/chromium").exists()),
                                reason="Debian's chromium is not installed")

DATA = Path(__file__).resolve().parent / "data"
#: fixture -> the section (its block id) to photograph
CASES = {"transfer-chain.db": "transfers", "network-unshaped.db": "network", "storage-object.db": "storage",
         "app-phases.db": "phases", "colocation.db": "concurrency"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_workload_section_renders_in_chromium(tmp_path, name):
    from cdp import Browser

    db = tmp_path / name
    shutil.copyfile(DATA / name, db)
    report = build_report(db, tmp_path / "out", formats=(), n_boot=200)
    check_page(report, tmp_path, Path(name).stem)
    with Browser() as b:
        page = b.open(report.html.resolve().as_uri())
        page.wait_for(f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {len(report.figures)}", 90)
        box = page.evaluate(f"(() => {{ const r = document.getElementById('{CASES[name]}').getBoundingClientRect();"
                            " return [r.top + window.scrollY, r.height]; })()")
        shot = page.screenshot(tmp_path / f"section-{CASES[name]}.png",
                               clip={"x": 0, "y": box[0], "width": 1400, "height": min(box[1], 3000)})
        assert shot.stat().st_size > 20_000
        keep_copy(shot, shot.name)
