"""The `faascope` command. Each subcommand lives beside the concept it drives and is imported
only when used, so `faascope --help` stays fast and one broken extra never breaks the rest."""
from __future__ import annotations

import importlib

import click

from faascope import __version__

# name -> "module:attribute" of a click.Command
COMMANDS = {
    "platform": "faascope.standins.platform_commands:platform_group",
    "package": "faascope.providers.packaging:package_command",
    "plan": "faascope.driver.plan_commands:plan_command",
    "run": "faascope.driver.commands:run_command",
    "status": "faascope.driver.commands:status_command",
    "stop": "faascope.driver.commands:stop_command",
    "export": "faascope.store.commands:export_command",
    "analyze": "faascope.analysis.commands:analyze_command",
    "compare": "faascope.compare.commands:compare_command",
    "report": "faascope.report.commands:report_command",
    "tiers": "faascope.tiers.commands:tiers_command",
    "stagger": "faascope.stagger.commands:stagger_group",
    "cleanup": "faascope.providers.cleanup:cleanup_command",
    "standins": "faascope.standins.commands:standins_group",
    "tune": "faascope.tune.commands:tune_command",
}
# group name -> {subcommand: "module:attribute"}: subcommands that live in a higher layer than
# their group (`platform fidelity` runs campaigns through the driver, above the stand-ins'
# layer that owns `platform`), so the command line, the top layer, puts them together
SUBCOMMANDS = {
    "platform": {"fidelity": "faascope.fidelity.commands:fidelity_command"},
}


def _load(target: str):
    module, attr = target.split(":")
    return getattr(importlib.import_module(module), attr)


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        target = COMMANDS.get(name)
        if target is None:
            return None
        try:
            command = _load(target)
            for sub, sub_target in SUBCOMMANDS.get(name, {}).items():
                if sub not in command.commands:
                    command.add_command(_load(sub_target), sub)
            return command
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("faascope"):
                return None  # not built yet in this checkout
            raise


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="faascope")
def cli():
    """Measure and explain the I/O performance and predictability of serverless functions."""


def main():
    """The console entry: a defect that escapes a command is reported in one line (and its
    traceback kept in a file for the bug report), never as a traceback on the user's screen;
    FAASCOPE_DEBUG=1 re-raises it."""
    import os
    import sys
    import tempfile
    import traceback

    try:
        cli(standalone_mode=True)
    except Exception as exc:  # noqa: BLE001 - the last line of defence; click handles its own
        if os.environ.get("FAASCOPE_DEBUG"):
            raise
        fd, path = tempfile.mkstemp(prefix="faascope-crash-", suffix=".txt")
        with os.fdopen(fd, "w") as fh:
            traceback.print_exc(file=fh)
        click.echo(f"Error: internal error ({type(exc).__name__}: {exc}). This is a defect in faascope "
                   f"{__version__}; the traceback is in {path} (please attach it to a bug report).",
                   err=True)
        sys.exit(1)
