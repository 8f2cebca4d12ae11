"""Properties that must hold for any data (hypothesis)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faascope.analysis.anova import fit_anova
from faascope.analysis.design import build_design
from faascope.analysis.io import prepare


@st.composite
def designs(draw, balanced=True):
    la = draw(st.integers(2, 3))
    lb = draw(st.integers(2, 4))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    rows = []
    reps = draw(st.integers(2, 6))
    for i in range(la):
        for j in range(lb):
            k = reps if balanced else int(rng.integers(2, 8))
            for v in rng.lognormal(0.3 * i - 0.2 * j, 0.6, k):
                rows.append((f"a{i}", str(10 ** j), v))
    return pd.DataFrame(rows, columns=["A", "B", "y"])


def rows(df, ss_type="II", model="full", y="y"):
    data, lv = prepare(df, y, ["A", "B"])
    return {r["source"]: r for r in fit_anova(build_design(data, y, ["A", "B"], lv), model, ss_type).rows}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(designs(balanced=True), st.sampled_from(["full", "additive"]))
def test_balanced_types_agree_and_pct_sums_to_100(df, model):
    r1, r2, r3 = (rows(df, t, model) for t in ("I", "II", "III"))
    for src in r1:
        assert math.isclose(r1[src]["sum_sq"], r2[src]["sum_sq"], rel_tol=1e-8, abs_tol=1e-10)
        assert math.isclose(r1[src]["sum_sq"], r3[src]["sum_sq"], rel_tol=1e-8, abs_tol=1e-10)
    assert math.isclose(sum(r["pct_variation"] for r in r1.values()), 100.0, rel_tol=1e-9)


@settings(max_examples=30, deadline=None)
@given(designs(balanced=False), st.integers(0, 1000))
def test_invariances(df, seed):
    base = rows(df)
    shuffled = rows(df.sample(frac=1.0, random_state=seed).reset_index(drop=True))
    shifted = rows(df.assign(y=df["y"] + 1000.0))
    scaled = rows(df.assign(y=df["y"] * 3.0))
    for src, r in base.items():
        assert math.isclose(r["sum_sq"], shuffled[src]["sum_sq"], rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(r["sum_sq"], shifted[src]["sum_sq"], rel_tol=1e-6, abs_tol=1e-9)
        assert math.isclose(9 * r["sum_sq"], scaled[src]["sum_sq"], rel_tol=1e-9, abs_tol=1e-12)
        if "F" in r:
            assert math.isclose(r["F"], scaled[src]["F"], rel_tol=1e-8)
