"""The fidelity battery, run once for the tests that read what it measured
(test_fidelity_e2e.py: the JSON report; test_fidelity_raw_samples.py: the raw request
latencies in its storage campaigns' results files)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from faascope.fidelity import battery, findings_battery
from faascope.units import MIB

#: what the tests' battery runs smaller than --quick (module, name, its quick value here): every
#: campaign, cell and replication of --quick still runs (5 units a finding's cell, the bootstrap
#: interval's minimum; the CV test's 90 values), with less work in each: the tests check that
#: every figure, decision, finding and distribution is measured, read and reported, not what
#: they come to (the statistics are tested on known data beside them). 384 s -> 207 s on this
#: 2-core machine under load (2026-11-27), with the agent's parallel prepare and drop.
SMALLER = (
    # 20 requests a storage invocation, not 100: 5 invocations still pool the 100 raw latencies
    # the storage distributions are asserted to have
    (battery, "REQUESTS", 20),
    # the files of the 1 GB thesis write cells (128 MiB), the findings' /tmp cells' (1 MiB), the
    # co-location writers' (24 MiB), the memory, concurrency and staggering campaigns' (4 MiB)
    # and the larger image (100 MiB)
    (battery, "SCALED_FILE", {"read": 8 * MIB, "write": 32 * MIB}),
    (findings_battery, "TMP_FILE", 256 * 1024),
    (findings_battery, "COLOC_FILE", 6 * MIB),
    (findings_battery, "IO_FILE", 1 * MIB),
    (findings_battery, "IMAGE_SIZES", ("12MiB", "32MiB")),
    # Roy et al.'s campaign: 5 bursts a cell as the other findings, not 10 (neither decides it)
    (findings_battery, "ROY_UNITS", 5),
)


def _smaller(mp: pytest.MonkeyPatch) -> None:
    for module, name, quick in SMALLER:
        value = getattr(module, name)
        if isinstance(value, dict):
            value = {k: (quick[k], v[1]) for k, v in value.items()}
        elif isinstance(value, tuple) and len(value) == 2 and not isinstance(quick, tuple):
            value = (quick, value[1])        # (quick, full): the full value stays
        else:
            value = quick
        mp.setattr(module, name, value)


@pytest.fixture(scope="session")
def quick_battery(tmp_path_factory):
    """`faascope platform fidelity --quick --format json` on the REAL local platform, once a
    session, smaller (SMALLER): (the command's result, its JSON or None, its data directory)."""
    from faascope.cli import cli

    data = tmp_path_factory.mktemp("fidelity")
    with pytest.MonkeyPatch.context() as mp:
        _smaller(mp)
        r = CliRunner().invoke(cli, ["platform", "fidelity", "--quick", "--format", "json",
                                     "--data-dir", str(data)])
    doc = json.loads(r.stdout) if r.exit_code == 0 else None
    return r, doc, Path(data)
