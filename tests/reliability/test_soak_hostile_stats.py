"""The statistics and tallies of bench/soak_hostile.py (the bench itself is not a timed test)."""
from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def sh():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("soak_hostile", BENCH / "soak_hostile.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(BENCH))


def test_percentile_matches_numpy(sh):
    rng = random.Random(3)
    for n in (1, 2, 7, 100, 101):
        xs = [rng.expovariate(1) for _ in range(n)]
        for q in (0, 0.5, 0.95, 0.99, 1):
            assert sh.percentile(xs, q) == pytest.approx(float(np.percentile(xs, q * 100)))
    with pytest.raises(ValueError):
        sh.percentile([], 0.5)


def test_summary(sh):
    s = sh.summary([float(x) for x in range(1, 101)])
    assert s["n"] == 100 and s["median"] == 50.5 and s["p95"] == pytest.approx(95.05)


def test_ratio_ci_covers_one_for_the_same_distribution(sh):
    rng = random.Random(1)
    a = [[rng.lognormvariate(3, 0.3) for _ in range(60)] for _ in range(4)]
    b = [[rng.lognormvariate(3, 0.3) for _ in range(60)] for _ in range(4)]
    point, lo, hi = sh.ratio_ci(a, b, reps=500)
    assert lo < point < hi and lo < 1 < hi and hi - lo < 0.3


def test_ratio_ci_finds_a_real_slowdown(sh):
    rng = random.Random(2)
    a = [[rng.lognormvariate(3, 0.2) for _ in range(50)] for _ in range(3)]
    b = [[1.5 * rng.lognormvariate(3, 0.2) for _ in range(50)] for _ in range(3)]
    point, lo, hi = sh.ratio_ci(a, b, reps=500)
    assert point == pytest.approx(1.5, rel=0.1) and 1.3 < lo < point < hi < 1.8


def test_ratio_ci_widens_with_drift_between_blocks(sh):
    # Same distribution within each phase, but blocks drift: the two-level bootstrap must be
    # wider than if every observation came from one block.
    rng = random.Random(4)
    drift = [1.0, 1.3, 0.8, 1.2]
    a = [[d * rng.lognormvariate(3, 0.1) for _ in range(80)] for d in drift]
    b = [[d * rng.lognormvariate(3, 0.1) for _ in range(80)] for d in drift]
    _, lo, hi = sh.ratio_ci(a, b, reps=500)
    _, lo1, hi1 = sh.ratio_ci([sum(a, [])], [sum(b, [])], reps=500)
    assert hi - lo > 2 * (hi1 - lo1)
    assert lo < 1 < hi


def test_ratio_ci_ignores_empty_blocks_and_refuses_an_empty_phase(sh):
    assert sh.ratio_ci([[1.0, 1.0], []], [[2.0, 2.0]], reps=50) == (2.0, 2.0, 2.0)
    with pytest.raises(ValueError):
        sh.ratio_ci([[]], [[1.0]])


def test_block_order_and_pair_ratios(sh):
    assert sh.block_order(2) == list("ABACABAC")
    blocks = [{"phase": p, "obs": o} for p, o in
              [("A", [10, 10]), ("B", [20]), ("A", [5]), ("C", [5, 5]), ("A", [10]), ("B", [])]]
    assert sh.pair_ratios(blocks, "B") == [2.0]  # the empty B block has no ratio
    assert sh.pair_ratios(blocks, "C") == [1.0]


def test_tally_and_successes(sh):
    refused = {"uid": 1051, "add_key_user": "EPERM", "add_key_session": "EPERM", "keyctl_search": "EPERM",
               "keyctl": "EPERM", "unshare_user": "EPERM", "unshare_mount": "EPERM", "mount": "EPERM",
               "umount": "EPERM", "clone_newuser": "EPERM", "ptrace": "EPERM", "found_twin_key": False,
               "unshare_cmd": "Operation not permitted / exit status 1", "inotify_took": 128, "inotify_held": 128,
               "proc_keys_lines": 1, "spinners_alive": 1, "flood": {"429": 290, "403": 9}}
    t = sh.tally_hostile([refused, dict(refused, uid=1052, inotify_took=0, spinners_alive=2,
                                        flood={"429": 291, "no answer in 0.5 s (a waiting /next)": 1})])
    assert t["add_key_user"] == {"EPERM": 2} and t["found_twin_key"] == {"False": 2}
    assert t["inotify_took"] == {"128": 1, "0": 1} and t["inotify_held_max"] == 128
    assert t["flood"] == {"429": 581, "403": 9, "no answer in 0.5 s (a waiting /next)": 1}
    assert t["uids"] == [1051, 1052] and t["spinners_alive_max"] == 2
    assert sh.hostile_successes(t) == {}

    leaked = dict(refused, found_twin_key=True, ptrace="ok", unshare_cmd="0 / ok")
    bad = sh.hostile_successes(sh.tally_hostile([refused, leaked]))
    assert bad == {"found_twin_key": {"True": 1}, "ptrace": {"ok": 1}, "unshare_cmd": {"0 / ok": 1}}
    # an attempt that never came back at all is not a success
    assert sh.hostile_successes(sh.tally_hostile([])) == {}


# --- the hostile runtime: one source for the soak and the platform's isolation tests ------------

REPO = BENCH.parent
HOSTILE = REPO / "agent" / "platform" / "testdata" / "hostile"


def test_the_soak_deploys_the_isolation_tests_hostile_runtime(sh):
    """The bench builds the runtime isolation_test.go builds, and embeds no second copy of it."""
    assert sh.HOSTILE_SRC == HOSTILE
    assert '"./testdata/hostile"' in (REPO / "agent" / "platform" / "isolation_test.go").read_text()
    for py in BENCH.glob("*.py"):
        assert "package main" not in py.read_text(), f"{py.name} embeds Go source"


def test_the_soaks_attack_request_is_what_the_runtime_decodes(sh):
    """Every key of the soak's request is a JSON field of the runtime's request, and "attack"
    is one of its operations: a field renamed on one side fails here, not silently in a soak."""
    import re

    go = "\n".join(p.read_text() for p in sorted(HOSTILE.glob("*.go")))
    struct = re.search(r"type request struct \{(.*?)\n\}", go, re.S).group(1)
    fields = set(re.findall(r'`json:"([^",]+)', struct))
    req = sh.attack_request("hostile-a", "hostile-b", 3, 300, 4)
    assert set(req) <= fields, set(req) - fields
    assert req["op"] == "attack" and 'req.Op == "attack"' in go and "func attack(req request)" in go
    assert req["add_desc"] == "soak-hostile-a-3" and req["find_desc"] == "soak-hostile-b-2"


def test_build_hostile_builds_a_static_bootstrap(sh, tmp_path, monkeypatch):
    import os
    import shutil
    import zipfile

    if shutil.which("go") is None:
        if not Path("/usr/local/go/bin/go").exists():
            pytest.skip("no Go toolchain")
        monkeypatch.setenv("PATH", os.environ["PATH"] + ":/usr/local/go/bin")
    data = sh.build_hostile(tmp_path / "build")
    zpath = tmp_path / "h.zip"
    zpath.write_bytes(data)
    with zipfile.ZipFile(zpath) as z:
        info = z.getinfo("bootstrap")
        assert (info.external_attr >> 16) & 0o111
        exe = z.read("bootstrap")
    assert exe[:4] == b"\x7fELF"
    assert b"/lib64/ld-linux" not in exe and b"/lib/ld-linux" not in exe  # CGO_ENABLED=0: static
