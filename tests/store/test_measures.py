"""Each workload kind's measures as columns of the flat view (schema version 3), read from
responses that the agent's response schema accepts (tests/test_schemas.py's VALID_RESPONSES):
the value each column must hold is worked out here from the response by hand."""
from __future__ import annotations

import json

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.store.reader import ResultsFile, with_measure
from faascope.store.writer import ResultsStore
from test_schemas import APP, NETWORK, OBJECT, RESPONSE, SERIES, TRANSFER, VALID_RESPONSES, _ok


def _store_with(tmp_path, responses: list[dict]):
    st = ResultsStore(tmp_path / "m.db")
    runs = [{"order": k, "cell_key": "c", "replication": k, "kind": "measure", "block": 0,
             "force_cold": False} for k in range(len(responses))]
    cid = st.create_campaign(
        uid="u", name="m", spec_json={}, spec_text="", spec_path="", spec_hash="h", seed=1,
        replications=len(responses), plan_json={}, factors=[], provider="local", version="0",
        cells=[{"key": "c", "index": 0, "levels": {}, "function": {}, "payload": {}}], runs=runs)
    for k, resp in enumerate(responses):
        RESPONSE.validate(resp)
        st.record({"campaign_id": cid, "cell_key": "c", "levels_json": "{}", "replication": k,
                   "kind": "measure", "warmup": 0, "order_index": k, "block": 0, "status": "ok",
                   "cold_forced": 0, "attempts": 1, "retries": 0,
                   "response_json": json.dumps(resp), "started_at": "2026-01-01T00:00:00Z",
                   "ended_at": "2026-01-01T00:00:01Z", "started_at_local": "2026-01-01T00:00:00"})
    st.close()
    return ResultsFile(tmp_path / "m.db")


def test_every_kind_fills_its_measures(tmp_path):
    put = {**OBJECT, "op": "put", "elapsed_s": 0.25}
    both = {**NETWORK, "direction": "both", "out": {**SERIES, "sampled_at": "sink", "bytes": 700}}
    responses = VALID_RESPONSES[:4] + [_ok(OBJECT), _ok(put), _ok(both), _ok(TRANSFER), _ok(APP)]
    with _store_with(tmp_path, responses) as rf:
        df = rf.flat().set_index("replication")
    spin, fileio_native, obj_get, obj_put, net, transfer, app = (
        df.loc[1], df.loc[2], df.loc[4], df.loc[5], df.loc[6], df.loc[7], df.loc[8])
    assert spin["compute_s"] == 0.4 and spin["cpu_s"] == 0.1 and pd.isna(spin["read_s"])
    # a fileio write: its elapsed time is write time, and its per-op histogram the percentiles
    assert fileio_native["write_s"] == 0.5 and fileio_native["io_s"] == 0.5
    assert pd.isna(fileio_native["read_s"]) and fileio_native["request_p99_s"] == 2e-4
    assert fileio_native["throughput_bytes_per_s"] == 524288.0
    # object: a get is read time, a put write time; request counts and time to first byte
    assert obj_get["read_s"] == 0.1 and pd.isna(obj_get["write_s"]) and obj_get["iops"] == 100.0
    assert obj_put["write_s"] == 0.25 and obj_put["io_s"] == 0.25
    assert obj_get["requests_ok"] == 10 and obj_get["request_throttles"] == 0
    assert obj_get["ttfb_p50_s"] == 1e-4 and obj_get["workload_op"] == "get"
    # network: both directions' bytes and rates
    assert (net["net_in_bytes"], net["net_out_bytes"]) == (300, 700)
    assert net["net_in_bytes_per_s"] == 6000.0
    # transfer: hop 0 starts at 1 ns, hop 1 ends at 8 ns, hop 0 ends at 10 ns; one transfer_s
    assert transfer["chain_length"] == 2
    assert transfer["chain_s"] == pytest.approx((10 - 1) / 1e9)
    assert transfer["transfer_s"] == pytest.approx(0.002)
    # app: its three phases as they are
    assert (app["read_s"], app["compute_s"], app["write_s"]) == (0.1, 0.1, 0.1)
    assert app["io_s"] == pytest.approx(0.2)


def test_hops_and_network_samples_one_row_each(tmp_path):
    both = {**NETWORK, "direction": "both",
            "out": {**SERIES, "sampled_at": "sink", "samples": [5, 6, 7]}}
    with _store_with(tmp_path, [_ok(TRANSFER), _ok(both)]) as rf:
        ids = rf.flat().set_index("replication")["invocation_id"]
        hops = rf.hops()
        samples = rf.network_samples()
    assert list(hops["hop"]) == [0, 1] and set(hops["invocation_id"]) == {ids[0]}
    assert list(hops["end_ns"]) == [10, 8] and hops["transfer_s"].iloc[1] == 0.002
    assert set(samples["invocation_id"]) == {ids[1]}
    got = {d: list(g["bytes"]) for d, g in samples.groupby("direction")}
    assert got == {"in": [100, 200], "out": [5, 6, 7]}
    assert (samples["interval_s"] == 0.02).all()


def test_a_measure_keeps_only_the_rows_that_have_it(tmp_path):
    """write_s of a put/get campaign exists for the puts only: analyze and report take those
    and say how many were left out (analyze used to refuse the whole input; the every-kind
    end-to-end test analyses such measures through the command line)."""
    put = {**OBJECT, "op": "put", "elapsed_s": 0.25}
    with _store_with(tmp_path, [_ok(OBJECT), _ok(put), _ok(put), _ok(OBJECT)]) as rf:
        df = rf.flat()
    kept, without = with_measure(df, "write_s")
    assert without == 2 and list(kept["write_s"]) == [0.25, 0.25]
    # a column that is not a kind's measure is not filtered here
    assert with_measure(df, "latency_seconds")[1] == 0


def test_analyze_takes_a_measure_only_some_invocations_have():
    """`faascope analyze --response write_s` on a put/get campaign (tests/report/data): exit 0 on
    the puts, and the note says how many gets were left out; it once exited 2 on the gets'
    missing values."""
    db = Path(__file__).resolve().parents[1] / "report" / "data" / "storage-object.db"
    res = CliRunner().invoke(cli, ["analyze", str(db), "--response", "write_s", "--factors",
                                   "memory", "--scenario", "object_size", "--format", "json"])
    assert res.exit_code == 0, res.output
    notes = json.loads(res.stdout)["selection"]["notes"]
    assert any("have no write_s" in n for n in notes)
