"""STeLLAR's image-size finding as the lambda profile's tables model it.

Ustiugov et al. (STeLLAR, IISWC 2021) measured AWS Lambda's cold-start median growing x3.5 when
a function's image grows from 10 MB to 100 MB. The lambda profile models a cold start as the
request path (STeLLAR's warm median) + the fixed provider part (cold_start_fixed) + the runtime's
init (lambda-perf's Go init) + the package's fetch (zipped bytes / cold_start_fetch_rate); the
fixed part and the rate are fitted jointly to STeLLAR's ratio and its 448 ms cold median (of a
baseline package taken as faascope's own agent zip, ~4 MB). The arithmetic, read from the tables
the platform itself reads, must give both: a change to any of those entries (a new warm front
end, another init figure) fails here until the two are refitted. The platform delivering that
arithmetic is measured in tests/localplatform/test_image_size_cold.py.

Before this fit: 380.6 ms fixed and 150 MB/s, x2.2 (issue #26).
"""
from __future__ import annotations

import pytest

from faascope import calibration

#: the published finding (STeLLAR, IISWC 2021, AWS): image sizes (MB = 10^6 B) and the ratio
STELLAR_SMALL, STELLAR_LARGE, STELLAR_RATIO = 10_000_000, 100_000_000, 3.5
#: how close the fit must be: the rate is rounded to whole B/s, nothing else is approximate
FIT_TOLERANCE = 0.01


def modelled_cold_ms(package_bytes: int, profile: str = "lambda") -> float:
    """The modelled end-to-end cold median of a package of ``package_bytes`` zipped, in ms."""
    table = calibration.load_table(f"platform-{profile}")
    anchors = calibration.load_table("published-anchors")
    warm = anchors.value("stellar_warm_median")             # ms, the request path
    init = anchors.value("lambda_perf_init_go_al2023")      # ms, the runtime's own init
    fixed = table.value("cold_start_fixed")                 # ms
    rate = table.value("cold_start_fetch_rate")             # B/s
    assert table["cold_start_fixed"].unit == "ms" and table["cold_start_fetch_rate"].unit == "B/s"
    return warm + fixed + init + package_bytes / rate * 1000.0


def test_lambda_cold_start_grows_as_stellar_measured_with_image_size():
    ratio = modelled_cold_ms(STELLAR_LARGE) / modelled_cold_ms(STELLAR_SMALL)
    assert ratio == pytest.approx(STELLAR_RATIO, abs=FIT_TOLERANCE), ratio


@pytest.mark.parametrize("profile,anchor", [("lambda", "stellar_cold_median_aws"),
                                            ("gcf", "stellar_cold_median_google")])
def test_faascopes_own_package_gets_stellars_cold_median(profile, anchor, tmp_path):
    """The other figure of the joint fit: STeLLAR's baseline (a Go function of a few MB, size not
    published) is taken as faascope's own agent zip, so a cold start with the agent's package is
    modelled at STeLLAR's cold median. Checked with the zip as built now, within 2 %: the agent
    growing by more than ~1 MB zipped (15 ms of fetch) calls for a refit."""
    from faascope.providers.packaging import build_zip

    try:
        agent_zip = build_zip(tmp_path / "agent.zip").stat().st_size
    except Exception as e:  # noqa: BLE001 - no agent built here: nothing to size
        pytest.skip(f"no agent binary: {e}")
    anchors = calibration.load_table("published-anchors")
    assert modelled_cold_ms(agent_zip, profile) == pytest.approx(anchors.value(anchor), rel=0.02)


def test_the_old_rate_gave_the_ratio_the_issue_reported():
    """The defect, kept as arithmetic: 150 MB/s on top of 448 ms is x2.2, not x3.5."""
    c = 448.0
    old = (c + STELLAR_LARGE / 150e6 * 1000) / (c + STELLAR_SMALL / 150e6 * 1000)
    assert old == pytest.approx(2.2, abs=0.05) and abs(old - STELLAR_RATIO) > 1


def test_gcf_assumes_the_lambda_fit():
    """No Google figure is published: gcf's rate is lambda's fit, assumed (one value, two tables)."""
    lam, gcf = calibration.load_table("platform-lambda"), calibration.load_table("platform-gcf")
    assert gcf.value("cold_start_fetch_rate") == lam.value("cold_start_fetch_rate")
    assert lam["cold_start_fetch_rate"].role == "fit" and gcf["cold_start_fetch_rate"].role == "assumed"
