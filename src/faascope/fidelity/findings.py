"""The seed studies' headline findings as directional checks (``faascope platform fidelity``,
``findings[]``): one table (:data:`FINDINGS`, the one source of each finding's words, study,
primary citation and rule) and the statistical rule that decides "reproduced".

A finding has one or more *parts*; each part compares two local samples ``a`` and ``b`` (or one
sample with a published band) through a statistic, and the finding is reproduced when every part
is. Never a point estimate alone:

- ``lower`` / ``higher``: the ratio of the medians of ``a`` over
  ``b`` with a 95 % bootstrap percentile interval (each sample resampled on its own, 2,000
  resamples, seeded: scipy.stats.bootstrap, as ``faascope compare``'s median interval); the part
  holds when the whole interval is below 1 (``lower``) or above 1 (``higher``), i.e. the
  interval excludes the opposite direction and no change;
- ``band``: the same interval lies inside the published band (the published ratio or value
  ×/÷ :data:`~faascope.fidelity.compare.WITHIN`, the fidelity bar); with ``b`` absent the
  statistic of ``a`` itself (its median's interval) is compared with the band;
- ``flat``: the interval lies inside [1/WITHIN, WITHIN] ("stays flat": no change beyond the
  fidelity bar, shown, not merely not rejected);
- ``cv_lower``: the CV of ``a`` is lower than that of ``b`` by the studentized permutation test
  of the CV ratio (:mod:`faascope.analysis.cv_test`, p < 0.05 and in that direction).
- ``spread_higher``: ``a`` is more spread out than ``b`` by the Brown-Forsythe test (Levene's
  test about each sample's median: scipy.stats.levene(center="median"), as R's car::leveneTest
  and the analysis's equal-variance check), p < 0.05 with ``a``'s mean absolute deviation from
  its median the larger, i.e. one-sided at 2.5 % as ``higher`` is; the estimate is the ratio of
  those mean absolute deviations. Not a bootstrap interval of the ratio of standard deviations,
  which this rule used before: on skewed samples (exponential, 30 against 20 values, equal
  spreads) that interval excluded 1 in 9.3 % of samples instead of 2.5 %, where Brown-Forsythe
  calls 2.0 % (tests/fidelity/test_findings_spread.py).

A *paired* part (``lower`` / ``higher`` only) compares two cells of one blocked campaign, where
every block ran one invocation of each cell in a random order: ``a`` and ``b`` are indexed by
block, and the part takes the median of the per-block ratios with its order-statistic interval
(:func:`faascope.fidelity.ratio.paired_ratio`, which says why pairing). The thesis's /tmp
findings are paired.

A sample smaller than the rule's minimum (``compare.minimums`` "median": 5 values a side for the
bootstrap interval; 6 blocks for a paired part; ``cv_test.MIN_N`` for the CV test) decides nothing: the part says "too few"
and the finding is not reproduced. The simulation in tests/fidelity/test_fidelity_findings.py
measures the rule's false-alarm rate (no effect, n = 5 and 10) and its power.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from scipy import stats

from faascope import calibration
from faascope.analysis import cv_test
from faascope.compare.minimums import minimum, too_few
from faascope.fidelity.compare import WITHIN
# the ratio's interval is shared with the study's decisions (compare.decide)
from faascope.fidelity.ratio import ALPHA, N_BOOT, SEED, STATISTICS, paired_ratio, ratio_interval

# the bootstrap interval's minimum (values per side), from the coverage simulation of
# ``faascope compare`` (compare/minimums.py): one name for the findings and the decisions
from faascope.fidelity.compare import MIN_METHOD  # noqa: E402

THESIS = ("Master's thesis on serverless local file-system I/O on AWS Lambda and Google Cloud "
          "Functions (2024), reproducibility package gpr-indevelopment/dissert-serverless-local-io")
ROY = ("Roy, Patel, Tiwari, 'Characterizing and Mitigating the I/O Scalability Challenges for "
       "Serverless Applications', IISWC 2021")
STELLAR = ("Ustiugov, Amariucai, Grot, 'Analyzing Tail Latency in Serverless Clouds with "
           "STeLLAR', IISWC 2021")
KIM_LEE = ("Kim, Lee, 'I/O resource isolation of public cloud serverless function runtimes for "
           "data-intensive applications', Cluster Computing 23 (2020), "
           "doi:10.1007/s10586-020-03103-4")
SKYRISE = ("Bodner et al., 'An Empirical Evaluation of Serverless Cloud Infrastructure for "
           "Large-Scale Data Processing' (Skyrise, HPI)")

RULES = ("lower", "higher", "band", "flat", "cv_lower", "spread_higher")


@dataclass(frozen=True)
class Part:
    """One comparison of a finding: sample ``a`` against ``b`` (their keys in the evidence)."""
    id: str
    what: str                 # in words: "GCF / Lambda, time per direct 512 B read"
    rule: str
    a: str
    b: Optional[str] = None
    statistic: str = "median"
    unit: str = "1"           # of a one-sample band (s, B/s); a ratio's is 1
    #: (table, key) of the published figure a band is centred on, ×/÷ WITHIN
    published: Optional[tuple[str, str]] = None
    #: a published ratio computed from two entries of one table (key over key)
    published_ratio: Optional[tuple[str, str, str]] = None
    #: ``a`` and ``b`` are indexed by block of one blocked campaign: the rule takes the ratio
    #: within each block (module docstring)
    paired: bool = False

    def __post_init__(self):
        if self.rule not in RULES or self.statistic not in STATISTICS:
            raise ValueError(f"part {self.id}: rule {self.rule!r} / statistic {self.statistic!r} "
                             f"is not one of {RULES} / {tuple(STATISTICS)}")
        if self.paired and (self.rule not in ("lower", "higher") or self.statistic != "median"
                            or self.b is None):
            raise ValueError(f"part {self.id}: pairing is defined for the median ratio of two "
                             "samples under 'lower' or 'higher'")


@dataclass(frozen=True)
class Finding:
    id: str
    study: str
    citation: str
    finding: str
    parts: tuple[Part, ...]
    #: the calibration entries ("table:key") that were fitted or set so that this finding's
    #: figures come out as published: reproducing it then shows the machinery delivers what it
    #: was set to, not a prediction (as fit and held-out metrics are told apart)
    fitted_by: tuple[str, ...] = ()

    @property
    def prediction(self) -> bool:
        return not self.fitted_by


def _p(*a, **k) -> Part:
    return Part(*a, **k)


#: every seed study's headline findings, in report order (the one table of them)
FINDINGS: tuple[Finding, ...] = (
    Finding("thesis_gcf_tmp_reads_faster", "thesis 2024", THESIS,
            "GCF's /tmp reads are faster than Lambda's (every read cell)",
            (_p("read_512", "GCF / Lambda time per direct 512 B read, 2048 MB", "lower",
                "gcf/read/m2048/io512", "lambda/read/m2048/io512", paired=True),
             _p("read_128k", "GCF / Lambda time per direct 128 KiB read, 2048 MB", "lower",
                "gcf/read/m2048/io131072", "lambda/read/m2048/io131072", paired=True)),
            fitted_by=('platform-lambda:tmp_read_iops', 'platform-lambda:tmp_read_bps',
                       'platform-gcf:syscall_cost', 'platform-gcf:close_cost')),
    Finding("thesis_lambda_large_writes_faster", "thesis 2024", THESIS,
            "Lambda's large /tmp writes are faster than GCF's (2-19 %)",
            (_p("write_512", "Lambda / GCF time per 512 B write (urandom), 2048 MB", "lower",
                "lambda/write/m2048/io512", "gcf/write/m2048/io512", paired=True),
             _p("write_128k", "Lambda / GCF time per 128 KiB write (urandom), 2048 MB (the "
                "findings' blocks and the battery's tmp blocks: findings_battery.POOLED_TMP)", "lower",
                "lambda/write/m2048/io131072", "gcf/write/m2048/io131072", paired=True)),
            fitted_by=('platform-gcf:cpu_speed',)),
    Finding("thesis_more_memory_faster", "thesis 2024", THESIS,
            "More memory is faster: Lambda's direct reads at 2048 MB against 128 MB",
            (_p("read_512", "2048 MB / 128 MB time per direct 512 B read (Lambda)", "lower",
                "lambda/read/m2048/io512", "lambda/read/m128/io512", paired=True),),
            fitted_by=('platform-lambda:tmp_limits_memory_exponent',)),
    Finding("thesis_more_memory_predictable", "thesis 2024", THESIS,
            "More memory is more predictable: a lower CV at 2048 MB than at 128 MB",
            (_p("read_512_cv", "CV at 2048 MB vs at 128 MB, time to read 10 KB directly (Lambda)",
                "cv_lower", "cv/m2048", "cv/m128"),),
            # device_cpu is fitted on the 128 MB side's distribution (its steps of the period)
            fitted_by=('platform-lambda:device_cpu',)),
    Finding("thesis_larger_io_faster", "thesis 2024", THESIS,
            "A larger I/O size is faster: the same file read with 128 KiB calls against 512 B",
            (_p("lambda", "128 KiB / 512 B time to read the file directly, Lambda 2048 MB",
                "lower", "lambda/read_file/m2048/io131072", "lambda/read_file/m2048/io512", paired=True),
             _p("gcf", "128 KiB / 512 B time to read the file directly, GCF 2048 MB", "lower",
                "gcf/read_file/m2048/io131072", "gcf/read_file/m2048/io512", paired=True)),
            fitted_by=('platform-lambda:tmp_read_iops', 'platform-lambda:tmp_read_bps')),
    Finding("roy_sharedfs_grows_object_flat", "Roy et al.", ROY,
            "Shared-FS (EFS) write time grows with concurrency while object storage (S3) stays "
            "flat",
            (_p("sharedfs", "shared FS write time, 4 concurrent / 1 (median per burst)",
                "higher", "sharedfs/burst4", "sharedfs/burst1"),
             _p("object", "object storage write time, 4 concurrent / 1 (median per burst)",
                "flat", "object/burst4", "object/burst1"))),
    Finding("roy_staggering_improves_service", "Roy et al.", ROY,
            "Staggering the invocations improves service time over all at once",
            (_p("service", "staggered / all at once service time (median per burst)", "lower",
                "stagger/staggered", "stagger/all_at_once"),)),
    Finding("stellar_cold_10x_warm", "STeLLAR", STELLAR,
            "A cold start takes ~10x or more a warm invocation, with a wider spread",
            (_p("ratio", "cold / warm invocation latency (median), 128 MB noop", "band",
                "cold", "warm", published_ratio=("published-anchors", "stellar_cold_median_aws",
                                                  "stellar_warm_median")),
             _p("spread", "cold / warm spread (mean absolute deviation from the median)",
                "spread_higher", "cold", "warm")),
            fitted_by=('platform-lambda:cold_start_fixed', 'platform-lambda:front_end_delay')),
    Finding("stellar_image_size", "STeLLAR", STELLAR,
            "A 100 MB image cold-starts ~x3.5 slower than a 10 MB one",
            (_p("ratio", "cold latency, large / small image (median)", "band", "image/large",
                "image/small", published=("published-findings", "stellar_image_100mb_over_10mb")),),
            fitted_by=('platform-lambda:cold_start_fetch_rate',)),
    Finding("kimlee_disk_grows_with_memory", "Kim & Lee", KIM_LEE,
            "Disk bandwidth grows with memory up to ~2 GB",
            (_p("up_to_2gb", "/tmp read bandwidth, 2048 MB / 128 MB", "higher",
                "memory/m2048", "memory/m128"),
             _p("above_2gb", "/tmp read bandwidth, 3008 MB / 2048 MB", "flat",
                "memory/m3008", "memory/m2048")),
            fitted_by=('platform-lambda:tmp_limits_memory', 'platform-lambda:tmp_limits_memory_exponent')),
    Finding("kimlee_colocation", "Kim & Lee", KIM_LEE,
            "Co-located functions: per-function disk bandwidth falls, the aggregate stays flat",
            (_p("per_function", "per-function write bandwidth, 4 co-located / 1", "lower",
                "coloc/per_function/burst4", "coloc/per_function/burst1"),
             _p("aggregate", "aggregate write bandwidth, 4 co-located / 1", "flat",
                "coloc/aggregate/burst4", "coloc/aggregate/burst1")),
            fitted_by=('platform-lambda:host_tmp_write_bps',)),
    Finding("skyrise_network_burst_baseline", "Skyrise", SKYRISE,
            "The network delivers a burst, then a ~75 MiB/s baseline",
            (_p("burst", "burst rate / baseline rate (per invocation, fitted token bucket)",
                "higher", "network/burst_rate", "network/baseline_rate"),
             _p("baseline", "baseline rate after the burst", "band", "network/baseline_rate",
                unit="B/s", published=("published-anchors", "skyrise_net_baseline_rate"))),
            fitted_by=('platform-lambda:net_bucket_size', 'platform-lambda:net_refill_rate', 'platform-lambda:net_peak_rate')),
    Finding("skyrise_dynamodb_faster_than_s3", "Skyrise", SKYRISE,
            "DynamoDB is faster than S3 per request (1 KiB)",
            (_p("write", "DynamoDB / S3 median request latency, 1 KiB write", "lower",
                "kv/put", "object/put"),
             _p("read", "DynamoDB / S3 median request latency, 1 KiB read", "lower",
                "kv/get", "object/get")),
            fitted_by=("standins-aws:dynamodb_write_median", "standins-aws:dynamodb_read_median",
                       "standins-aws:s3_standard_write_median", "standins-aws:s3_standard_read_median")),
)


@dataclass
class PartResult:
    part: Part
    n_a: int
    n_b: Optional[int]
    estimate: Optional[float]             # ratio (or the one-sample statistic)
    ci: Optional[tuple[float, float]]
    band: Optional[tuple[float, float]]
    p_value: Optional[float]
    reproduced: bool
    why: str = ""


@dataclass
class FindingResult:
    finding: Finding
    parts: list[PartResult]
    note: str = ""

    @property
    def reproduced(self) -> bool:
        return bool(self.parts) and all(p.reproduced for p in self.parts)

    @property
    def why(self) -> str:
        return "; ".join(f"{p.part.id}: {p.why}" for p in self.parts if not p.reproduced)


def band_of(part: Part, tables: Optional[dict] = None) -> Optional[tuple[float, float]]:
    """The published band of a ``band`` part (published figure ×/÷ WITHIN, in SI units), or the
    ``flat`` band [1/WITHIN, WITHIN]."""
    if part.rule == "flat":
        return (1 / WITHIN, WITHIN)
    if part.rule != "band":
        return None
    tables = tables if tables is not None else {}

    def table(name):
        if name not in tables:
            tables[name] = calibration.load_table(name)
        return tables[name]

    if part.published_ratio:
        name, top, bottom = part.published_ratio
        centre = table(name).value(top) / table(name).value(bottom)
    else:
        name, key = part.published
        e = table(name)[key]
        centre = e.value * {"ms": 1e-3}.get(e.unit, 1.0)
    return (centre / WITHIN, centre * WITHIN)


def _clean(x) -> np.ndarray:
    v = np.asarray(x if x is not None else [], float)
    return v[np.isfinite(v)]


def _direction(rule: str, lo: float, hi: float) -> tuple[bool, str]:
    if rule == "lower":
        ok = hi < 1
        return ok, "" if ok else ("the interval includes 1: no difference shown" if lo < 1 else
                                  "the opposite direction (the interval is above 1)")
    ok = lo > 1
    return ok, "" if ok else ("the interval includes 1: no difference shown" if hi > 1 else
                              "the opposite direction (the interval is below 1)")


def check_paired(part: Part, a, b) -> PartResult:
    """A paired part: the median of the per-block ratios and its order-statistic interval."""
    n, est, ci, why = paired_ratio(a, b, ALPHA)
    if ci is None:
        return PartResult(part, n, n, est, None, None, None, False, why)
    ok, why = _direction(part.rule, *ci)
    return PartResult(part, n, n, est, ci, None, None, ok, why)


def check_spread(part: Part, a: np.ndarray, b: np.ndarray) -> PartResult:
    """A spread part: the Brown-Forsythe test, one-sided by the mean absolute deviations."""
    few = too_few(MIN_METHOD, min(len(a), len(b)))
    if few:
        return PartResult(part, len(a), len(b), None, None, None, None, False,
                          f"{few} for the Brown-Forsythe test")
    dev_a, dev_b = (float(np.mean(np.abs(x - np.median(x)))) for x in (a, b))
    if dev_b <= 0:
        return PartResult(part, len(a), len(b), None, None, None, None, False,
                          "b's values are all equal: no spread to compare with")
    p = float(stats.levene(a, b, center="median").pvalue)
    ok = p < ALPHA and dev_a > dev_b
    why = "" if ok else (f"the Brown-Forsythe test's p = {p:.3g}" + (
        " in the opposite direction" if dev_a < dev_b else ": no difference shown"))
    return PartResult(part, len(a), len(b), dev_a / dev_b, None, None, p, ok, why)


def check(part: Part, a, b=None, tables: Optional[dict] = None, seed: int = SEED) -> PartResult:
    """Decide one part from its samples by its rule (module docstring)."""
    if part.paired:
        return check_paired(part, a, b)
    a = _clean(a)
    bb = _clean(b) if part.b is not None else None
    band = band_of(part, tables)
    nb = None if bb is None else len(bb)
    if part.rule == "cv_lower":
        t = cv_test.CvTest([a, bb], permutations=cv_test.DEFAULT_PERMUTATIONS, seed=seed)
        r = t.compare([1], [0], [(1, 0)])   # b's CV against a's: T > 0 when a's is lower
        if r["p_value"] is None:
            return PartResult(part, len(a), nb, None, None, None, None, False, r["test_why"])
        cva, cvb = (float(np.std(x, ddof=1) / np.mean(x)) for x in (a, bb))
        ok = r["p_value"] < ALPHA and r["statistic"] < 0
        why = "" if ok else (f"CV {cva:.3g} vs {cvb:.3g}: the CV test's p = {r['p_value']:.3g}"
                             + (" in the opposite direction" if r["statistic"] > 0 else ""))
        # the estimate is the CV ratio; the test gives a p-value, not an interval
        return PartResult(part, len(a), nb, cva / cvb, None, None, r["p_value"], ok, why)
    if part.rule == "spread_higher":
        return check_spread(part, a, bb)
    few = too_few(MIN_METHOD, min(len(a), nb if nb is not None else len(a)))
    if few:
        return PartResult(part, len(a), nb, None, None, band, None, False,
                          f"{few} for the bootstrap interval")
    est, ci = ratio_interval(a, bb, part.statistic, seed=seed)
    if est is None:
        return PartResult(part, len(a), nb, None, None, band, None, False,
                          f"a {part.statistic} of 0: no ratio")
    if ci is None:
        return PartResult(part, len(a), nb, est, None, band, None, False, "no interval")
    lo, hi = ci
    if part.rule in ("lower", "higher"):
        ok, why = _direction(part.rule, lo, hi)
    else:  # band, flat
        ok = band[0] <= lo and hi <= band[1]
        if ok:
            why = ""
        elif hi < band[0] or lo > band[1]:
            why = "the interval lies " + ("below" if hi < band[0] else "above") + " the band"
        else:
            why = "the interval reaches outside the band (too wide or off-centre)"
    return PartResult(part, len(a), nb, est, ci, band, None, ok, why)


def note_of(key: str, notes: dict[str, str]) -> str:
    """The note of a sample key, or of the campaign prefix it starts with ("" if none)."""
    if key in notes:
        return notes[key]
    return next((v for p, v in notes.items() if key.startswith(p)), "")


def evaluate(evidence: dict[str, np.ndarray], notes: Optional[dict[str, str]] = None,
             findings: tuple[Finding, ...] = FINDINGS, seed: int = SEED) -> list[FindingResult]:
    """Every finding decided from the evidence (sample key -> values); a part whose samples are
    missing is not reproduced and says so (with the note of the campaign behind it, e.g. its
    failures)."""
    notes = notes or {}
    tables: dict = {}
    out = []
    for f in findings:
        parts = []
        for p in f.parts:
            missing = [k for k in (p.a, p.b) if k is not None and len(_clean(evidence.get(k))) == 0]
            if missing:
                why = "; ".join(dict.fromkeys(note_of(k, notes) or "not measured" for k in missing))
                parts.append(PartResult(p, len(_clean(evidence.get(p.a))),
                                        None if p.b is None else len(_clean(evidence.get(p.b))),
                                        None, None, band_of(p, tables), None, False,
                                        f"no local values ({why})"))
                continue
            parts.append(check(p, evidence.get(p.a), evidence.get(p.b), tables, seed))
        out.append(FindingResult(f, parts))
    return out


def as_json(r: FindingResult, evidence: Optional[dict[str, np.ndarray]] = None) -> dict:
    f = r.finding
    parts = []
    for p in r.parts:
        d = {"id": p.part.id, "what": p.part.what, "rule": p.part.rule,
             "statistic": ("CV (permutation test)" if p.part.rule == "cv_lower" else
                           "mean absolute deviation from the median (Brown-Forsythe test)"
                           if p.part.rule == "spread_higher" else
                           "median of the per-block ratios (order statistics)" if p.part.paired
                           else p.part.statistic),
             "paired": p.part.paired,
             "a": p.part.a, "b": p.part.b, "n_a": p.n_a, "n_b": p.n_b,
             "estimate": p.estimate, "ci": list(p.ci) if p.ci else None,
             "confidence": 1 - ALPHA, "band": list(p.band) if p.band else None,
             "p_value": p.p_value, "reproduced": p.reproduced, "why": p.why}
        if evidence is not None:
            for side in ("a", "b"):
                key = getattr(p.part, side)
                if key is not None:
                    v = _clean(evidence.get(key))
                    d[f"median_{side}"] = float(np.median(v)) if len(v) else None
        parts.append(d)
    return {"id": f.id, "study": f.study, "finding": f.finding, "citation": f.citation,
            "reproduced": r.reproduced, "why": r.why, "parts": parts, "note": r.note,
            "prediction": f.prediction, "fitted_by": list(f.fitted_by)}
