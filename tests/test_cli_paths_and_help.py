"""The command line's own text and its refusals (issue #25, item 10): every command's --help
renders without a literal "%%" (click does not %-format help strings, so "95%% CI" reached
users), and every command that reads a results file or a table refuses a missing one with exit
status 2 naming it (``faascope status missing.db`` answered "no campaign yet" and exit 0)."""
from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from faascope.cli import cli


def _commands(group: click.Group, ctx: click.Context, path=()):
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        yield path + (name,), cmd
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, click.Context(cmd, parent=ctx, info_name=name), path + (name,))


COMMANDS = list(_commands(cli, click.Context(cli, info_name="faascope")))


def test_every_command_is_found():
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"tune", "status", "stagger grid", "stagger suggest", "report", "analyze"} <= names
    assert len(names) >= 20


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_help_has_no_literal_double_percent(path):
    r = CliRunner().invoke(cli, [*path, "--help"], terminal_width=200)
    assert r.exit_code == 0, r.output
    assert "%%" not in r.output, r.output


#: the commands whose argument names an existing input file, with the options they need to get as
#: far as reading it
READS_A_FILE = {
    "status": [], "stop": [], "export": ["--format", "csv", "--out", "x.csv"],
    "report": ["--out", "rep"], "analyze": ["--response", "latency_seconds", "--factors", "memory"],
    "compare": ["{missing}2.db"], "stagger grid": [],
}
INPUT_ARGUMENTS = {"results", "input_paths", "inputs"}


def test_every_command_that_reads_a_results_file_is_checked():
    reads = {" ".join(p) for p, cmd in COMMANDS
             if any(isinstance(a, click.Argument) and a.name in INPUT_ARGUMENTS for a in cmd.params)}
    assert reads == set(READS_A_FILE)


@pytest.mark.parametrize("name", sorted(READS_A_FILE))
def test_a_missing_results_file_exits_2_naming_it(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    missing = "missing-file.db"
    extra = [a.format(missing=missing.removesuffix(".db")) for a in READS_A_FILE[name]]
    r = CliRunner().invoke(cli, [*name.split(), missing, *extra])
    assert r.exit_code == 2, r.output
    assert missing in r.output
    assert not (tmp_path / missing).exists()   # nothing created on the way


def test_status_of_a_run_still_creating_its_file_is_not_an_error(tmp_path):
    """A detached run records its runner before its results file exists: that is "not yet",
    not a mistyped path."""
    (tmp_path / "r.db.run.json").write_text('{"pid": 1, "state": "ended", "outcome": "killed"}')
    r = CliRunner().invoke(cli, ["status", str(tmp_path / "r.db")])
    assert r.exit_code == 0 and "no campaign" in r.output
