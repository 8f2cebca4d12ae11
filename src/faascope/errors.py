"""Errors with the exit statuses of the command-line contract (docs/specs.md, "Command line")."""
from __future__ import annotations

import click


class BadInput(click.ClickException):
    """Bad input from the user: exit status 2, with a message naming the field or value."""

    exit_code = 2

    def __init__(self, message: str, field: str | None = None):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field


class Failure(click.ClickException):
    """Anything else that went wrong: exit status 1."""

    exit_code = 1
