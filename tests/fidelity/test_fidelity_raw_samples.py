"""Raw per-request latencies for the storage stand-ins' whole distributions (issue #26): the
agent keeps a bounded systematic sample of each object/kv invocation's requests
(``latency_samples``), the results file keeps them in the response, and fidelity's distribution
rows for S3 and DynamoDB carry a two-sample KS distance from them, not only quantiles."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import special, stats

from faascope.calibration.reference import reference
from faascope.fidelity.distributions import as_json
from faascope.fidelity.findings_battery import STORAGE_SETS, read_distributions, request_samples
from faascope.store.reader import ResultsFile
from go_binaries import skip_unless_built


def bound() -> int:
    """The agent's bound on raw latencies per invocation: its one source, the response schema."""
    doc = json.loads(resources.files("faascope.schemas").joinpath(
        "agent-response.schema.json").read_text())
    return doc["$defs"]["latencySamples"]["properties"]["values_s"]["maxItems"]


def ks_critical(n: float, m: int, alpha: float = 0.05) -> float:
    """The two-sample KS test's asymptotic critical distance (Smirnov): c(α)·sqrt((n+m)/(n·m)),
    c(α) = kolmogi(α) = 1.358 at 5 %."""
    return special.kolmogi(alpha) * np.sqrt((n + m) / (n * m) if np.isfinite(n) else 1 / m)


def test_the_bound_is_where_the_published_side_limits_the_distance():
    # against a published subset of m values, more local values stop helping once the
    # critical distance is near its n = ∞ limit: at the bound it is within 15 % of it, a
    # third of the bound would lose more than 30 % (Skyrise's subsets: 300 values)
    m = len(reference("skyrise-request-latency", "s3_standard_read").values_s)
    inf = ks_critical(np.inf, m)
    assert ks_critical(bound(), m) / inf < 1.15
    assert ks_critical(bound() / 3, m) / inf > 1.3
    # and by simulation: the power of the 5 % test to tell a published set of 300 from a local
    # distribution 8 % slower (lognormal, sigma 0.4: the spread of Skyrise's S3 latencies;
    # fresh samples both sides, 1000 trials each). Infinitely many local values is the
    # one-sample test against the slower distribution itself. At the bound the test has most
    # of the power any number of local values could give, and clearly more than at a third
    # of it (seed 26: 0.55 at a third, 0.71 at the bound, 0.82 with n = ∞)
    rng = np.random.default_rng(26)
    slower = stats.lognorm(0.4, scale=1.08)

    def power(n: int) -> float:
        return np.mean([stats.ks_2samp(slower.rvs(n, random_state=rng),
                                       rng.lognormal(0, 0.4, m)).pvalue < 0.05
                        for _ in range(1000)])
    p_inf = np.mean([stats.kstest(rng.lognormal(0, 0.4, m), slower.cdf).pvalue < 0.05
                     for _ in range(1000)])
    p_third, p_bound = power(bound() // 3), power(bound())
    print(f"power: n={bound() // 3}: {p_third}, n={bound()}: {p_bound}, n=inf: {p_inf}")
    assert p_bound - p_third > 0.08 and p_bound > 0.8 * p_inf, (p_third, p_bound, p_inf)


def test_the_docs_state_the_schemas_bound():
    # the docs say the number; the schema is its source: a changed bound fails here
    root = Path(__file__).resolve().parents[2] / "docs"

    def text(name: str) -> str:
        return " ".join((root / name).read_text().split())
    assert f"so at most {bound()} values" in text("storage.md")
    assert f"at most {bound()}, `latency_samples`" in text("analysis.md")
    assert f"at most {bound()} raw request latencies" in text("platform.md")


@pytest.mark.slow
@skip_unless_built()
@pytest.mark.skipif(os.geteuid() != 0, reason="sandboxes need root (cgroups, namespaces)")
def test_storage_rows_carry_a_ks_distance_from_real_local_samples(quick_battery, tmp_path):
    # the battery's own object and kv (DynamoDB) campaigns, as the fidelity command ran them
    # (conftest.py: 5 invocations a cell, 20 requests each)
    r, report, _ = quick_battery
    assert r.exit_code == 0, r.output
    results = {name: report["results"][name] for name in ("object", "kv")}
    # the spec is <name>.yaml beside the results: a campaign the hypervisor slowed ran again
    # into <name>-run2.db (battery.run_kept), from the same spec
    specs = {name: yaml.safe_load((Path(db).parent / f"{name}.yaml").read_text())
             for name, db in results.items()}
    ((count, reps),) = {(s["workload"]["count"], s["design"]["replications"]) for s in specs.values()}
    assert count < bound() and reps >= 2
    # the samples are the requests each invocation timed: all of them (count < bound), each
    # within the invocation's exact min and max, their nearest-rank median its p50
    for name in results:
        with ResultsFile(results[name]) as rf:
            flat = rf.flat(include_warmups=False).set_index("invocation_id")
        raw = request_samples(results[name])
        assert len(raw) and set(raw["invocation_id"]) == set(flat.index)
        for inv, g in raw.groupby("invocation_id"):
            row = flat.loc[inv]
            v = np.sort(g["latency_s"].to_numpy(float))
            assert len(v) == row["request_count"] == count
            assert v[-1] == pytest.approx(row["request_max_s"], rel=1e-6)
            med = v[int(np.ceil(0.5 * len(v))) - 1]
            assert med == pytest.approx(row["request_p50_s"], rel=1 / 256 + 1e-9)
    dists = {d.reference.split(":")[1]: d for d in read_distributions(results)}
    assert set(dists) == {s for _, _, s in STORAGE_SETS}
    for set_name, d in dists.items():
        doc = as_json(d)
        assert doc["local_n"] == reps * count and doc["local_invocations"] == reps
        assert 0 < doc["ks_statistic"] <= 1 and 0 <= doc["ks_pvalue"] <= 1, doc
        assert f"pooled from {reps} invocations" in doc["note"]
        # the distance is the one of these values against the committed subset
        raw = request_samples(results["object" if set_name.startswith("s3") else "kv"])
        op = "put" if set_name.endswith("write") else "get"
        local = raw[raw["op"] == op]["latency_s"].to_numpy(float)
        ref = reference("skyrise-request-latency", set_name)
        assert doc["ks_statistic"] == pytest.approx(stats.ks_2samp(local, ref.values_s).statistic)
        print(set_name, f"D={doc['ks_statistic']:.3f} p={doc['ks_pvalue']:.3g}",
              {k: v for k, v in doc["local_quantiles_s"].items()},
              {k: v for k, v in doc["published_quantiles_s"].items()})
    # a results file written before the agent kept raw latencies (the field removed from its
    # responses) falls back to quantiles, without a distance, and says why
    old = tmp_path / "old-object.db"
    shutil.copy(results["object"], old)
    with sqlite3.connect(old) as c:
        c.execute("UPDATE invocations SET response_json = "
                  "json_remove(response_json, '$.workload.latency_samples')")
    rows = read_distributions({"object": str(old)})
    assert len(rows) == 2
    for d in rows:
        assert d.ks_d is None and d.local_n == reps and "no raw request latencies" in d.note
        assert d.local["p50"] == pytest.approx(dists[d.reference.split(":")[1]].local["p50"],
                                               rel=0.5)


def test_a_battery_without_the_lambda_profile_has_no_init_distribution(monkeypatch):
    """`platform fidelity --profile gcf` crashed here with a KeyError (an empty frame indexed with
    an empty list loses its columns): the lambda profile's init distribution is left out, and
    the lambda cold samples are empty."""
    from faascope.fidelity import findings_battery
    gcf_only = pd.DataFrame({"profile": ["gcf", "gcf"], "cold": [1, 1],
                             "platform_init_ms": [30.0, 31.0], "client_latency_seconds": [0.9, 0.95]})
    monkeypatch.setattr(findings_battery, "_flat", lambda db: gcf_only)
    assert read_distributions({"cold": "cold.db"}) == []
    assert len(findings_battery.read_battery({"cold": "cold.db"})["cold"]) == 0
    both = pd.concat([gcf_only, gcf_only.assign(profile="lambda")], ignore_index=True)
    monkeypatch.setattr(findings_battery, "_flat", lambda db: both)
    (d,) = read_distributions({"cold": "cold.db"})
    assert d.local_n == 2
