"""`build_report()`: input -> data -> scenarios (with the engine's analyses) -> sections ->
report.html, figures/, summary.md."""
from __future__ import annotations

import datetime as _dt
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from faascope import __version__
from faascope.errors import BadInput, Failure
from faascope.report.costs import check_price_map, price_scenarios
from faascope.analysis.dataset import load_dataset
from faascope.report.figures import Fig, start_saving
from faascope.report.items import Block, Text
from faascope.report.page import page
from faascope.report.scenarios import build_scenarios
from faascope.report.sections import SECTIONS, Ctx
from faascope.report.summary import summary
from faascope.store.spreadsheet import to_csv

FORMATS = ("png", "pdf", "svg")


@dataclass
class ReportResult:
    out: Path
    html: Path
    summary: Path
    figures: list[Fig]
    scenarios: int
    rows: int
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def files(self) -> list[Path]:
        return [self.out / "figures" / n for f in self.figures for n in f.files]


def _unique_names(figs: list[Fig]) -> None:
    seen: dict[str, int] = {}
    for f in figs:
        k = seen.get(f.name, 0)
        seen[f.name] = k + 1
        if k:
            f.name = f"{f.name}_{k + 1}"


def _clean_old_figures(fig_dir: Path, out: Path) -> None:
    """Remove figures of an earlier report in the same --out (only if that was a faascope report)."""
    if not (out / "report.html").exists() or not fig_dir.is_dir():
        return
    for p in fig_dir.iterdir():
        if p.suffix.lower().lstrip(".") in FORMATS and p.is_file():
            p.unlink()


def build_report(input_path: str | Path | list, out: str | Path, *, response: str | None = None,
                 factors: list[str] | None = None, scenario: list[str] | None = None,
                 mapping: dict[str, str] | None = None, filters: list[str] | tuple[str, ...] = (),
                 latest: int | None = None, log_x: bool | None = None, alpha: float = 0.05,
                 formats: tuple[str, ...] = ("png", "pdf"), time_col: str | None = None, jobs: int = 1,
                 n_boot: int = 2000, seed: int = 0, tz: str | None = None, figures: str = "all",
                 higher_is_better: bool | None = None,
                 progress: Callable[[str], None] | None = None, price_map=None) -> ReportResult:
    """Build report.html, summary.md and figures/ for `input_path` under `out`.

    figures: "all" draws every figure in `formats` (the publication figures); "key" only the few
    summary.md shows as images (Fig.key: the cost-vs-latency charts), the others being in
    report.html. progress: called with the name of each step as it starts. price_map: how a foreign
    table's columns give platform, memory and duration (faascope.cost.mapping.PriceMapping)."""
    say = progress or (lambda _step: None)
    if figures not in ("all", "key"):
        raise BadInput(f"unknown figure set {figures!r}; use all or key", field="--figures")
    if not (0 < alpha < 1):
        raise BadInput(f"alpha must be between 0 and 1, got {alpha}", field="--alpha")
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise BadInput(f"unknown figure format {bad[0]!r}; use {', '.join(FORMATS)} or none", field="--formats")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BadInput(f"{out} exists and is not a directory", field="--out")
    secs: dict[str, float] = {}
    t = time.perf_counter()
    say("loading the data")
    data = load_dataset(input_path, response=response, factors=factors, scenario=scenario, mapping=mapping,
                        filters=filters, latest=latest, time_col=time_col, tz=tz,
                        higher_is_better=higher_is_better)
    check_price_map(data, price_map)   # a bad mapping exits before the analysis, not after it
    secs["load"] = time.perf_counter() - t
    t = time.perf_counter()
    say(f"analysing {data.counts['analysed']:,} rows")
    scenarios = build_scenarios(data, alpha=alpha, n_boot=n_boot, seed=seed)
    secs["analysis"] = time.perf_counter() - t

    t = time.perf_counter()
    say("pricing the cells")
    basis, why = price_scenarios(data, scenarios, alpha, price_map)
    secs["cost"] = time.perf_counter() - t

    t = time.perf_counter()
    say("building the sections and interactive figures")
    ctx = Ctx(data, scenarios, alpha=alpha, log_x=log_x, extra={"cost_basis": basis, "cost_why": why})
    report_blocks = [b for s in SECTIONS if s.scope == "report" for b in [s.build(ctx)] if b is not None]
    scenario_blocks = []
    for sc in scenarios:
        blocks = [b for s in SECTIONS if s.scope == "scenario" for b in [s.build(ctx, sc)] if b is not None]
        meta = f"{len(sc.rows):,} invocations in {len(sc.cells)} cell(s)"
        if sc.factors:
            meta += f"; factors {', '.join(f'`{f}`' for f in sc.factors)}"
        if sc.dropped:
            meta += "; single level here: " + ", ".join(f"{f} = {data.info[f].label(v)}" for f, v in sc.dropped.items())
        meta += "."
        if sc.error:
            blocks.insert(0, Block("not-analysed", "Not analysed", [Text(
                f"The statistics engine could not analyse this scenario: {sc.error}. The figures below are descriptive "
                "only.", "warn")], level=3))
        head = f"Scenario {sc.index + 1}: {sc.title(data)}" if data.scenario_cols else "All data"
        scenario_blocks.append((f"scenario-{sc.index + 1}", head, meta, blocks))
    secs["sections"] = time.perf_counter() - t

    figs = [i for b in report_blocks for i in b.figures]
    figs += [i for _, _, _, bl in scenario_blocks for b in bl for i in b.figures]
    _unique_names(figs)
    fig_dir = out / "figures"
    try:
        out.mkdir(parents=True, exist_ok=True)
        _clean_old_figures(fig_dir, out)
        if formats and (figures == "all" or any(f.key for f in figs)):
            fig_dir.mkdir(exist_ok=True)
        if data.origin.kind == "inputs":  # the stacked table analysed, kept beside the report
            to_csv(data.all_rows, out / "inputs.csv")
    except OSError as exc:
        raise Failure(f"cannot create {out}: {exc}") from None

    # the publication figures are drawn in worker processes while this one renders the
    # interactive figures (both are CPU-bound; the machine's cores share the work)
    t = time.perf_counter()
    drawn = figs if figures == "all" else [f for f in figs if f.key]
    if formats and drawn:
        say(f"drawing {len(drawn)} publication figure(s) ({', '.join(formats)}) and {len(figs)} interactive ones")
    finish = start_saving(drawn, fig_dir, tuple(formats), jobs=jobs)
    try:
        for f in figs:
            f.plotly  # noqa: B018 - rendered here, in parallel with the drawing
        secs["figures (plotly)"] = time.perf_counter() - t
    finally:
        finish()
    secs["figures (matplotlib, in parallel)"] = time.perf_counter() - t

    t = time.perf_counter()
    say("writing report.html and summary.md")
    src = data.source
    name = src.name
    title = f"faascope report: {name}"
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    # a measure other than the default says what it is (the default is the documented elapsed_s)
    meaning = data.measure.meaning if data.response != "latency_seconds" else None
    what = {"store": f"Results store `{src.path.name}`" if src.path else "Results store",
            "table": f"Table `{src.path.name}`" if src.path else "Table",
            "inputs": f"Inputs {', '.join(f'`{n}`' for n in src.inputs)}"}.get(src.kind, "Data")
    compared = f"compared factor `{data.compare}`" if data.compare else "no factor (described)"
    subtitle = (f"{what}; response `{data.response}`{f' ({meaning})' if meaning else ''}, "
                f"{data.measure.direction_text}; {compared}; {data.counts['analysed']:,} rows analysed. "
                f"Generated {now} by faascope {__version__}.")
    html_path = out / "report.html"
    md_path = out / "summary.md"
    try:
        tmp = html_path.with_name(".report.html.tmp")
        tmp.write_text(page(title, subtitle, report_blocks, scenario_blocks), encoding="utf-8")
        tmp.replace(html_path)
        tmp = md_path.with_name(".summary.md.tmp")
        tmp.write_text(summary(title, subtitle, report_blocks, scenario_blocks), encoding="utf-8")
        tmp.replace(md_path)
    except OSError as exc:
        raise Failure(f"cannot write the report to {out}: {exc}") from None
    secs["write"] = time.perf_counter() - t
    return ReportResult(out, html_path, md_path, figs, len(scenarios), data.counts["analysed"], secs)


def default_jobs() -> int:
    n = os.cpu_count() or 1
    return max(1, min(4, n))
