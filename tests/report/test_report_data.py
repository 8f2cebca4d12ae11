"""Inputs of the report: labels, mapping, selection, automatic scenarios, and exit-2 errors."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.errors import BadInput
from faascope.analysis.dataset import choose_scenarios, load_dataset as build_data, parse_mapping, parse_times
from faascope.analysis.levels import factor_info, size_labels


def test_size_labels_are_exact_and_never_mix_unit_families():
    assert size_labels([512, 128000]) == {512: "512 B", 128000: "128 KB"}
    assert size_labels([512, 131072]) == {512: "512 B", 131072: "128 KiB"}
    # 128,000 B is also exactly 125 KiB: the binary family names both values, so both are binary
    assert size_labels([4096, 128000]) == {4096: "4 KiB", 128000: "125 KiB"}
    assert size_labels([4096, 10000]) == {4096: "4096 B", 10000: "10 KB"}  # a tie: decimal
    assert size_labels([10000, 1024000000]) == {10000: "10 KB", 1024000000: "1024 MB"}
    assert size_labels([1024, 1048576, 1073741824]) == {1024: "1 KiB", 1048576: "1 MiB", 1073741824: "1 GiB"}


def test_factor_info_recognises_sizes_and_memory():
    assert factor_info("io_size_bytes", ["512", "128000"]).kind == "size"
    assert factor_info("io_size", ["512", "131072"], hint="workload.io_size").label("131072") == "128 KiB"
    assert factor_info("memory", ["128", "2048"], hint="function.memory_mb").label("2048") == "2048 MB"
    assert factor_info("resource_tier", ["TIER_1", "TIER_5"]).kind == "plain"
    assert factor_info("file_size", ["small", "large"]).kind == "plain"  # not numbers: left alone


def test_parse_mapping_and_errors():
    assert parse_mapping(("a=b", "c=d,e=f")) == {"a": "b", "c": "d", "e": "f"}
    with pytest.raises(BadInput, match="--map"):
        parse_mapping(("nonsense",))
    with pytest.raises(BadInput, match="--map"):
        parse_mapping(("=x",))


def test_parse_times_iso_and_epoch():
    t = parse_times(pd.Series(["2024-04-10 02:25:57.530349", "2024-04-10 03:00:00"]))
    assert str(t.dt.tz) == "UTC" and t.iloc[0].hour == 2
    ns = parse_times(pd.Series([1_712_739_600 * 10**9, 1_712_739_660 * 10**9]))
    assert ns.iloc[1] - ns.iloc[0] == pd.Timedelta(seconds=60)
    assert parse_times(pd.Series(["a", "b"])) is None


def _incomplete() -> pd.DataFrame:
    """The thesis design: 1 GB files only at the large tier, 10 KB files only with 512 B I/O."""
    rows = []
    for p in ("L", "G"):
        for tier in ("T1", "T5"):
            for fs in ("10000", "1024000000"):
                for io in ("512", "128000"):
                    if fs == "1024000000" and tier == "T1" or fs == "10000" and io == "128000":
                        continue
                    rows += [{"p": p, "tier": tier, "fs": fs, "io": io, "y": float(i + 1)} for i in range(3)]
    return pd.DataFrame(rows)


def test_choose_scenarios_for_an_incomplete_design():
    df = _incomplete()
    assert choose_scenarios(df, ["p", "tier", "fs", "io"]) == ["fs"]
    full = df[df.fs == "10000"]
    assert choose_scenarios(full, ["p", "tier"]) == []


def test_build_data_for_a_foreign_table(tmp_path):
    df = _incomplete().rename(columns={"y": "lat"})
    df["when"] = pd.date_range("2024-01-01", periods=len(df), freq="7min").strftime("%Y-%m-%d %H:%M:%S")
    path = tmp_path / "x.csv"
    df.to_csv(path, index=False)
    d = build_data(path, mapping={"lat": "latency_seconds", "fs": "file_size_bytes"},
                   factors=["p", "tier", "io"], scenario=["file_size_bytes"], filters=["p!=nothing"], time_col="when")
    assert d.response == "latency_seconds" and d.scenario_cols == ["file_size_bytes"]
    assert d.info["file_size_bytes"].label("1024000000") == "1024 MB"
    assert d.time_source == "when" and d.time_col == "_time"
    assert d.data["latency_seconds"].dtype == float
    auto = build_data(path, mapping={"lat": "latency_seconds", "when": "timestamp"}, factors=["p", "tier", "fs", "io"])
    assert auto.scenario_auto and auto.scenario_cols == ["fs"]
    assert auto.time_source == "timestamp"  # a conventional name is found without --time
    assert any("chosen automatically" in n for n in auto.notes)


@pytest.mark.parametrize("args, field", [
    (["--factors", "p,tier"], "--response"),                       # no latency_seconds column
    (["--response", "nope", "--factors", "p"], "--response"),
    (["--response", "y", "--factors", "p,zzz"], "--factors"),
    (["--response", "y", "--factors", "p,p"], "--factors"),
    (["--response", "y", "--factors", "p", "--scenario", "p"], "--scenario"),
    (["--response", "y", "--factors", "p", "--scenario", "qqq"], "--scenario"),
    (["--response", "y", "--factors", "p", "--map", "absent=x"], "--map"),
    (["--response", "y", "--factors", "p", "--map", "tier=fs"], "--map"),  # fs exists already
    (["--response", "y", "--factors", "p", "--map", "bad"], "--map"),
    (["--response", "y", "--factors", "p", "--filter", "p=ZZ"], "--filter"),
    (["--response", "y", "--factors", "p", "--latest", "0"], "--latest"),
    (["--response", "y", "--factors", "p", "--formats", "gif"], "--formats"),
    (["--response", "y", "--factors", "p", "--time", "nope"], "--time"),
    (["--response", "p", "--factors", "tier"], "--response"),      # not numeric
])
def test_bad_input_exits_2_naming_the_field(tmp_path, args, field):
    path = tmp_path / "x.csv"
    _incomplete().to_csv(path, index=False)
    r = CliRunner().invoke(cli, ["report", str(path), "--out", str(tmp_path / "out"), *args])
    assert r.exit_code == 2, r.output
    assert field in r.output, r.output


def test_missing_and_wrong_inputs_exit_2(tmp_path):
    r = CliRunner().invoke(cli, ["report", str(tmp_path / "none.csv"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "INPUT" in r.output
    bad = tmp_path / "x.db"
    bad.write_text("not a database")
    r = CliRunner().invoke(cli, ["report", str(bad), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "INPUT" in r.output, r.output
    (tmp_path / "file").write_text("")
    good = tmp_path / "x.csv"
    _incomplete().to_csv(good, index=False)
    r = CliRunner().invoke(cli, ["report", str(good), "--out", str(tmp_path / "file"), "--response", "y",
                                 "--factors", "p"])
    assert r.exit_code == 2 and "--out" in r.output


def test_a_scenario_the_engine_cannot_analyse_still_gets_its_figures(tmp_path):
    df = _incomplete()
    df = df[~((df.fs == "10000") & (df.p == "G"))]  # the compared factor has one level in that scenario
    path = tmp_path / "x.csv"
    df.to_csv(path, index=False)
    r = CliRunner().invoke(cli, ["report", str(path), "--out", str(tmp_path / "o"), "--response", "y",
                                 "--factors", "p,tier,io", "--scenario", "fs", "--formats", "none", "-q"])
    assert r.exit_code == 0, r.output
    html = (tmp_path / "o" / "report.html").read_text()
    assert "could not analyse this scenario" in html and "has a single level here" in html
    assert html.count('class="fig"') >= 2 * 4


def test_large_cells_are_summarised_and_say_so(tmp_path, monkeypatch):
    from faascope.report.build import build_report
    from faascope.report.sections import distributions, over_time

    monkeypatch.setattr(distributions, "ECDF_EXACT_MAX", 50)
    monkeypatch.setattr(over_time, "TS_POINTS_MAX", 100)
    monkeypatch.setattr(over_time, "TS_BINS", 20)
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"platform": rng.choice(["a", "b"], n), "size_bytes": rng.choice([512, 4096], n),
                       "latency_seconds": rng.lognormal(-3, 0.4, n),
                       "timestamp": pd.date_range("2024-01-01", periods=n, freq="1min", tz="UTC")})
    path = tmp_path / "big.parquet"
    df.to_parquet(path)
    res = build_report(path, tmp_path / "o", factors=["platform", "size_bytes"], formats=(), n_boot=100)
    notes = {f.name.split("_latency")[0]: f.note for f in res.figures if f.note}
    assert "quantiles" in notes["ecdf"] and "time bins" in notes["timeseries"]
    html = res.html.read_text()
    assert html.count('class="sampled"') == len(notes)
    ecdf = next(f for f in res.figures if f.name.startswith("ecdf_"))
    assert all(len(t.x) == distributions.ECDF_GRID for t in ecdf.plotly.data)
    ts = next(f for f in res.figures if f.name.startswith("timeseries_"))
    assert all(len(t.x) == 20 for t in ts.plotly.data)
    md = res.summary.read_text()
    assert "> Summarised:" in md
