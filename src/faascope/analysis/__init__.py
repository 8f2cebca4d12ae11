"""The statistics engine behind `faascope analyze` (see docs/analysis.md).

Python API (the same structures as `faascope analyze --format json`):

    from faascope.analysis import analyze, cell_stats, ecdf, load_table
    df = load_table("results.csv")
    result = analyze(df, "latency_seconds", ["system_name", "resource_tier"], model="full")
"""
from faascope.analysis.engine import analyze, analyze_scenarios, cell_stats, clean_json, ecdf
from faascope.analysis.io import apply_filters, latest_per_cell, load_table

__all__ = ["analyze", "analyze_scenarios", "cell_stats", "ecdf", "load_table", "apply_filters",
           "latest_per_cell", "clean_json"]
