"""`faascope` as the docs' command blocks run it (tests/test_docs_commands.py): the real command
line, except that `faascope run` sends its invocations to the FAKE in-process provider
(tests/driver/driver_fakes.py), so a documented campaign of hours takes seconds, and the waits
for a schedule's slots and a design's time blocks pass on a virtual clock. Everything else
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


class VirtualClock:
    """The clock the driver waits on for a schedule's slots and a blocked design's blocks:
    waiting moves it on at once instead of sleeping, so that a documented periodic campaign
    (every 5 s for 30 s) or one blocked in time (a block a second) takes no wall time, as the
    fake provider's invocations take none. The real waits are tests/driver/test_periodic.py's
    and tests/driver/test_driver_fake.py's time blocks."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def time(self) -> float:
        return _time.time() + self.ahead

    def sleep(self, seconds: float) -> None:
        self.ahead += max(0.0, seconds)

    def __getattr__(self, name):  # everything else is the real module's
        return getattr(_time, name)


import time as _time  # noqa: E402

import faascope.driver.periodic as periodic  # noqa: E402
import faascope.driver.sequential as sequential  # noqa: E402

periodic.time = sequential.time = VirtualClock()

if __name__ == "__main__":
    sys.argv[0] = "faascope"
    main()
