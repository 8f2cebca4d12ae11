"""The calibration tables' loader: every packaged table is valid, overrides keep units and name
their source, and mistakes are BadInput naming the field."""
import json

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
