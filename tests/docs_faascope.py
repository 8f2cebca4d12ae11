"""`faascope` as the docs' command blocks run it (tests/test_docs_commands.py): the real command
line, except that `faascope run` sends its invocations to the FAKE in-process provider
(tests/driver/driver_fakes.py), so a documented campaign of hours takes seconds. Everything else
(plan, analyze, export, report …) is the real command on the results those runs recorded."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "driver"))

import faascope.driver.runner as runner  # noqa: E402
from driver_fakes import InProcessFakeProvider  # noqa: E402
from faascope.cli import main  # noqa: E402

real_run_campaign = runner.run_campaign


def run_with_fake_provider(*args, **kw):
    kw["provider_factory"] = lambda _: InProcessFakeProvider(delay_s=0.0005)
    return real_run_campaign(*args, **kw)


runner.run_campaign = run_with_fake_provider

if __name__ == "__main__":
    sys.argv[0] = "faascope"
    main()
