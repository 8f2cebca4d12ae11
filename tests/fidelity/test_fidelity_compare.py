"""The fidelity report's arithmetic against hand-computed inputs: ratios, the ×1.5 bar, per-call
published figures, fit vs held out, the 2024 study's decisions, and the JSON's shape."""
from __future__ import annotations

import json

import numpy as np
import pytest

from faascope import calibration
from faascope.designs.plan import build_plan
from faascope.fidelity import battery, compare, metrics, render
from faascope.fidelity.compare import Local
from faascope.specs.loader import parse_spec

TABLES = metrics.load_tables()
ALL = metrics.battery_metrics()
BY_ID = {m.id: m for m in ALL}
PUB = {m.id: metrics.published(m, TABLES) for m in ALL}
BIG_READ = "lambda/tmp/direct_read/m2048/f1024000000/io512"


@pytest.mark.parametrize("local, published, r, ok", [
    (3.0, 2.0, 1.5, True),            # the bar itself is within
    (2.0, 3.0, 2 / 3, True),          # and so is its inverse
    (3.1, 2.0, 1.55, False),
    (1.0, 2.0, 0.5, False),
    (None, 2.0, None, False),         # nothing measured is never within
])
def test_ratio_and_within(local, published, r, ok):
    got = compare.ratio(local, published)
    assert got == (pytest.approx(r) if r is not None else None)
    assert compare.within(got) is ok


def test_published_thesis_figure_is_per_dd_call():
    # 1 GB direct read on Lambda at 512 B: 265.3265 s over 2,000,000 dd reads = 132.66 µs a call
    p = PUB[BIG_READ]
    assert p.value == pytest.approx(265.3265 / 2_000_000)
    # 128 KiB: 30.7398 s over ceil(1,024,000,000 / 131,072) = 7,813 reads
    assert PUB["lambda/tmp/direct_read/m2048/f1024000000/io131072"].value == pytest.approx(30.7398 / 7813)
    # writes: dd count=8000 of bs=128k
    assert PUB["gcf/tmp/urandom_write/m2048/f1024000000/io131072"].value == pytest.approx(4.05683 / 8000)
    assert p.anchor == "published-anchors@2026-11-23:thesis_lambda_direct_read_m2048_f1024000000_io512_median"
    assert "thesis" in p.source.lower()


def test_units_become_seconds():
    assert PUB["lambda/cold/latency"].value == pytest.approx(0.448)
    assert PUB["gcf/cold/latency"].value == pytest.approx(0.870)
    assert PUB["lambda/storage/s3_standard/write/median"].value == pytest.approx(0.03699)
    assert PUB["lambda/network/baseline_rate"].value == 77_500_000


def test_fit_and_held_out_follow_the_tables():
    fit = {i for i, p in PUB.items() if p.fit}
    # the three thesis cells the lambda profile's /tmp was fitted to (its limits at 2048 MB and
    # their memory exponent), the two large urandom-write cells the gcf profile's CPU speed is
    # fitted to, GCF's large 512 B read cell its per-system-call cost is fitted to, and its
    # 10 KB read at 2048 MB its cost of a close; nothing else of the thesis
    big_writes = {f"{p}/tmp/urandom_write/m2048/f1024000000/io131072" for p in ("lambda", "gcf")}
    gcf_reads = {"gcf/tmp/direct_read/m2048/f1024000000/io512", "gcf/tmp/direct_read/m2048/f10000/io512"}
    assert {i for i in fit if "/tmp/" in i} == {BIG_READ, "lambda/tmp/direct_read/m2048/f1024000000/io131072",
                                                "lambda/tmp/direct_read/m128/f10000/io512"} | gcf_reads | big_writes
    # every other GCF /tmp cell is held out; of gcf, the cold start is fit (its modelled part)
    assert {i for i in fit if i.startswith("gcf/")} == {
        "gcf/cold/latency", "gcf/tmp/urandom_write/m2048/f1024000000/io131072"} | gcf_reads
    # the warm median is the modelled front end (front_end_delay), the Go init the modelled INIT
    # overhead's fit (init_overhead): both fit by construction
    assert PUB["lambda/warm/latency"].fit and PUB["lambda/cold/init"].fit
    # the stand-ins' latencies come from standins-aws itself: fit by construction
    assert all(PUB[i].fit for i in PUB if "/storage/" in i)
    assert all(PUB[i].anchor.startswith("standins-aws@") for i in PUB if "/storage/" in i)


def test_every_anchor_is_used_by_the_battery_and_every_metric_has_one():
    anchors = calibration.load_table(metrics.ANCHORS_TABLE)
    used = {m.key for m in ALL if m.table == metrics.ANCHORS_TABLE} | \
        {m.per_key for m in ALL if m.per_key}
    assert used == set(anchors.entries)
    standins = calibration.load_table(metrics.STANDINS_TABLE)
    assert {m.key for m in ALL if m.table == metrics.STANDINS_TABLE} <= set(standins.entries)


def test_decision_hand_computed():
    cell = BY_ID[BIG_READ].cell
    # thesis: Lambda 265.3 s vs GCF 5.37 s -> GCF's /tmp wins
    d = compare.decide(cell, 265.3265, 5.371035, local_lambda=2e-5, local_gcf=2e-6)
    assert (d.published_winner, d.local_winner, d.agree) == ("gcf", "gcf", True)
    assert d.published_ratio == pytest.approx(265.3265 / 5.371035)
    assert d.local_ratio == pytest.approx(10.0)
    d = compare.decide(cell, 265.3265, 5.371035, local_lambda=1e-6, local_gcf=2e-6)
    assert (d.local_winner, d.agree) == ("lambda", False)
    d = compare.decide(cell, 1.0, 1.0, local_lambda=None, local_gcf=2e-6)
    assert (d.published_winner, d.local_winner, d.agree) == ("none", None, None)


def _local_all(value_of) -> dict[str, Local]:
    return {m.id: Local(value_of(m), n=1) for m in ALL}


def test_evaluate_keeps_decisions_when_one_profile_is_reported():
    # every local figure exactly twice its published one: nothing within, decisions agree
    local = _local_all(lambda m: 2 * PUB[m.id].value)
    ev = compare.evaluate(ALL, local, PUB, profiles=("lambda",))
    assert ev.comparisons and all(c.metric.profile == "lambda" for c in ev.comparisons)
    assert all(c.ratio == pytest.approx(2.0) and not c.within and c.why for c in ev.comparisons)
    assert len(ev.decisions) == len(metrics.THESIS_CELLS) == 8
    # the two 10 KB write cells where the thesis's own data show no winner are not judged
    # from a point figure (no local interval to set against the thesis's)
    assert all(d.agree for d in ev.decisions if d.counted)
    assert sum(d.counted for d in ev.decisions) == 6
    assert len(ev.fit) + len(ev.held_out) == len(ev.comparisons)


def test_why_says_what_keeps_a_metric_out():
    m = BY_ID["lambda/tmp/urandom_write/m2048/f1024000000/io512"]
    assert "CPU" in compare.why(m, Local(1.0), 1.8)
    s3 = BY_ID["lambda/storage/s3_standard/write/median"]
    assert "not shaped" in compare.why(s3, Local(0.001), 0.001 / 0.03699)
    rate = BY_ID["lambda/network/burst_rate"]
    # a lower rate is slower, a lower time faster
    assert compare.why(rate, Local(4e8, facts={"burst": True}), 0.45).startswith("slower")
    assert compare.why(s3, Local(0.001), 0.03).startswith("faster")
    flat = compare.why(rate, Local(None, note="no burst visible: a steady 80 MB/s"), None)
    assert flat.startswith("no burst visible")


def test_why_a_gcf_128k_read_is_slower_names_this_machines_memory():
    """With the bare machine's own dd time measured, the slower 128 KiB read is put on it, with
    the ratio worked out from the figures given (GCF: 83.01745 ms / 7,813 calls = 10.626 µs)."""
    m = BY_ID["gcf/tmp/direct_read/m2048/f1024000000/io131072"]
    pub = PUB[m.id].value
    assert pub == pytest.approx(0.08301745 / 7813)
    local = Local(30.5e-6, facts={"host_read_per_call_s": 31.3e-6, "direct_effective": True})
    text = compare.why(m, local, 30.5e-6 / pub)
    assert text.startswith("slower than GCF: this machine itself") and "31.3 µs" in text
    assert "×2.9 GCF's 10.6 µs" in text and "131,072 B" in text
    # without the bare figure, the earlier explanation (system calls and copies under the quota)
    assert "syscall_cost" in compare.why(m, Local(30.5e-6), 30.5e-6 / pub)
    # a faster cell is never put on the machine being slow
    assert "this machine itself" not in compare.why(m, Local(5e-6, facts={"host_read_per_call_s": 4e-6}), 5e-6 / pub)


def test_a_call_bound_miss_names_this_machines_own_call_speed_before_and_after():
    """The reference of this machine's call speed (512 B urandom writes, no sandbox), measured
    before and after the battery, is in the explanation of a call-bound cell and in the table."""
    from rich.console import Console

    m = BY_ID["lambda/tmp/urandom_write/m2048/f1024000000/io512"]
    text = compare.why(m, Local(4.3e-6, facts={"host_call_per_call_s": (2.6e-6, 3.9e-6)}), 1.1)
    assert "took 2.6 µs a call before the battery and 3.9 µs after (×1.5)" in text
    assert "after" not in compare.why(m, Local(4.3e-6), 1.1)
    ev = compare.evaluate(ALL, _local_all(lambda x: PUB[x.id].value), PUB)

    def table(before: float, after: float) -> str:
        con = Console(record=True, width=250)
        render.render_table(ev, {"workdir": "/x", "platform": {}, "machine": {
            "cpus": 2, "host_urandom_write_per_call_s": {"io_size": 512, "file_size": 1 << 20,
                                                         "before": before, "after": after}}}, con)
        return con.export_text()

    out = table(2.6e-6, 3.9e-6)
    # ×1.5 during the battery: a warning, not a line of information
    assert "warning: this machine's own call speed moved during the battery" in out
    assert "took 2.6 µs a call before the battery and 3.9 µs after (×1.5)" in out
    out = table(2.6e-6, 3.1e-6)
    assert "This machine's own 512 B urandom write, no sandbox, took 2.6 µs" in out
    assert "moved during the battery" not in out
    assert compare.drift_note({"host_urandom_write_per_call_s": {"before": 4e-6, "after": 3e-6}})
    assert not compare.drift_note({"host_urandom_write_per_call_s": {"before": 4e-6, "after": 3.3e-6}})
    assert not compare.drift_note({})


def test_host_call_write_times_this_machines_dd():
    """A real 512 B urandom dd write on /dev/shm: a positive time a call, and less than a 1 MiB
    read's (an ordering with a wide margin, not a timing)."""
    call = battery.host_call_write(runs=3)
    if call is None:
        pytest.skip("no /dev/shm or dd on this machine")
    assert 0 < call < battery.host_memory_read(8 << 20, io_size=1 << 20, runs=3)


def test_host_memory_read_times_this_machines_dd():
    """A real dd on a file in /dev/shm: a positive time a call, and a 4 KiB call is quicker than
    a 1 MiB one (an ordering with a wide margin, not a timing)."""
    small = battery.host_memory_read(8 << 20, io_size=4096, runs=3)
    large = battery.host_memory_read(8 << 20, io_size=1 << 20, runs=3)
    if small is None:
        pytest.skip("no /dev/shm or dd on this machine")
    assert 0 < small < large


def test_json_has_every_field_per_metric():
    local = _local_all(lambda m: PUB[m.id].value * 1.2)
    ev = compare.evaluate(ALL, local, PUB)
    doc = json.loads(json.dumps(render.as_json(ev, {"profiles": ["lambda", "gcf"]})))
    assert len(doc["metrics"]) == len(ALL)
    for m in doc["metrics"]:
        assert {"local", "published", "source", "ratio", "within", "fit", "held_out", "anchor",
                "unit", "why"} <= set(m)
        assert m["ratio"] == pytest.approx(1.2) and m["within"] is True and m["why"] == ""
    assert doc["summary"]["decisions"] == {"agree": 6, "total": 6, "no_winner_in_the_study": 2}
    assert doc["summary"]["fit"]["total"] + doc["summary"]["held_out"]["total"] == len(ALL)


def test_tmp_spec_plans_exactly_the_thesis_cells_on_both_profiles(tmp_path):
    cfg = battery.BatteryConfig(profiles=("lambda",), quick=True, workdir=tmp_path)
    spec = battery.specs(cfg, "http://127.0.0.1:1")["tmp"]
    plan = build_plan(parse_spec(spec, "tmp"), seed=1)
    got = sorted((c.levels["profile"], c.payload["workload"]["op"], c.function.memory_mb,
                  c.payload["workload"]["file_size"], c.payload["workload"]["io_size"])
                 for c in plan.cells)
    want = sorted((p, c.workload_op, c.memory_mb, battery.local_file_size(c, cfg), c.io_size)
                  for p in ("lambda", "gcf") for c in metrics.THESIS_CELLS)
    assert got == want
    for c in plan.cells:
        w = c.payload["workload"]
        assert w["engine"] == "dd"
        # as the thesis: dd iflag=direct for reads, dd if=/dev/urandom (page cache allowed) for writes
        assert (bool(w.get("direct")), w.get("source", "zero")) == \
            ((True, "zero") if w["op"] == "read" else (False, "urandom"))


@pytest.mark.parametrize("profiles", [("lambda", "gcf"), ("lambda",), ("gcf",)])
def test_every_spec_of_the_battery_plans(tmp_path, profiles):
    for quick in (True, False):
        cfg = battery.BatteryConfig(profiles=profiles, quick=quick, workdir=tmp_path)
        specs = battery.specs(cfg, "http://127.0.0.1:1")
        # lambda's published network, storage and warm figures only exist for Lambda
        assert ("network" in specs) is ("lambda" in profiles)
        for name, spec in specs.items():
            plan = build_plan(parse_spec(spec, name), seed=1)
            assert plan.runs, name
        cold = parse_spec(specs["cold"], "cold")
        assert cold.spec.design.cold_mode == "every"
        assert sorted(c.levels["profile"] for c in build_plan(cold, seed=1).cells) == sorted(profiles)


def _bucket_series(burst_rate, budget, refill, seconds, interval=0.02):
    """Bytes per interval a token bucket lets through from t=0: min(P·t, B + r·t), differenced."""
    t = np.arange(1, int(round(seconds / interval)) + 1) * interval
    cum = np.minimum(burst_rate * t, budget + refill * t)
    return np.diff(np.concatenate([[0.0], cum]))


def test_burst_figures_of_a_known_bucket_and_of_a_lump():
    # 885 MB/s until 300 MB are spent (bucket keeps refilling at 77.5 MB/s), then 77.5 MB/s:
    # the burst ends where 885e6·t = 300e6 + 77.5e6·t, t = 0.3715 s, having moved 328.8 MB
    clean = _bucket_series(885e6, 300e6, 77.5e6, 3.0)
    f = battery.burst_figures([(clean, 0.02)])
    assert f.burst_rate == [pytest.approx(885e6, rel=0.02)]
    assert f.baseline == [pytest.approx(77.5e6, rel=0.02)]
    assert f.burst_bytes == [pytest.approx(885e6 * 300e6 / (885e6 - 77.5e6), rel=0.03)]
    # the same bytes handed over in one 20 ms lump: a burst with no measurable rate
    lump = np.concatenate([[330e6], np.full(130, 77.5e6 * 0.02)])
    g = battery.burst_figures([(clean, 0.02), (lump, 0.02)])
    assert g.lumps == 1 and len(g.burst_rate) == 1 and len(g.burst_bytes) == 2
    # a steady transfer has no burst at all
    h = battery.burst_figures([(np.full(100, 1.5e6), 0.02)])
    assert (h.burst_bytes, h.steady) == ([], [pytest.approx(75e6, rel=0.02)])


def test_a_loaded_machine_is_named_in_slower_times_only():
    assert compare.load_note({"cpus": 2, "load_1min_before": 3.9, "load_1min_after": 1}) == ""
    note = compare.load_note({"cpus": 2, "load_1min_before": 1, "load_1min_after": 5})
    assert "load average 5 on 2 CPUs" in note
    slow = compare.compare(BY_ID[BIG_READ], Local(PUB[BIG_READ].value * 3), PUB[BIG_READ], note)
    fast = compare.compare(BY_ID[BIG_READ], Local(PUB[BIG_READ].value / 3), PUB[BIG_READ], note)
    assert note in slow.why and note not in fast.why


def test_table_shows_fit_held_out_and_decisions_apart():
    from rich.console import Console

    local = _local_all(lambda m: PUB[m.id].value * (1.2 if PUB[m.id].fit else 3.0))
    ev = compare.evaluate(ALL, local, PUB)
    con = Console(record=True, width=250)
    render.render_table(ev, {"workdir": "/x", "machine": {"cpus": 2, "load_1min_before": 9},
                             "platform": {}}, con)
    out = con.export_text()
    n_fit, n_held = len(ev.fit), len(ev.held_out)
    assert f"Fit: the platform was calibrated on these figures ({n_fit}/{n_fit} within)" in out
    assert f"Held out of the fit (0/{n_held} within)" in out
    assert "(6/6 agree; 2 cells with no winner in the study's own data)" in out and "load average 9 on 2 CPUs" in out
    assert "none (uncalibrated profiles)" in out
    # 1 GB direct read on Lambda: 265.3265 s / 2,000,000 calls, auto-scaled
    assert "133 µs" in out
