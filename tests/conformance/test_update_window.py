"""The update window's size, justified on the machine that runs the tests: AWS's recordings show a
call made right after an update finding it InProgress (test_lambda_code_location_zipfile,
test_publish_with_update, test_lambda_concurrent_*_updates), and the platform holds each update
InProgress for its window (agent/platform: DefaultUpdateWindow) so that such a call does here too.
The window must exceed the time from an update's answer to the next call's arrival by a wide
margin; this measures that time with boto3, as the replay makes the calls, and asserts every call
found the update InProgress and the slowest arrived within a quarter of the window."""
from __future__ import annotations

import io
import re
import time
import uuid
import zipfile
from pathlib import Path

from .conftest import ROLE

PLATFORM_GO = Path(__file__).parents[2] / "agent" / "platform" / "platform.go"
TRIES = 20


def default_update_window_s() -> float:
    m = re.search(r"^const DefaultUpdateWindow = (\d+) \* time\.Millisecond$", PLATFORM_GO.read_text(), re.M)
    assert m, "DefaultUpdateWindow is no longer a whole number of milliseconds in platform.go"
    return int(m.group(1)) / 1000


def test_a_call_right_after_an_update_finds_it_in_progress(lam):
    window = default_update_window_s()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("index.py", "def handler(event, context):\n    return event\n")
    code = buf.getvalue()
    name = f"update-window-{uuid.uuid4().hex[:6]}"
    lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="index.handler",
                        Code={"ZipFile": code})
    try:
        lam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig={"Delay": 0.1, "MaxAttempts": 300})
        gaps, statuses = [], []
        for i in range(TRIES):
            if i % 2:
                lam.update_function_code(FunctionName=name, ZipFile=code)
            else:
                lam.update_function_configuration(FunctionName=name, Description=str(i))
            t0 = time.perf_counter()
            statuses.append(lam.get_function(FunctionName=name)["Configuration"]["LastUpdateStatus"])
            gaps.append(time.perf_counter() - t0)  # the get's whole round trip: more than its arrival
            lam.get_waiter("function_updated_v2").wait(FunctionName=name, WaiterConfig={"Delay": 0.05, "MaxAttempts": 400})
        assert statuses == ["InProgress"] * TRIES
        assert max(gaps) < window / 4, f"a get right after an update took {max(gaps) * 1000:.0f} ms: the window ({window * 1000:.0f} ms) has too little margin"
        assert lam.get_function(FunctionName=name)["Configuration"]["LastUpdateStatus"] == "Successful"
    finally:
        lam.delete_function(FunctionName=name)
