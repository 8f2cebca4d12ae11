"""The stand-ins' made-up keys are one fact: the local platform hands them to every function as its
role's credentials (agent/platform/env.go), the stand-ins are started with them
(faascope.standins). Two copies of one value, held equal here."""
from __future__ import annotations

import re
from pathlib import Path

from faascope import standins

ENV_GO = Path(__file__).parents[2] / "agent" / "platform" / "env.go"


def go_const(name: str) -> str:
    m = re.search(rf'^\s*{name}\s*=\s*"([^"]*)"', ENV_GO.read_text(), re.M)
    assert m, f"{name} is no longer a string constant of {ENV_GO}"
    return m.group(1)


def test_function_credentials_are_the_standins_keys():
    assert go_const("FunctionAccessKeyID") == standins.DEFAULT_ACCESS_KEY
    assert go_const("FunctionSecretAccessKey") == standins.DEFAULT_SECRET_KEY


def test_secret_is_not_made_from_the_key_id():
    """AWS's role secret is independent of its key id (test_introspection_invoke's recording
    normalises it as its own <aws-secret-access-key:1>); a secret containing the key id is
    normalised as "<aws-access-key-id:1>…" and differs."""
    assert standins.DEFAULT_ACCESS_KEY not in standins.DEFAULT_SECRET_KEY
    assert len(standins.DEFAULT_SECRET_KEY) == 40  # an AWS secret access key's length
