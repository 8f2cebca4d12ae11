"""`faascope platform fidelity` is a subcommand of `platform` (attached by the command line, the
top layer), and refuses bad options with exit status 2 before anything runs."""
from __future__ import annotations

from click.testing import CliRunner

from faascope.cli import cli


def test_fidelity_is_listed_under_platform_beside_its_other_commands():
    r = CliRunner().invoke(cli, ["platform", "--help"])
    assert r.exit_code == 0
    for name in ("fidelity", "start", "stop", "status"):
        assert f"  {name} " in r.output


def test_bad_profile_is_exit_2_naming_the_option(tmp_path):
    r = CliRunner().invoke(cli, ["platform", "fidelity", "--profile", "unlimited",
                                 "--data-dir", str(tmp_path)])
    assert r.exit_code == 2 and "--profile" in r.output
    assert not any(tmp_path.iterdir())  # nothing started, nothing written
