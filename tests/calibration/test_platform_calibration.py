"""The local platform's calibration: the packaged platform tables, a user's override, the file
faascope-platform reads, and the platform naming the tables in force."""
import json

import pytest

from faascope import calibration
from faascope.errors import BadInput
from faascope.providers import local_platform


def test_every_calibrated_profile_has_its_newest_table_and_unlimited_none():
    eff = calibration.platform_calibration()
    assert set(eff["profiles"]) == {"lambda", "gcf"}
    for profile, name in calibration.PLATFORM_TABLES.items():
        t = eff["profiles"][profile]
        assert (t["table"], t["version"]) == (name, max(calibration.available()[name]))
        assert "overridden" not in t


def test_lambda_tmp_read_limits_are_fitted_on_the_fit_cells_only():
    t = calibration.load_table("platform-lambda")
    # CALIBRATION: DIRECT_READ, 2048 MB, 1,024,000,000 B; 512 B in 265.3265 s, 131,072 B in 30.7398 s
    assert t.value("tmp_read_iops") == round(2_000_000 / 265.3265)
    assert t.value("tmp_read_bps") == int(1_024_000_000 / 30.7398)
    for key in ("tmp_read_iops", "tmp_read_bps"):
        assert t[key].role == "fit" and "held out" in t[key].note
    # Skyrise's bucket: 150 MiB refilling at 75 MiB/s, 150 MiB one-off, ~1.2 GiB/s peak
    assert (t.value("net_bucket_size"), t.value("net_refill_rate"), t.value("net_one_time_burst")) == \
        (150 * 2**20, 75 * 2**20, 150 * 2**20)
    assert t.value("net_peak_rate") == int(1.2 * 2**30)


def test_override_applies_to_its_profile_and_is_recorded(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("extends: platform-lambda\nentries:\n"
                 "  tmp_read_iops: {value: 5000, unit: IOPS, source: our fio run}\n")
    eff = calibration.platform_calibration(f)
    lam = eff["profiles"]["lambda"]
    assert lam["entries"]["tmp_read_iops"]["value"] == 5000
    assert lam["overridden"] == {"tmp_read_iops": str(f)}
    assert eff["profiles"]["gcf"] == calibration.platform_calibration()["profiles"]["gcf"]


@pytest.mark.parametrize("bodies, field", [
    (["extends: standins-aws\nentries: {}\n"], "calibration.extends"),
    (["extends: platform-gcf\nentries:\n  tmp_read_iopz: {value: 1, unit: IOPS, source: x}\n"],
     "calibration.entries.tmp_read_iopz"),
    (["extends: platform-lambda\nentries: {}\n", "extends: platform-lambda\nentries: {}\n"], "calibration.extends"),
])
def test_override_mistakes_are_bad_input_naming_the_field(tmp_path, bodies, field):
    files = []
    for i, body in enumerate(bodies):
        files.append(tmp_path / f"o{i}.yaml")
        files[-1].write_text(body)
    with pytest.raises(BadInput) as exc:
        calibration.platform_calibration(files)
    assert exc.value.field == field


def test_platform_command_hands_the_effective_calibration_over(tmp_path):
    f = tmp_path / "mine.json"
    f.write_text(json.dumps({"extends": "platform-gcf",
                             "entries": {"cold_start_fixed": {"value": 10, "unit": "ms", "source": "test"}}}))
    cmd, _ = local_platform.platform_command(tmp_path, "127.0.0.1:0", "lambda", "1s", 10, "none", "host", "",
                                             "none", None, None, [f])
    path = cmd[cmd.index("--calibration") + 1]
    written = json.loads(open(path).read())
    assert written == calibration.platform_calibration([f])
    assert written["profiles"]["gcf"]["entries"]["cold_start_fixed"]["value"] == 10


def test_running_platform_names_the_tables_in_force(tmp_path):
    f = tmp_path / "mine.yaml"
    f.write_text("extends: platform-lambda\nentries:\n"
                 "  cold_start_fixed: {value: 1, unit: ms, source: test}\n")
    data = tmp_path / "data"
    state = local_platform.start(profile="lambda", data_dir=data, port=0, isolation="none", calibration=[f])
    try:
        h = local_platform.health(state["endpoint"])
        lam_version = max(calibration.available()["platform-lambda"])
        assert h["calibration"]["lambda"] == {"table": "platform-lambda", "version": lam_version,
                                              "overridden": {"cold_start_fixed": str(f)},
                                              "front_end_ms": 18.0}  # the modelled front end in force
        assert h["calibration"]["gcf"]["table"] == "platform-gcf"
        assert "unlimited" not in h["calibration"]
        assert h["calibration_file"] == str(data / calibration.PLATFORM_CALIBRATION_FILE)
    finally:
        local_platform.stop(data)
