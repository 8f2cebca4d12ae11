"""The results file's disk fills up mid-campaign (a small tmpfs made by the test): exit 1 with a
message naming the path and saying the disk is full, every record kept, the resume command
printed; after space is freed, --resume completes with exactly the planned records. It was
four chained sqlite3 tracebacks, the campaign left 'running'. FAKE in-process provider
(tests/driver/driver_fakes.py)."""
from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest

from driver_fakes import InProcessFakeProvider
from faascope.driver.runner import run_campaign
from faascope.errors import Failure

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")

SPEC = """
name: disk-full
provider: {kind: local}
workload: {kind: noop}
factors: {memory: [128, 256]}
design: {replications: 20, seed: 2}
"""


def fill(directory: Path) -> Path:
    """Write a file until the file system is full."""
    filler = directory / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_a_full_disk_stops_the_campaign_with_a_message_and_resume_completes_with_in_process_fake_provider():
    mnt = Path(tempfile.mkdtemp(prefix="faascope-diskfull-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], check=True)
    try:
        spec = mnt / "spec.yaml"
        spec.write_text(SPEC)
        db = mnt / "r.db"
        fake = InProcessFakeProvider(delay_s=0.0005)
        filled: list[Path] = []
        real_invoke = fake.invoke

        def invoke(name, payload):
            if fake.invocations == 10 and not filled:
                filled.append(fill(mnt))  # the disk fills while the 11th call is in flight
            return real_invoke(name, payload)
        fake.invoke = invoke
        with pytest.raises(Failure) as ei:
            run_campaign(spec, db, provider_factory=lambda _: fake, progress=False)
        msg = ei.value.message
        assert ei.value.exit_code == 1
        assert ei.value.__cause__ is None  # one message, not a chain of tracebacks
        assert "disk" in msg and "full" in msg and str(db) in msg, msg
        assert f"faascope run {spec} --results {db} --resume" in msg, msg
        with sqlite3.connect(db) as c:
            recorded = c.execute("SELECT count(*) FROM invocations").fetchone()[0]
        assert recorded == 10  # every record before the disk filled is kept

        filled[0].unlink()
        s = run_campaign(spec, db, resume=True, provider_factory=lambda _: InProcessFakeProvider(),
                         progress=False)
        assert s.complete and s.recorded == 40
        with sqlite3.connect(db) as c:
            got = c.execute("SELECT cell_key, replication, kind FROM invocations "
                            "ORDER BY order_index").fetchall()
            want = c.execute("SELECT cell_key, replication, kind FROM planned_runs "
                             "ORDER BY order_index").fetchall()
            assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert got == want
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
        mnt.rmdir()
