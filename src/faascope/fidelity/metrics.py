"""The fidelity battery's metrics and the published figure each is compared with.

A metric names one entry of a calibration table (its value, unit and source live only there) and
what the battery measures for it locally. Published figures come from two tables:

- ``published-anchors``: the 2024 thesis's cell medians (Lambda and GCF), Skyrise's network
  burst and baseline, STeLLAR's warm and cold latencies, lambda-perf's init duration;
- ``standins-aws``: Skyrise's request latencies of S3 and DynamoDB, the figures the shaped
  stand-ins are set from (read from there, never copied).

Fit or held out: a metric is *fit* when the platform was calibrated on its very figure (the
anchors table's ``fitted_by`` says which; every entry of a table the stand-ins take their
latencies from is fit by construction), so agreement there only shows that the machinery
delivers what it was set to. Every other metric is *held out*: agreement there is a prediction.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from faascope import calibration

ANCHORS_TABLE = "published-anchors"
STANDINS_TABLE = calibration.STANDINS_TABLE
#: tables the platform takes figures from as they are (the shaped stand-ins add these
#: latencies): a comparison with them is fit by construction
CONFIGURED_FROM = (STANDINS_TABLE,)
PROFILES = ("lambda", "gcf")
#: the thesis's name for each profile's cloud
CLOUD = {"lambda": "Lambda", "gcf": "GCF"}
#: seconds per unit of a table entry (the battery works in s, B and B/s)
TO_SI = {u: calibration.TO_SI[u] for u in ("s", "ms", "B", "B/s")}


@dataclass(frozen=True)
class ThesisCell:
    """One cell of the 2024 study's main experiment: dd on /tmp, as the thesis ran it."""
    op: str          # direct_read (dd iflag=direct) or urandom_write (dd if=/dev/urandom)
    memory_mb: int   # TIER_1 = 128, TIER_5 = 2048
    file_size: int   # bytes
    io_size: int     # bytes as dd used them (bs=128k is 131,072)

    def key(self, profile: str) -> str:
        return f"thesis_{profile}_{self.op}_m{self.memory_mb}_f{self.file_size}_io{self.io_size}"

    @property
    def large(self) -> bool:
        """The 1 GB cells, which the battery runs on a smaller file (per-call time compared)."""
        return self.file_size > 10_000_000

    @property
    def workload_op(self) -> str:
        return "read" if self.op == "direct_read" else "write"

    def label(self) -> str:
        what = "direct read" if self.op == "direct_read" else "urandom write"
        return f"{what}, {self.memory_mb} MB, file {self.file_size:,} B, I/O {self.io_size:,} B"


#: the eight cells of the main experiment (examples/data/thesis-2024): a 1 GB file only at
#: 2048 MB, a 10 KB file only with 512 B I/O
THESIS_CELLS = tuple(
    ThesisCell(op, mem, f, io)
    for op in ("direct_read", "urandom_write")
    for mem, f, io in ((128, 10_000, 512), (2048, 10_000, 512), (2048, 1_024_000_000, 512),
                       (2048, 1_024_000_000, 131_072)))


@dataclass(frozen=True)
class Metric:
    id: str
    profile: str
    group: str                      # /tmp, network, storage, cold start
    label: str
    unit: str                       # s, B or B/s (local and published alike)
    table: str
    key: str
    #: entry the published value is divided by (the thesis's dd I/O calls: per-call time)
    per_key: Optional[str] = None
    #: what explains a miss (compare.why)
    kind: str = ""
    cell: Optional[ThesisCell] = None


@dataclass(frozen=True)
class Published:
    value: float                    # in the metric's unit
    source: str
    anchor: str                     # table@version:key
    fit: bool
    fitted_by: tuple[str, ...]
    note: str


def thesis_kind(cell: ThesisCell, profile: str) -> str:
    if cell.op == "urandom_write":
        return "urandom"
    if profile == "gcf":
        return "tmp_memory"
    return "tmp_device" if cell.large else "small_file"


def battery_metrics(profiles: Iterable[str] = PROFILES) -> list[Metric]:
    """Every metric of the battery for the given profiles, in report order."""
    out: list[Metric] = []
    for p in profiles:
        for c in THESIS_CELLS:
            out.append(Metric(
                id=f"{p}/tmp/{c.op}/m{c.memory_mb}/f{c.file_size}/io{c.io_size}", profile=p,
                group="/tmp", label=f"{c.label()}: time per dd I/O call", unit="s",
                table=ANCHORS_TABLE, key=c.key(p) + "_median", per_key=c.key(p) + "_ops",
                kind=thesis_kind(c, p), cell=c))
        if p == "lambda":
            for name, label, unit in (("burst_bytes", "bytes received in the burst", "B"),
                                      ("burst_rate", "rate during the burst", "B/s"),
                                      ("baseline_rate", "rate after the burst (baseline)", "B/s")):
                out.append(Metric(id=f"lambda/network/{name}", profile=p, group="network",
                                  label=f"network in: {label}", unit=unit, table=ANCHORS_TABLE,
                                  key=f"skyrise_net_{name}", kind="network"))
            for service, what in (("s3_standard", "S3"), ("dynamodb", "DynamoDB")):
                for op in ("write", "read"):
                    for stat, name in (("median", "median"), ("p99", "p99")):
                        out.append(Metric(
                            id=f"lambda/storage/{service}/{op}/{stat}", profile=p,
                            group="storage", label=f"{what} 1 KiB {op}: {name} request latency",
                            unit="s", table=STANDINS_TABLE, key=f"{service}_{op}_{stat}",
                            kind="storage"))
            out.append(Metric(id="lambda/cold/latency", profile=p, group="cold start",
                              label="cold invocation latency, 128 MB noop (client)", unit="s",
                              table=ANCHORS_TABLE, key="stellar_cold_median_aws", kind="cold"))
            out.append(Metric(id="lambda/cold/init", profile=p, group="cold start",
                              label="runtime init (Init Duration), 128 MB Go custom runtime",
                              unit="s", table=ANCHORS_TABLE, key="lambda_perf_init_go_al2023",
                              kind="init"))
            out.append(Metric(id="lambda/warm/latency", profile=p, group="cold start",
                              label="warm invocation latency, 128 MB noop (client)", unit="s",
                              table=ANCHORS_TABLE, key="stellar_warm_median", kind="warm"))
        else:
            out.append(Metric(id="gcf/cold/latency", profile=p, group="cold start",
                              label="cold invocation latency, 128 MB noop (client)", unit="s",
                              table=ANCHORS_TABLE, key="stellar_cold_median_google", kind="cold"))
    return out


def load_tables() -> dict[str, calibration.CalibrationTable]:
    return {name: calibration.load_table(name) for name in (ANCHORS_TABLE, STANDINS_TABLE)}


def published(metric: Metric, tables: dict[str, calibration.CalibrationTable]) -> Published:
    """The metric's published figure in its own unit, with where it comes from and whether the
    platform was fitted to it."""
    t = tables[metric.table]
    e = t[metric.key]
    if e.unit not in TO_SI:
        raise ValueError(f"{metric.table}:{metric.key} has unit {e.unit}, not one of {list(TO_SI)}")
    value = e.value * TO_SI[e.unit]
    note = e.note
    if metric.per_key:
        calls = t.value(metric.per_key)
        value /= calls
        note = f"{note}; divided by its {calls:,.0f} I/O calls"
    fitted_by = tuple(t.fit_keys().get(metric.key, ()))
    if metric.table in CONFIGURED_FROM:
        fitted_by += (f"{t.name}@{t.version} (the stand-ins are set from it)",)
    return Published(value=value, source=e.source, anchor=f"{t.name}@{t.version}:{metric.key}",
                     fit=bool(fitted_by), fitted_by=fitted_by, note=note)


def decision_cells() -> list[ThesisCell]:
    """The cells whose winner (Lambda or GCF) the 2024 study decided: every cell of its design,
    per file size, operation and I/O size (and memory tier)."""
    return list(THESIS_CELLS)
