"""`faascope platform fidelity --quick --format json` end to end on the REAL local platform: its
own platform and stand-ins, campaigns through the driver into results files, and a JSON where
every metric has a local figure, a published one, its source and the ratio. The battery is
conftest.py's, run once a session with less work in each campaign than --quick (SMALLER), every
campaign and cell still run."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from faascope.fidelity import metrics
from faascope.store.reader import read_flat
from go_binaries import skip_unless_built

pytestmark = [pytest.mark.slow, skip_unless_built(),
              pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root (cgroups, namespaces)")]


def test_quick_battery_json(quick_battery):
    r, doc, tmp_path = quick_battery     # conftest.py: the battery, smaller than --quick
    assert r.exit_code == 0, r.output
    ids = [m["id"] for m in doc["metrics"]]
    assert ids == [m.id for m in metrics.battery_metrics()]
    for m in doc["metrics"]:
        assert isinstance(m["local"], float) and m["local"] > 0, m
        assert m["published"] > 0 and m["source"] and m["anchor"]
        assert m["ratio"] == pytest.approx(m["local"] / m["published"])
        assert m["within"] == (1 / 1.5 <= m["ratio"] <= 1.5)
        assert m["held_out"] is (not m["fit"])
        assert m["within"] or m["why"], m        # a miss always says why
    assert doc["summary"]["fit"]["total"] > 0 and doc["summary"]["held_out"]["total"] > 0
    assert len(doc["decisions"]) == 8
    assert all(d["local_winner"] in ("lambda", "gcf", "none") for d in doc["decisions"])
    # a quick battery's one block gives no local interval: a no-winner cell is then not judged
    s = doc["summary"]["decisions"]
    assert s["total"] == sum(d["agree"] is not None for d in doc["decisions"])
    assert s["no_winner_in_the_study"] == 2
    # the figures came from the product's own measurement path: results files of campaigns
    for name, path in doc["results"].items():
        assert Path(path).is_relative_to(tmp_path)
        assert len(read_flat(path)) > 0, name
    # the findings: every one of the table decided (true or false), a miss says why, each part
    # with its sample sizes; the distributions with their quantiles and sources
    from faascope.fidelity.findings import FINDINGS
    assert [f["id"] for f in doc["findings"]] == [f.id for f in FINDINGS]
    for f in doc["findings"]:
        assert isinstance(f["reproduced"], bool) and f["citation"]
        assert f["reproduced"] or f["why"], f
        assert all(p["n_a"] is not None for p in f["parts"])
    assert doc["summary"]["findings"]["total"] == len(FINDINGS)
    refs = {d["reference"] for d in doc["distributions"]}
    assert "lambda-perf-init:go_provided_al2023_128" in refs
    init = next(d for d in doc["distributions"] if d["reference"].startswith("lambda-perf"))
    assert init["ks_statistic"] is not None and init["local_n"] >= 5
    # the storage stand-ins' rows have a distance too: from the agent's raw request latencies
    storage = [d for d in doc["distributions"] if d["reference"].startswith("skyrise")]
    assert len(storage) == 4 and all(d["ks_statistic"] is not None and d["local_n"] >= 100
                                     and d["local_invocations"] >= 5 for d in storage), storage
    # what the hypervisor took from this machine's CPUs, per campaign (faascope.hoststat): every
    # campaign that ran, battery's and findings', measured
    steal = doc["machine"]["cpu_steal"]
    assert set(doc["results"]) <= set(steal), (steal, doc["results"])
    assert all(v is None or 0 <= v <= 1 for v in steal.values())
    # the battery's platform is gone
    assert not (Path(doc["workdir"]) / "platform" / "platform.json").exists()
