"""The report's sections: a short, ordered registry, one module per section.

Each entry names a section and the function that builds it from the data. ``scope="report"``
sections run once (overview, decision table, bursts); ``scope="scenario"`` sections run once per
scenario. A builder returns a `Block` (heading + text, tables and figures) or None when it has
nothing to say for this input (e.g. no cold-start column). A later capability adds its figures
by writing one module with one builder and adding one line to `SECTIONS` (see docs/report.md), e.g.:

    SectionDef("bandwidth", "Bandwidth over time", "scenario", bandwidth_section,
               "bytes/s per time bin, per cell; needs the bytes column")

Every builder receives a `Ctx` (context.py); helpers shared by several sections are in
helpers.py. A figure is a `Fig` whose content is a `Plot` (report/plot/model.py), described once
and drawn by both back ends (plotly for report.html, matplotlib for figures/). Where a plot of every row would be unreadable or heavy (large inputs), the builder
summarises and says so in the figure's `note`; the thresholds are module constants of the
section that applies them (e.g. `distributions.ECDF_EXACT_MAX`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from faascope.report.sections.anova import anova_section
from faascope.report.sections.centre import centre_section
from faascope.report.sections.coldwarm import coldwarm_section
from faascope.report.sections.cost import cost_section
from faascope.report.sections.concurrency import concurrency_section
from faascope.report.sections.context import Ctx
from faascope.report.sections.decisions import decisions_section
from faascope.report.sections.distributions import distributions_section
from faascope.report.sections.headline import headline_section
from faascope.report.sections.host_capacity import host_capacity_section
from faascope.report.sections.model_basis import model_basis_section
from faascope.report.sections.network import network_section
from faascope.report.sections.over_time import time_section
from faascope.report.sections.overview import overview_section
from faascope.report.sections.phases import phases_section
from faascope.report.sections.predictability import predictability_section
from faascope.report.sections.scenario_decision import scenario_decision_section
from faascope.report.sections.storage_requests import storage_section
from faascope.report.sections.transfers import transfers_section
from faascope.report.sections.tukey import tukey_section

__all__ = ["SECTIONS", "Ctx", "SectionDef"]


@dataclass(frozen=True)
class SectionDef:
    key: str
    title: str
    scope: str                      # "report" or "scenario"
    build: Callable                 # (ctx) -> Block | None, or (ctx, scenario) -> Block | None
    about: str = ""


SECTIONS: list[SectionDef] = [
    SectionDef("answer", "Answer", "report", headline_section,
               "per scenario: the fastest, most predictable and cheapest level of the compared factor, ties as "
               "ties, with the Tukey / CV evidence and links to it (first on the page)"),
    SectionDef("overview", "Overview", "report", overview_section,
               "campaign (spec, design, excluded cells, counts, errors, retries, duration, machine, versions) "
               "or, for a foreign table, what is known about it"),
    SectionDef("decisions", "Decision table", "report", decisions_section,
               "best level of the compared factor for performance and for predictability, per scenario"),
    SectionDef("cost", "Cost", "report", cost_section,
               "per cell: $ per million invocations with a CI (compute, requests, ephemeral, storage), billed vs "
               "timed duration, cost vs mean and p99 latency with the Pareto front, break-even figures"),
    SectionDef("concurrency", "Bursts and staggering", "report", concurrency_section,
               "per-burst wait/run/service percentiles, co-residency, wait/run/service and bandwidth against "
               "burst size, staggering heatmaps with significance (burst campaigns only)"),
    SectionDef("host_capacity", "Host capacity", "report", host_capacity_section,
               "local campaigns: what the host delivered per stand-in and device (a probe at the start), and "
               "the cells whose aggregate demand reached half of it (host-bound)"),
    SectionDef("model_basis", "What the local figures rest on", "report", model_basis_section,
               "local campaigns: per cell the calibration entries that bound it with their role (published, fit, "
               "assumed) and what no entry models; a warning, also under the answer, where a cell rests on an "
               "assumed figure"),
    SectionDef("network", "Network", "report", network_section,
               "throughput over time per cell with the fitted token bucket (network workloads)"),
    SectionDef("transfers", "Transfers", "report", transfers_section,
               "timeline of each cell's median chain, hop by hop; chain_s and transfer_s with CIs (transfer)"),
    SectionDef("phases", "Application phases", "report", phases_section,
               "read / compute / write stacked per cell, means with CIs (app-shaped workloads)"),
    SectionDef("storage", "Storage requests", "report", storage_section,
               "per-request latency percentiles, throughput, IOPS, retries and throttles per cell (object, kv)"),
    SectionDef("distributions", "Distributions", "scenario", distributions_section,
               "ECDF per cell (log-x option) and histograms"),
    SectionDef("centre", "Mean and median", "scenario", centre_section,
               "mean and median with CIs per cell, and the per-cell statistics table"),
    SectionDef("predictability", "Predictability", "scenario", predictability_section,
               "CV per cell with CIs and the CV comparisons per factor"),
    SectionDef("anova", "ANOVA", "scenario", anova_section,
               "share of variation per factor/interaction, ANOVA table, robustness checks"),
    SectionDef("tukey", "Tukey HSD", "scenario", tukey_section, "pairwise differences with family-wise intervals"),
    SectionDef("decision", "Decision", "scenario", scenario_decision_section,
               "this scenario's rows of the decision table"),
    SectionDef("coldwarm", "Cold vs warm", "scenario", coldwarm_section,
               "latency of cold and warm starts per cell (needs a `cold` column)"),
    SectionDef("time", "Over time", "scenario", time_section,
               "latency over the campaign, by hour of day, and drift (needs a timestamp column)"),
]
