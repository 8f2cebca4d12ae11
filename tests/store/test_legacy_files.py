"""Results files written by an earlier faascope stay readable, and read the same.

``tests/store/data/legacy-*-v1.db`` were written by faascope 0.1.0 (results schema version 1,
before the store got one reader and a version history) with the real local platform: a
sequential campaign (warm-ups, half its invocations timed out) and a burst campaign (warm and
cold bursts, warm pools). The specs that made them are beside them (``*.spec.yaml``), and so is
what that version's ``export``, ``analyze --format json`` and ``report`` printed from them. Every
later version must give the same export and the same analysis from the same file (every value
0.1.0 printed, unchanged; a later version may only add keys, and which ones it added is listed
here), and the report text kept beside them: a change that makes an old file unreadable, or
reads it differently, fails here.

The report summaries were regenerated once, for issue #19 (the ANOVA tables name their SS type,
the decision table states orderings with ties instead of '-', the predictability table gained
the CV ratio): presentation only, every number the same as 0.1.0's, as the analysis check shows;
and for issue #17 (the answer first, a cost section with the Pareto front): sections added, none
of 0.1.0's numbers changed. Publication figures are drawn on request now (`--formats`), as the
test asks. Issue #25 changed, on purpose, the intervals 0.1.0 printed for cells of 2-8 values
(t intervals reaching below zero, "[0, 23.8]" CV ratios): those cells now print "too few (n = …;
needs ≥ …)" instead (faascope.analysis.intervals), and the summaries were regenerated for it;
CHANGED_BY_ISSUE_25 lists the analysis values that may differ, every other value stays 0.1.0's.
Issue #25 also changed the answer's method on purpose (levels compared by Welch tests of
estimated marginal means and Games-Howell instead of Tukey's pooled error, a CV comparison
without intervals said as none rather than as ties, values in their unit with labelled levels):
the summaries were regenerated for it, and the analysis check shows 0.1.0's ANOVA, Tukey and
cell statistics unchanged. Issue #25 then made a test decide predictability (the CV test,
faascope.analysis.cv_test, which needs 90 values a cell; the predictability table gained its T
and p): the summaries were regenerated for that text only (these cells of 3-4 values are too few
for it, as they were for the CV intervals). Issue #26 added the section saying what a local
campaign's figures rest on (faascope.designs.model_basis): that section only, no line removed.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from faascope.cli import cli
from faascope.store.bucket_state import BUCKET_COLUMNS
from faascope.store.measures import MEASURES

DATA = Path(__file__).resolve().parent / "data"
LEGACY = {
    "legacy-sequential-v1": ["--factors", "memory"],
    # 0.1.0 ordered levels as R's factor() does; now a store keeps its spec's order (warm, cold)
    # unless --levels says otherwise: the order is given so the values line up
    "legacy-burst-v1": ["--factors", "burst_size,start", "--levels", "start=cold,warm"],
}


def _copy(tmp_path: Path, name: str, monkeypatch) -> Path:
    # a copy (opening a results file may add WAL side files; the committed file stays as written),
    # named relative to the working directory as the reports were made
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(DATA / f"{name}.db", tmp_path / f"{name}.db")
    return Path(f"{name}.db")


def _ok(args: list[str]):
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_results_file_exports_the_same_rows(tmp_path, name, monkeypatch):
    """Every column that version exported reads the same, in the same order; columns added
    since (schema version 3: each kind's measures, MEASURES; version 4: the deployment columns;
    version 7: the network buckets, empty since 0.1.0 recorded none) come after them, and are
    filled from the old file's responses too."""
    db = _copy(tmp_path, name, monkeypatch)
    out = tmp_path / "out.csv"
    _ok(["export", str(db), "--format", "csv", "--out", str(out)])
    now = pd.read_csv(out, dtype=str, keep_default_na=False)
    then = pd.read_csv(DATA / f"{name}.export.csv", dtype=str, keep_default_na=False)
    assert list(now.columns[:len(then.columns)]) == list(then.columns)
    pd.testing.assert_frame_equal(now[then.columns], then)
    assert list(now.columns[len(then.columns):]) == [m.name for m in MEASURES] + [
        "deployment", "provider_kind", "region", "price_platform", "platform_front_end_ms"] + BUCKET_COLUMNS + ["instance_cpu_quota", "instance_num_cpu"]
    # a file from before the platform reported its buckets has none
    assert (now[BUCKET_COLUMNS] == "").all().all()
    # a file from before deployments ran on its campaign's provider
    assert set(now["deployment"]) == set(now["provider_kind"]) == {"local"}
    kinds = set(now["workload_kind"]) - {""}
    if kinds == {"spin"}:  # spin's compute time is its elapsed time, in the new column
        ok = now["ok"] == "1"
        assert (now.loc[ok, "compute_s"] == now.loc[ok, "latency_seconds"]).all()


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_results_file_analyses_the_same(tmp_path, name, monkeypatch):
    db = _copy(tmp_path, name, monkeypatch)
    res = _ok(["analyze", str(db), "--response", "latency_seconds", *LEGACY[name],
               "--format", "json"])
    now, then = json.loads(res.stdout), json.loads((DATA / f"{name}.analyze.json").read_text())
    changed = {re.sub(r"\[\d+\]", "[i]", p) for p in _changed(then, now)}
    assert changed <= CHANGED_BY_ISSUE_25, changed - CHANGED_BY_ISSUE_25
    for c in now["cells"]:  # what changed: no interval where a cell has too few values for one
        assert c["mean_ci"] is None and c["mean_ci_why"].startswith(f"too few (n = {c['n']};")
    assert sorted(_added(then, now)) == sorted(ADDED_SINCE_0_1_0)


#: keys `analyze --format json` gained after 0.1.0, each on purpose (issue #19)
ADDED_SINCE_0_1_0 = [".anova_statement", ".fit_status", ".diagnostics.normality.skipped",
                     ".diagnostics.equal_variance.skipped", ".robust.art_skipped",
                     ".predictability.criterion", ".predictability.ratio_threshold",
                     # issue #25: how the replications were chosen (null for fixed ones), and
                     # the response's unit and direction (the measures table)
                     ".adaptive", ".measure"]


#: values issue #25 changed on purpose: intervals of cells too small for them (now null with a
#: `…_why`), what follows from them (a CV comparison without an interval is not meaningful; the
#: replications a target needs are at least those the interval needs) and the notes saying so
CHANGED_BY_ISSUE_25 = {".cells[i].mean_ci", ".cells[i].cv_ci", ".cells[i].cv_ci_method", ".cells[i].n_for_target",
                       ".decisions[i].cv_diff_ci_pp", ".predictability.factors[i].comparisons[i].cv_diff_ci_pp",
                       ".predictability.factors[i].comparisons[i].ci_excludes_zero",
                       ".predictability.factors[i].comparisons[i].meaningful", ".notes[i]", ".warnings[i]",
                       # one path to the answer (item 11): the notes of the one selection, which
                       # count warm-ups and failed invocations apart, as the report's overview does
                       ".selection.notes", ".selection.notes[i]"}


def _changed(then, now, path=""):
    """Where a value 0.1.0 printed differs now (floats to 1e-9 relative)."""
    if isinstance(then, dict):
        if not isinstance(now, dict):
            return [path]
        return [d for k in then for d in (_changed(then[k], now[k], f"{path}.{k}") if k in now else [f"{path}.{k}"])]
    if isinstance(then, list):
        if not isinstance(now, list) or len(now) != len(then):
            return [path]
        return [d for i, (a, b) in enumerate(zip(then, now)) for d in _changed(a, b, f"{path}[{i}]")]
    if isinstance(then, float) and isinstance(now, (int, float)):
        return [] if now == pytest.approx(then, rel=1e-9, abs=1e-12) else [path]
    return [] if then == now else [path]


def _added(then, now, path=""):
    """Keys present now that 0.1.0 did not print."""
    if not (isinstance(then, dict) and isinstance(now, dict)):
        return []
    return [d for k in now for d in ([f"{path}.{k}"] if k not in then else _added(then[k], now[k], f"{path}.{k}"))]


def _without_generated_time(text: str) -> str:
    return re.sub(r"Generated [0-9-]+ [0-9:]+ UTC", "Generated (time)", text)


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_results_file_reports_the_same(tmp_path, name, monkeypatch):
    db = _copy(tmp_path, name, monkeypatch)
    out = tmp_path / "report"
    # every publication figure, as 0.1.0 drew them by default
    _ok(["report", str(db), "--out", str(out), "--formats", "png,pdf"])
    summary = _without_generated_time((out / "summary.md").read_text())
    assert summary == (DATA / f"{name}.report-summary.md").read_text()
    figures = sorted(p.name for p in (out / "figures").iterdir())
    assert figures == (DATA / f"{name}.report-figures.txt").read_text().split()
