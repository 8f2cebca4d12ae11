"""A burst campaign's report states the dispatch spread its bursts were measured with (issue #20):
per cell, the send spread and the arrival spread, median [min–max] over its bursts, checked against
spreads computed here straight from the results file's raw timestamps."""
from __future__ import annotations

import sqlite3
import statistics
from pathlib import Path

from faascope.analysis.concurrency import burst_stats, load_bursts
from faascope.report.sections.concurrency import burst_senders, dispatch_spread_table

DB = Path(__file__).resolve().parents[1] / "store" / "data" / "legacy-burst-v1.db"


def _ms(x: float) -> str:  # written out here, not faascope.units', so a change there shows
    return f"{x * 1e6:.3g} µs" if x < 1e-3 else (f"{x * 1e3:.3g} ms" if x < 1 else f"{x:.3g} s")


def test_dispatch_spread_table_states_each_cells_send_and_arrival_spread():
    data = load_bursts(DB)
    stats = burst_stats(data, include_split=True)
    t = dispatch_spread_table(stats, burst_senders(data.bursts))
    assert t is not None
    sec = t.section
    assert sec.headers == ["cell", "bursts", "members", "sender", "send spread", "arrival spread"]
    rows = {r[0]: r for r in sec.rows}
    con = sqlite3.connect(DB)
    # independently: the send spread from the members' client send times, the arrival spread as
    # the burst recorded it when it ran (its detail), per measured burst
    sends = con.execute("SELECT cell_key, burst, MAX(client_send_ns) - MIN(client_send_ns) FROM burst_invocations "
                        "WHERE warmup = 0 GROUP BY cell_key, burst").fetchall()
    arrivals = dict(((ck, b), a) for ck, b, a in con.execute(
        "SELECT cell_key, burst, json_extract(detail_json, '$.arrival_spread_est_s') FROM bursts WHERE kind = 'measure'"))
    by_cell: dict[str, list] = {}
    for ck, b, ns in sends:
        by_cell.setdefault(ck, []).append((ns / 1e9, arrivals[(ck, b)]))
    assert set(rows) == set(by_cell)
    for ck, vals in by_cell.items():
        s = [v[0] for v in vals]
        a = [v[1] for v in vals]
        want_send = _ms(statistics.median(s)) + (f" [{_ms(min(s))}–{_ms(max(s))}]" if len(s) > 1 else "")
        want_arr = _ms(statistics.median(a)) + (f" [{_ms(min(a))}–{_ms(max(a))}]" if len(a) > 1 else "")
        assert rows[ck][1] == str(len(vals))
        assert rows[ck][4] == want_send, ck
        assert rows[ck][5] == want_arr, ck
    worst = max(ns for _, _, ns in sends) / 1e9
    assert f"at most {_ms(worst)} to send" in sec.notes[0]


def test_no_dispatch_spread_table_without_send_times():
    data = load_bursts(DB)
    stats = burst_stats(data, include_split=True)
    stats["send_spread_s"] = None
    assert dispatch_spread_table(stats, {}) is None
