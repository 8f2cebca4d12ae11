"""`faascope report`: an interactive, self-contained HTML report, publication figures and a Markdown
summary of a results store or a foreign CSV/Parquet table.

Modules: data (input, selection, level labels), scenarios (cells and the engine's analysis per
scenario), sections/ (the registry of report sections, one module per section), figures (one
figure in plotly and matplotlib), stagger_heatmaps (the staggering heatmaps, also drawn by
`faascope stagger grid`), items (what a section is made of), page (report.html), summary
(summary.md), build (the pipeline), commands (the CLI). See docs/report.md.
"""
from __future__ import annotations

__all__ = ["build_report"]


def build_report(*args, **kwargs):
    # lazy: `import faascope.report` stays cheap; building pulls in pandas, plotly and matplotlib
    from faascope.report.build import build_report as _build
    return _build(*args, **kwargs)
