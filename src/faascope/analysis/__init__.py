"""The statistics engine behind `faascope analyze` (see docs/analysis.md).

Python API (the same structures as `faascope analyze --format json`):

    from faascope.analysis import analyze, cell_stats, ecdf, load_table
    df = load_table("results.csv")
    result = analyze(df, "latency_seconds", ["system_name", "resource_tier"], model="full")
"""
from faascope.analysis.dataset import load_dataset
from faascope.analysis.engine import analyze, cell_stats, clean_json, describe, ecdf
from faascope.analysis.io import apply_filters, latest_per_cell, load_table
from faascope.analysis.scenarios import analyze_scenarios

__all__ = ["analyze", "analyze_scenarios", "cell_stats", "describe", "ecdf", "load_table",
           "load_dataset", "apply_filters", "latest_per_cell", "clean_json"]
