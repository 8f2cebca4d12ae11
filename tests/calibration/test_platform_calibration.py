"""The local platform's calibration: the packaged platform tables, a user's override, the file
faascope-platform reads, and the platform naming the tables in force."""
import json
import re

import pytest

from faascope import calibration
from faascope.calibration import fits
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
    # CALIBRATION: DIRECT_READ, 2048 MB, 1,024,000,000 B; the 512 B and 131,072 B cells' medians,
    # read from the published anchors (the one place they are written: faascope.calibration.fits)
    anchors = calibration.load_table("published-anchors")
    big = fits.FIT_CELLS["tmp_read_iops"]
    assert t.value("tmp_read_iops") == round(anchors.value(f"{big}_ops") / anchors.value(f"{big}_median"))
    assert t.value("tmp_read_bps") == int(1_024_000_000 / anchors.value(f"{fits.FIT_CELLS['tmp_read_bps']}_median"))
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
                                              "front_end_ms": 18.0,  # the modelled front end in force
                                              # each /tmp request's CPU (agent/platform/devicecpu.go)
                                              "device_cpu_us": calibration.load_table("platform-lambda")
                                              .entries["device_cpu"].value}
        assert h["calibration"]["gcf"]["table"] == "platform-gcf"
        assert "unlimited" not in h["calibration"]
        assert h["calibration_file"] == str(data / calibration.PLATFORM_CALIBRATION_FILE)
    finally:
        local_platform.stop(data)


def test_lambdas_fitted_tmp_entries_are_derived_from_the_anchors():
    """The table's fitted /tmp figures are what faascope.calibration.fits derives from the
    published anchors, at the anchors' memory sizes; a hand-edited figure, or an anchor changed
    without refitting, fails here."""
    t = calibration.load_table("platform-lambda")
    derived = fits.lambda_tmp_fits()
    assert set(derived) == set(fits.FIT_CELLS)
    for key, value in derived.items():
        assert t.value(key) == value, key
        assert t[key].role == "fit"
    assert t.value("tmp_limits_memory") == fits.cell_shape(fits.FIT_CELLS["tmp_read_iops"])[0] == 2048
    # the anchors say these cells were fitted, so the fidelity report keeps them out of its check
    anchors = calibration.load_table("published-anchors")
    for cell in fits.FIT_CELLS.values():
        assert f"platform-lambda@{t.version}" in anchors.fit_keys()[f"{cell}_median"]


def test_the_fit_notes_quote_the_anchors_and_the_fitted_values():
    """The notes of the fitted entries cite the medians; every median they cite is an anchor's
    (a copy that drifts from published-anchors fails), and each names its own fitted value."""
    t = calibration.load_table("platform-lambda")
    anchors = calibration.load_table("published-anchors")
    medians = {anchors.value(f"{c}_median") for c in fits.FIT_CELLS.values()}
    quoted = 0
    for key, value in fits.lambda_tmp_fits().items():
        note = t[key].note
        for cited in re.findall(r"median ([0-9][0-9.]*) s\b", note):
            assert float(cited) in medians, f"{key}: the note cites a median {cited} s no anchor has"
            quoted += 1
        shown = f"{value:g}" if key == "tmp_limits_memory_exponent" else f"{int(value):,}"
        assert shown in note, f"{key}: the note does not name the fitted value {shown}"
    assert quoted >= 5  # each read entry cites both 2048 MB cells, the exponent the 128 MB one


def test_no_go_source_copies_the_fit_cells_medians():
    """The Go platform's tests read the medians from the anchors table (publishedAnchor), never a
    copy of the figure."""
    from pathlib import Path

    anchors = calibration.load_table("published-anchors")
    figures = [f"{anchors.value(f'{c}_median')!r}" for c in fits.FIT_CELLS.values()]
    agent = Path(__file__).resolve().parents[2] / "agent"
    copies = [f"{p.relative_to(agent)}: {fig}" for p in agent.rglob("*.go") for fig in figures
              if fig in p.read_text()]
    assert not copies, copies
