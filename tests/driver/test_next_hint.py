"""The command `faascope run` suggests next must run on the design it just measured."""
import pandas as pd

from faascope.driver.commands import _scenarios_needed


def test_incomplete_design_gets_a_scenario_and_complete_one_none(tmp_path):
    rows = []
    for platform in ("lambda", "gcf"):
        for size in ("10000", "1024000000"):
            for io in ("512", "128000"):
                if size == "10000" and io == "128000":
                    continue  # excluded by io_size <= file_size, as in the thesis design
                rows += [{"platform": platform, "file_size": size, "io_size": io, "latency_seconds": 1.0 + r}
                         for r in range(2)]
    incomplete = tmp_path / "incomplete.csv"
    pd.DataFrame(rows).to_csv(incomplete, index=False)
    assert _scenarios_needed(incomplete, ["platform", "file_size", "io_size"]) in (["file_size"], ["io_size"])
    complete = tmp_path / "complete.csv"
    pd.DataFrame([r for r in rows if r["file_size"] == "1024000000"]).to_csv(complete, index=False)
    assert _scenarios_needed(complete, ["platform", "io_size"]) == []
