"""Calendar factors derived at analysis time (analysis/calendar.py, `analyze --tz`), and the 2024
study's day-time analysis reproduced from its own data with them.

Data: tests/analysis/data/thesis_day_time.csv.gz, the study's preliminary_day_time data (every
row, the columns the analysis needs; from the public reproducibility package
gpr-indevelopment/dissert-serverless-local-io, see examples/data/thesis-2024/README.md). R's
answers: tests/analysis/data/r/day_time.json, written by day_time.R beside it (R 4.2.2, car).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.analysis.calendar import DEFINITIONS, add_calendar
from faascope.analysis.commands import analyze_command
from faascope.errors import BadInput

DATA = Path(__file__).resolve().parent / "data"
DAY_TIME = DATA / "thesis_day_time.csv.gz"
R = json.loads((DATA / "r" / "day_time.json").read_text())


def run(*args):
    return CliRunner().invoke(analyze_command, [str(a) for a in args])


def test_the_studys_labels_are_its_calendar_in_utc_on_every_row():
    df = pd.read_csv(DAY_TIME, dtype=str, keep_default_na=False)
    out, info = add_calendar(df.rename(columns={"week_period": "study_week_period",
                                                "day_of_week": "study_day"}), "UTC")
    assert len(out) == R["rows"] == 11404
    assert (out["business_hours"] == df["time_of_day"]).all()
    assert (out["week_period"] == df["week_period"]).all()
    assert (out["day_of_week"].str.upper() == df["day_of_week"]).all()
    assert R["r_labels_equal_study"] == {"week_period": True, "time_of_day": True}
    assert info["time_column"] == "collected_at" and info["tz"] == "UTC"
    # in another zone the same instants fall elsewhere: São Paulo (UTC-3 in 2023) moves 3 h
    sp, _ = add_calendar(df, "America/Sao_Paulo")
    assert (sp["business_hours"] != df["time_of_day"]).sum() > 1000


@pytest.mark.parametrize("stamp, hour, day, period, business, week", [
    # Berlin, the week summer time starts (2026-03-29, 02:00 CET -> 03:00 CEST)
    ("2026-03-27T07:59:59Z", 8, "Friday", "morning", "OFF_HOUR", "WEEKDAY"),
    ("2026-03-27T08:00:00Z", 9, "Friday", "morning", "BUSINESS_HOUR", "WEEKDAY"),
    ("2026-03-27T16:59:59Z", 17, "Friday", "afternoon", "BUSINESS_HOUR", "WEEKDAY"),
    ("2026-03-27T17:00:00Z", 18, "Friday", "evening", "OFF_HOUR", "WEEKDAY"),
    ("2026-03-27T23:00:00Z", 0, "Saturday", "night", "OFF_HOUR", "WEEKEND"),
    ("2026-03-29T01:00:00Z", 3, "Sunday", "night", "OFF_HOUR", "WEEKEND"),     # 03:00 CEST
    ("2026-03-30T06:59:59Z", 8, "Monday", "morning", "OFF_HOUR", "WEEKDAY"),
    ("2026-03-30T07:00:00Z", 9, "Monday", "morning", "BUSINESS_HOUR", "WEEKDAY"),
    ("2026-03-30T09:00:00+02:00", 9, "Monday", "morning", "BUSINESS_HOUR", "WEEKDAY"),
    ("2026-03-30 07:00:00", 9, "Monday", "morning", "BUSINESS_HOUR", "WEEKDAY"),  # naive = UTC
])
def test_calendar_in_berlin_at_the_boundaries_and_across_summer_time(stamp, hour, day, period,
                                                                     business, week):
    out, _ = add_calendar(pd.DataFrame({"started_at": [stamp]}), "Europe/Berlin")
    row = out.iloc[0]
    assert (row["hour"], row["day_of_week"], row["day_period"], row["business_hours"],
            row["week_period"]) == (hour, day, period, business, week)


def _assert_anova(ours: list[dict], ref: list[dict]):
    names = {"business_hours": "time_of_day", "week_period": "week_period", "Residual": "Residuals"}
    got = {names[r["source"]]: r for r in ours}
    assert set(got) == {r["source"] for r in ref}
    for r in ref:
        mine = got[r["source"]]
        assert mine["df"] == r["df"]
        assert math.isclose(mine["sum_sq"], r["sum_sq"], rel_tol=1e-8)
        if r["F"] is not None:
            assert math.isclose(mine["F"], r["F"], rel_tol=1e-8)
            assert math.isclose(mine["p_value"], r["p_value"], rel_tol=1e-6, abs_tol=1e-300)


@pytest.mark.parametrize("ss_type, key", [("1", "type1"), ("2", "type2")])
def test_the_studys_day_time_anova_per_platform_reproduces_r_with_calendar_factors_derived_in_utc(
        ss_type, key):
    """The study's analysis: per platform (and operation), latency ~ time of day + week period,
    additive (weekends have no business hours), with the labels derived by faascope from the
    timestamps, not read from the study's columns."""
    r = run(DAY_TIME, "--response", "latency_seconds", "--factors", "business_hours,week_period",
            "--scenario", "system_name,operation_type", "--model", "additive", "--tz", "UTC",
            "--ss-type", ss_type, "--format", "json", "--no-robust", "--bootstrap", "0")
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    by = {(s["scenario"]["system_name"], s["scenario"]["operation_type"]): s
          for s in res["scenarios"]}
    assert len(by) == len(R["scenarios"]) == 4
    for ref in R["scenarios"]:
        s = by[(ref["system_name"], ref["operation_type"])]
        assert s["n"] == ref["n"]
        _assert_anova(s["anova"], ref[key])
    # the definitions are stated with the result
    assert res["calendar"]["tz"] == "UTC" and res["calendar"]["definitions"] == DEFINITIONS
    assert "week_period" in res["calendar"]["replaced"]
    assert any("BUSINESS_HOUR = 09:00-18:00 on weekdays" in n for n in res["selection"]["notes"])


def test_calendar_factors_without_tz_are_derived_in_utc_and_said_so():
    r = run(DAY_TIME, "--response", "latency_seconds", "--factors", "business_hours",
            "--filter", "system_name=LAMBDA_DD", "--filter", "operation_type=WRITE",
            "--filter", "day_period!=night", "--format", "markdown", "--no-robust",
            "--bootstrap", "0")
    assert r.exit_code == 0, r.output
    assert "Calendar factors derived from collected_at in UTC" in r.stdout
    assert "day_period: night 00:00-06:00" in r.stdout


@pytest.mark.parametrize("args, field", [
    (["--tz", "Europe/Atlantis"], "--tz"),
    (["--tz", "UTC", "--time-column", "nope"], "--time-column"),
    (["--tz", "UTC", "--time-column", "latency_seconds"], "--time-column"),
    (["--time-column", "collected_at"], "--time-column"),
])
def test_bad_calendar_options_exit_2_naming_the_option(args, field):
    r = run(DAY_TIME, "--response", "latency_seconds", "--factors", "system_name", *args)
    assert r.exit_code == 2, r.output
    assert field in r.output


def test_a_table_without_a_timestamp_column_is_told_to_name_one():
    with pytest.raises(BadInput) as e:
        add_calendar(pd.DataFrame({"y": ["1"]}), "UTC")
    assert e.value.field == "--time-column"


def test_the_report_derives_the_calendar_with_tz_and_states_the_definitions(tmp_path):
    from faascope.cli import cli

    r = CliRunner().invoke(cli, [
        "report", str(DAY_TIME), "--out", str(tmp_path / "rep"), "--response", "latency_seconds",
        "--factors", "business_hours,week_period", "--scenario", "system_name",
        "--filter", "operation_type=WRITE", "--tz", "America/Sao_Paulo", "--formats", "none",
        "--bootstrap", "0"])
    assert r.exit_code == 0, r.output
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert "Calendar factors derived from collected_at in America/Sao_Paulo" in summary
    assert DEFINITIONS["business_hours"] in summary
    r = CliRunner().invoke(cli, ["report", str(DAY_TIME), "--out", str(tmp_path / "bad"),
                                 "--factors", "business_hours", "--tz", "Nowhere/Land"])
    assert r.exit_code == 2 and "--tz" in r.output
