"""The calibration tables' loader: every packaged table is valid, overrides keep units and name
their source, and mistakes are BadInput naming the field."""
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from faascope import calibration
from faascope.errors import BadInput


def test_every_packaged_table_loads_and_every_entry_has_a_source():
    tables = calibration.available()
    assert tables, "no calibration table is packaged"
    for name, versions in tables.items():
        for version in versions:
            t = calibration.load_table(name, version)
            assert t.name == name and t.version == version
            assert t.entries
            for key, e in t.entries.items():
                assert e.source.strip() and e.date.strip(), key
                assert e.role in calibration.ROLES and e.unit in calibration.UNITS


def test_newest_version_unless_pinned():
    name = next(iter(calibration.available()))
    newest = max(calibration.available()[name])
    assert calibration.load_table(name).version == newest
    assert calibration.load_table(f"{name}@{newest}").version == newest
    with pytest.raises(BadInput) as exc:
        calibration.load_table(name, "1999-01-01")
    assert "no version" in exc.value.message


def test_skyrise_latencies_are_as_published():
    t = calibration.load_table("standins-aws")
    # values as the Skyrise paper's raw data give them (write/read median and p99, ms)
    assert (t.value("s3_standard_write_median"), t.value("s3_standard_read_p99")) == (36.99, 82.11)
    assert (t.value("dynamodb_write_p99"), t.value("efs_read_median")) == (11.65, 5.15)
    assert all(e.unit == "ms" and e.role == "published" for k, e in t.entries.items()
               if k.endswith(("_median", "_p99")))


def test_s3_prefix_rates_are_as_documented_and_bursts_assumed():
    t = calibration.load_table("standins-aws")
    # AWS: 3,500 PUT/COPY/POST/DELETE and 5,500 GET/HEAD requests per second per prefix
    assert (t.value("s3_prefix_write_rate"), t.value("s3_prefix_read_rate")) == (3500, 5500)
    assert {t["s3_prefix_write_rate"].role, t["s3_prefix_read_rate"].role} == {"published"}
    assert {t["s3_prefix_write_burst"].role, t["s3_prefix_read_burst"].role} == {"assumed"}


def test_override_replaces_one_entry_and_records_it(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("extends: standins-aws\nentries:\n"
                 "  s3_standard_write_median: {value: 20, unit: ms, source: our run}\n")
    t = calibration.load_override(f)
    assert t.value("s3_standard_write_median") == 20
    assert t["s3_standard_write_median"].source == "our run"
    assert t.value("s3_standard_write_p99") == 115.09  # untouched
    assert t.overridden == {"s3_standard_write_median": str(f)}
    assert t.provenance()["overridden"] == {"s3_standard_write_median": str(f)}
    # the packaged table is not changed by an override
    assert calibration.load_table("standins-aws").value("s3_standard_write_median") == 36.99


@pytest.mark.parametrize("body, field", [
    ("extends: nosuch\n", "calibration.extends"),
    ("entries: {}\n", "calibration.extends"),
    ("extends: standins-aws\nentries:\n  s3_standard_write_median: {value: 20, unit: s, source: x}\n",
     "calibration.entries.s3_standard_write_median.unit"),
    ("extends: standins-aws\nentries:\n  s3_standard_write_median: {value: 20, unit: ms}\n",
     "calibration.entries.s3_standard_write_median.source"),
    ("extends: standins-aws\nentries:\n  s3_standard_write_median: {value: -1, unit: ms, source: x}\n",
     "calibration.entries.s3_standard_write_median.value"),
    ("extends: standins-aws\nentries:\n  new_bytes: {value: 1.5, unit: B, source: x}\n",
     "calibration.entries.new_bytes.value"),
    ("extends: standins-aws\nentries:\n  new_thing: {value: 1, unit: furlongs, source: x}\n",
     "calibration.entries.new_thing.unit"),
    ("extends: standins-aws\nbogus: 1\n", "calibration"),
])
def test_mistakes_name_the_field(tmp_path, body, field):
    f = tmp_path / "bad.yaml"
    f.write_text(body)
    with pytest.raises(BadInput) as exc:
        calibration.load_override(f)
    assert exc.value.field == field


def test_table_files_round_trip_through_as_dict():
    for name, versions in calibration.available().items():
        t = calibration.load_table(name, versions[-1])
        again = calibration.parse_table(json.loads(json.dumps(t.as_dict())), "x")
        assert again.entries == t.entries


# ------------------------------------------------------------------ published anchors, fitted_by
THESIS_CSV = Path(__file__).resolve().parents[2] / "examples/data/thesis-2024/main_experiment.csv"
FIT_CELLS = {  # CALIBRATION contract (docs/platform.md, "Fidelity"): only these three thesis cells
    "thesis_lambda_direct_read_m2048_f1024000000_io512_median",   # tmp_read_iops
    "thesis_lambda_direct_read_m2048_f1024000000_io131072_median",  # tmp_read_bps
    "thesis_lambda_direct_read_m128_f10000_io512_median",          # tmp_limits_memory_exponent
}
#: and these two, to which the gcf profile's CPU speed relative to lambda's is fitted (cpu_speed)
CPU_SPEED_CELLS = {
    "thesis_lambda_urandom_write_m2048_f1024000000_io131072_median",
    "thesis_gcf_urandom_write_m2048_f1024000000_io131072_median",
}
#: and this one, to which the gcf profile's per-system-call cost is fitted (syscall_cost)
SYSCALL_COST_CELLS = {"thesis_gcf_direct_read_m2048_f1024000000_io512_median"}
#: and this one, to which its cost of a close (a short run's fixed cost) is fitted (close_cost)
CLOSE_COST_CELLS = {"thesis_gcf_direct_read_m2048_f10000_io512_median"}
GCF_CELLS = CPU_SPEED_CELLS | SYSCALL_COST_CELLS | CLOSE_COST_CELLS


def _thesis_cells():
    """(platform, op, memory, file, io as dd used it) -> (median, dd I/O calls), recomputed from the
    thesis's own rows shipped with the examples."""
    df = pd.read_csv(THESIS_CSV)
    df = df[df["status"] == "SUCCESS"]
    out = {}
    for (system, exp, tier, f, cmd), g in df.groupby(
            ["system_name", "experiment_name", "resource_tier", "file_size_bytes", "command"]):
        bs = {"512": 512, "128k": 131072}[re.search(r"bs=(\w+)", cmd).group(1)]
        count = re.search(r"count=(\d+)", cmd)
        calls = int(count.group(1)) if count else math.ceil(f / bs)   # reads go to the end of file
        platform = {"LAMBDA_DD": "lambda", "GCF_DD": "gcf"}[system]
        mem = {"TIER_1": 128, "TIER_5": 2048}[tier]
        out[f"thesis_{platform}_{exp.lower()}_m{mem}_f{f}_io{bs}"] = (float(g["latency_seconds"].median()), calls)
    return out


def test_thesis_anchors_are_the_medians_of_the_thesis_data():
    t = calibration.load_table("published-anchors")
    cells = _thesis_cells()
    assert len(cells) == 16
    for key, (med, calls) in cells.items():
        assert t.value(key + "_median") == pytest.approx(med, rel=1e-12), key
        assert t[key + "_median"].unit == "s" and t[key + "_median"].role == "published"
        assert t.value(key + "_ops") == calls, key
    thesis_keys = {k.rsplit("_", 1)[0] for k in t.entries if k.startswith("thesis_")}
    assert thesis_keys == set(cells)


def test_anchors_say_which_entries_were_fitted():
    t = calibration.load_table("published-anchors")
    fitted = t.fit_keys()
    assert {k for k in fitted if k.startswith("thesis_")} == FIT_CELLS | GCF_CELLS
    assert all(fitted[k] == ["platform-lambda@2026-11-23"] for k in FIT_CELLS)
    # the thesis cells and Skyrise's network fit the lambda profile, STeLLAR's cold medians each
    # profile's modelled cold start, STeLLAR's warm median both profiles' modelled front end, the
    # two large urandom-write cells gcf's CPU speed, gcf's large 512 B read cell its system-call
    # cost, its 10 KB read at 2048 MB its cost of a close, lambda-perf's Go init the lambda
    # profile's modelled INIT overhead; nothing else
    assert {k for k, tables in fitted.items() if tables == ["platform-gcf@2026-11-23"]} == \
        {"stellar_cold_median_google"} | GCF_CELLS
    assert sorted(fitted["stellar_warm_median"]) == ["platform-gcf@2026-11-23", "platform-lambda@2026-11-23"]
    assert set(fitted) - FIT_CELLS - GCF_CELLS == {"skyrise_net_burst_bytes", "skyrise_net_burst_rate",
                                       "skyrise_net_baseline_rate", "stellar_cold_median_aws",
                                       "stellar_cold_median_google", "stellar_warm_median",
                                       "lambda_perf_init_go_al2023"}
    assert fitted["lambda_perf_init_go_al2023"] == ["platform-lambda@2026-11-23"]
    # request latencies are not repeated here: standins-aws holds them
    assert not any(k.startswith(("s3_", "dynamodb_", "efs_")) for k in t.entries)


def test_fitted_by_round_trips_and_names_bad_keys():
    t = calibration.load_table("published-anchors")
    again = calibration.parse_table(json.loads(json.dumps(t.as_dict())), "x")
    assert again.fitted_by == t.fitted_by and again.fit_keys() == t.fit_keys()
    # tables without it load as before
    assert calibration.load_table("standins-aws").fitted_by == {}
    raw = t.as_dict()
    raw["fitted_by"] = {"platform-lambda@2026-11-23": ["no_such_entry"]}
    with pytest.raises(BadInput) as exc:
        calibration.parse_table(raw, "x")
    assert exc.value.field == "x.fitted_by.platform-lambda@2026-11-23"
    raw["fitted_by"] = {"platform-lambda": []}
    with pytest.raises(BadInput) as exc:
        calibration.parse_table(raw, "x")
    assert exc.value.field == "x.fitted_by"


def test_gcf_cpu_speed_is_the_thesis_cells_ratio():
    """gcf's cpu_speed (its vCPU's speed relative to lambda's) is Lambda's over GCF's median time
    of the same 8,000 CPU-bound dd calls (128 KiB from /dev/urandom to /tmp, 2048 MB: a whole
    vCPU for dd on both); the lambda profile is the reference and has none."""
    anchors = calibration.load_table("published-anchors")
    lam, gcf = (anchors.value(k) for k in sorted(CPU_SPEED_CELLS, key=lambda k: "gcf" in k))
    assert calibration.load_table("platform-gcf").value("cpu_speed") == pytest.approx(lam / gcf, abs=5e-5)
    assert "cpu_speed" not in calibration.load_table("platform-lambda").entries


def test_every_unit_has_its_si_factor():
    # the duration model and the fidelity battery compute with entries through this one table
    assert set(calibration.TO_SI) == set(calibration.UNITS)
