"""No traceback ever reaches a user: a defect that escapes a command is one line on stderr with
exit status 1, its traceback kept in a file named there (FAASCOPE_DEBUG=1 shows it)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CRASH = """
import sys
import faascope.analysis.scenarios as s
def broken(*a, **k):
    raise KeyError(None)
s.analyse = broken
sys.argv = ["faascope", "analyze", "examples/data/thesis-2024/main_experiment.csv",
            "--response", "latency_seconds", "--factors", "system_name"]
from faascope.cli import main
main()
"""


def test_a_defect_is_one_line_and_a_file_not_a_traceback():
    env = {k: v for k, v in os.environ.items() if k != "FAASCOPE_DEBUG"}
    r = subprocess.run([sys.executable, "-c", CRASH], cwd=ROOT, capture_output=True, text=True, env=env)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr + r.stdout
    m = re.search(r"internal error \(KeyError: None\).*traceback is in (\S+) ", r.stderr)
    assert m, r.stderr
    kept = Path(m.group(1))
    assert "Traceback" in kept.read_text() and "broken" in kept.read_text()
    kept.unlink()
    r = subprocess.run([sys.executable, "-c", CRASH], cwd=ROOT, capture_output=True, text=True,
                       env={**env, "FAASCOPE_DEBUG": "1"})
    assert r.returncode == 1 and "Traceback" in r.stderr
