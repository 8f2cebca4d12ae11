"""Local figure against published figure, and the 2024 study's decisions, as plain arithmetic.

- ratio = local / published (above 1: slower, larger or later locally);
- within: 1/1.5 <= ratio <= 1.5 (the issue's bar, ×1.5 either way);
- why: for a metric that is not within, what on this machine keeps it out (said plainly, from
  what the measurement showed: an in-memory /tmp, the CPU behind /dev/urandom, an unshaped
  stand-in, no visible burst…);
- decisions: per thesis cell, which platform wins (lower time per I/O call) in the thesis
  (Lambda vs GCF) and locally (the lambda profile vs the gcf profile), and whether they agree.
  A side wins only where the 95 % interval of the ratio (:mod:`faascope.fidelity.ratio`)
  excludes 1: the thesis's intervals come from its own rows (table ``thesis-decisions``), the
  local ones from the per-call samples, paired by block where the battery's campaign ran in
  blocks (:func:`decide`). Two of its 10 KB write cells the thesis's data do not decide (its
  interval holds 1: no winner); there the local answer agrees when its interval overlaps the
  thesis's (the local ratio is one the study's data allow) and disagrees when the two are
  disjoint (:func:`compatible`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from typing import Optional

from faascope import calibration
from faascope.fidelity.metrics import CLOUD, Metric, Published, ThesisCell
from faascope.compare.minimums import minimum
from faascope.fidelity.ratio import paired_ratio, ratio_interval

#: the ratio interval's minimum values a side, from the coverage simulation of `faascope
#: compare` (compare/minimums.py), for the decisions and the findings
MIN_METHOD = "median"

#: the table of the thesis's per-cell intervals of Lambda's over GCF's median latency
DECISIONS_TABLE = "thesis-decisions"

#: the issue's bar: within ×1.5 of the published figure, either way
WITHIN = 1.5


@dataclass
class Local:
    """What the battery measured for one metric: the median over ``n`` invocations (None when
    nothing could be measured; ``note`` says why), plus facts the explanation may use."""
    value: Optional[float]
    n: int = 0
    note: str = ""
    facts: dict = field(default_factory=dict)
    #: the per-invocation values behind ``value`` where a decision needs their interval
    samples: tuple = ()
    #: the same values indexed by block of a blocked campaign (NaN where an invocation failed),
    #: where a decision can pair its two sides by block
    blocks: tuple = ()


@dataclass
class Comparison:
    metric: Metric
    local: Local
    published: Published
    ratio: Optional[float]
    within: bool
    why: str = ""


@dataclass
class Decision:
    cell: ThesisCell
    published_winner: str           # lambda, gcf or none (the thesis's data do not separate them)
    local_winner: Optional[str]     # lambda, gcf, none; None when a local figure is missing
    published_ratio: float          # Lambda / GCF time per I/O call
    local_ratio: Optional[float]    # lambda / gcf profile
    #: the same answer as the thesis: the same winner where it has one; where it has none, a
    #: local interval that overlaps its (:func:`compatible`). None: not measured locally, or a
    #: no-winner cell without a local interval
    agree: Optional[bool]
    published_ci: Optional[tuple[float, float]] = None
    local_ci: Optional[tuple[float, float]] = None
    #: how the local side was decided: "paired" (by block), "unpaired" (ratio of medians,
    #: bootstrap), "point" (too few values for an interval), None (not measured)
    local_method: Optional[str] = None

    @property
    def counted(self) -> bool:
        """Whether the cell counts among the decisions compared: its agreement could be judged."""
        return self.agree is not None

    @property
    def study_has_winner(self) -> bool:
        """Whether the thesis's own data decide a winner here (its interval excludes 1)."""
        return self.published_winner != "none"


def ratio(local: Optional[float], published: float) -> Optional[float]:
    if local is None or published <= 0:
        return None
    return local / published


def within(r: Optional[float], factor: float = WITHIN) -> bool:
    return r is not None and 1 / factor <= r <= factor


def compare(metric: Metric, local: Local, pub: Published, loaded: str = "") -> Comparison:
    """``loaded``: what to add to the explanation of a time that came out slower (a machine
    busy with other work makes every time longer), e.g. "the machine was loaded (…)"."""
    r = ratio(local.value, pub.value)
    ok = within(r)
    text = "" if ok else why(metric, local, r)
    if text and loaded and r is not None and r > 1 and metric.unit == "s":
        text = f"{text}; {loaded}"
    return Comparison(metric=metric, local=local, published=pub, ratio=r, within=ok, why=text)


def load_note(machine: dict) -> str:
    """What to say of a machine that was busy during the battery (1-minute load average above
    twice its CPUs, before or after), or ""."""
    load = max(machine.get("load_1min_before", 0), machine.get("load_1min_after", 0))
    cpus = machine.get("cpus") or 0
    if cpus and load > 2 * cpus:
        return (f"the machine was loaded (1-minute load average {load:.0f} on {cpus} CPUs): "
                "timings include waiting for a CPU")
    return ""


def winner(lambda_value: float, gcf_value: float,
           ci: Optional[tuple[float, float]] = None) -> str:
    """The faster side by Lambda / GCF time; with the ratio's interval, "none" unless it
    excludes 1."""
    if ci is not None:
        return "lambda" if ci[1] < 1 else "gcf" if ci[0] > 1 else "none"
    if lambda_value < gcf_value:
        return "lambda"
    if gcf_value < lambda_value:
        return "gcf"
    return "none"


def published_interval(cell: ThesisCell) -> Optional[tuple[float, float]]:
    """The thesis's interval of Lambda's over GCF's median latency in ``cell`` (None: not in
    the table)."""
    t = calibration.load_table(DECISIONS_TABLE)
    key = f"thesis_{cell.op}_m{cell.memory_mb}_f{cell.file_size}_io{cell.io_size}_lambda_over_gcf"
    if f"{key}_low" not in t.entries:
        return None
    return t.value(f"{key}_low"), t.value(f"{key}_high")


def compatible(local_ci: Optional[tuple[float, float]],
               published_ci: Optional[tuple[float, float]]) -> Optional[bool]:
    """Where the study shows no winner: whether the local ratio is one its data allow, i.e. the
    two 95 % intervals overlap (None without both). Disjoint intervals differ at well under 5 %,
    so "no" is a real disagreement; "yes" is agreement by compatibility, as wide as the local
    interval is, not a shown equality."""
    if local_ci is None or published_ci is None:
        return None
    return local_ci[0] <= published_ci[1] and published_ci[0] <= local_ci[1]


def decide(cell: ThesisCell, published_lambda: float, published_gcf: float,
           local_lambda: Optional[float], local_gcf: Optional[float],
           local_samples: tuple = (), published_ci: Optional[tuple[float, float]] = None,
           local_blocks: tuple = ()) -> Decision:
    """The study's decision for one cell (which platform's /tmp is faster there) and the local
    one, from times per I/O call. The local side is decided, in this order of preference, by
    ``local_blocks`` ((lambda's, gcf's) values indexed by block of one blocked campaign): the
    median of the per-block ratios and its order-statistic interval
    (:func:`faascope.fidelity.ratio.paired_ratio`), from 6 blocks with both sides; else by
    ``local_samples`` ((lambda's, gcf's) per-invocation values): the ratio of medians and its
    bootstrap interval, from the findings' minimum a side; else by the point ratio."""
    pw = winner(published_lambda, published_gcf, published_ci)
    pr = published_lambda / published_gcf
    if local_lambda is None or local_gcf is None:
        return Decision(cell, pw, None, pr, None, None, published_ci)
    lr = local_lambda / local_gcf if local_gcf > 0 else None
    lci, method = None, "point"
    if local_blocks:
        if len(local_blocks) != 2:
            raise ValueError(f"local_blocks: want (lambda's, gcf's) values by block, got "
                             f"{len(local_blocks)} arrays of blocks")
        # blocks that do not line up raise (ratio.block_ratios): never a silent unpaired decision
        _, est, lci, _ = paired_ratio(*local_blocks)
        if lci is not None:
            lr, method = est, "paired"
    # the unpaired interval needs the findings' minimum a side (compare.minimums "median");
    # with fewer (a --quick battery's cell) the point ratio decides and no interval is shown
    if lci is None and local_samples and all(len(s) >= minimum(MIN_METHOD) for s in local_samples):
        _, lci = ratio_interval(np.asarray(local_samples[0], float), np.asarray(local_samples[1], float))
        method = "unpaired" if lci is not None else method
    lw = winner(local_lambda, local_gcf, lci)
    agree = (lw == pw) if pw != "none" else compatible(lci, published_ci)
    return Decision(cell, pw, lw, pr, lr, agree, published_ci, lci, method)


def direction(unit: str, r: float) -> str:
    """How the local figure differs, in words that fit the unit: a longer time is slower, a
    higher rate faster, more bytes larger."""
    if unit == "B/s":
        return "faster" if r > 1 else "slower"
    if unit == "B":
        return "larger" if r > 1 else "smaller"
    return "slower" if r > 1 else "faster"


#: how far this machine's own call speed may move during a battery (after / before, either way)
#: before the report warns that its call-bound figures are not one machine's
CALL_DRIFT = 1.25


#: a CV of this machine's own 10 KB direct reads (battery.host_disk_read) above the thesis's
#: Lambda's at 128 MB (0.398 over its 209 rows; 0.317 at 2048 MB: tests/fidelity/test_host_disk.py
#: recomputes both) leaves the predictability finding to this machine's disk, not to the profile
HOST_DISK_CV = 0.40


def disk_calm(reading: Optional[dict]) -> bool:
    """Whether a disk probe's reading (battery.host_disk_read) is within HOST_DISK_CV; no
    reading (no direct I/O there) counts as calm, since there is nothing to wait for."""
    return reading is None or reading["cv"] <= HOST_DISK_CV


def disk_note(machine: dict) -> str:
    """What to say of a machine whose own 10 KB direct reads (no sandbox) varied more than
    HOST_DISK_CV before or after the battery, or after the kept run of a disk-bound campaign
    (battery.run_kept), or ""."""
    d = machine.get("host_direct_read_10kb") or {}
    runs = [(k, v) for k, v in d.items() if k in ("before", "after") and v]
    for name, entries in (d.get("campaigns") or {}).items():
        kept = entries[-1] if entries else {}
        if kept.get("after"):
            runs.append((f"after {name}'s run {kept['run']}", kept["after"]))
    if all(disk_calm(v) for _, v in runs):
        return ""
    text = ", ".join(f"{k}: median {v['median_s'] * 1e3:.2f} ms, CV {v['cv']:.2f}" for k, v in runs)
    return (f"this machine's own disk varied under 10 KB direct reads with no sandbox ({text}; "
            f"the thesis's Lambda: CV {HOST_DISK_CV:.2f} at 128 MB, less at 2048 MB): the /tmp "
            "read figures' spread, and the predictability finding, are this disk's as much as "
            "the profile's")


def drift_note(machine: dict) -> str:
    """What to say of a machine whose own 512 B urandom write (no sandbox) moved more than
    ×CALL_DRIFT between the battery's start and its end, or ""."""
    call = machine.get("host_urandom_write_per_call_s") or {}
    b, a = call.get("before"), call.get("after")
    if not b or not a or 1 / CALL_DRIFT <= a / b <= CALL_DRIFT:
        return ""
    return (f"this machine's own call speed moved during the battery ({host_call_text((b, a))}): "
            "the figures bound by system calls or CPU were measured on a machine that changed "
            "under them")


#: the share of all CPU time the hypervisor may take during one campaign before the report says
#: that campaign's timings were stretched by it (faascope.hoststat)
STEAL_NOTE = 0.05
#: how many times a campaign runs again when the hypervisor took STEAL_NOTE or more of this
#: machine's CPU time during it (hoststat.StealLog.run): once. The machine's slow stretches come
#: and go within minutes (2026-11-28: a rerun of the tmp and warm campaigns right after a slow
#: battery was slow once, then quiet), and a second repeat would cost the longest campaign
#: another ~10 minutes for a state that, when it lasts, a third run would not escape either.
STEAL_REPEATS = 1


def stolen(steal: Optional[dict]) -> dict[str, float]:
    """The campaigns (name -> fraction) during which the hypervisor took STEAL_NOTE or more of
    this machine's CPU time, of a battery's ``machine.cpu_steal``."""
    return {k: v for k, v in (steal or {}).items() if v is not None and v >= STEAL_NOTE}


def steal_note(machine: dict) -> str:
    """What to say of the campaigns during which the hypervisor took STEAL_NOTE or more of this
    machine's CPU time, or ""."""
    hit = stolen(machine.get("cpu_steal"))
    if not hit:
        return ""
    parts = ", ".join(f"{k} {v:.0%}" for k, v in hit.items())
    return (f"the hypervisor took CPU time from this machine during {len(hit)} campaign(s) "
            f"({parts} of all CPU time in the run kept): their timings are stretched by it, which "
            "no setting of the platform moves")


def repeat_note(machine: dict) -> str:
    """What to say of the campaigns run again because the hypervisor took STEAL_NOTE or more of
    this machine's CPU time during an earlier run of theirs, or ""."""
    rep = machine.get("cpu_steal_repeated") or {}
    if not rep:
        return ""
    parts = ", ".join(f"{k} (" + ", ".join(f"{v:.0%}" for v in vs) + ")" for k, vs in rep.items())
    return (f"run again because the hypervisor took {STEAL_NOTE:.0%} or more of this machine's "
            f"CPU time during them: {parts}; the figures are the last run's")


def disk_repeat_note(machine: dict) -> str:
    """What to say of the disk-bound campaigns run again because this machine's own disk varied
    after an earlier run of theirs (battery.run_kept), or ""."""
    camps = (machine.get("host_direct_read_10kb") or {}).get("campaigns") or {}
    parts = []
    for name, entries in camps.items():
        set_aside = [e for e in entries[:-1] if not disk_calm(e.get("after"))]
        if not set_aside:
            continue
        cvs = ", ".join(f"CV {e['after']['cv']:.2f} after run {e['run']}" for e in set_aside)
        waited = sum(e.get("waited_s") or 0 for e in entries[1:])
        parts.append(f"{name} ({cvs}; waited {waited:.0f} s for it to read calm; run "
                     f"{entries[-1]['run']} kept)")
    if not parts:
        return ""
    return (f"run again because this machine's own disk varied (10 KB direct reads with no "
            f"sandbox, CV over {HOST_DISK_CV:.2f}) after them: " + "; ".join(parts))


def host_call_text(before_after) -> str:
    """This machine's own 512 B urandom write, no sandbox, before and after the battery, in words
    (the reference of its call speed: battery.HOST_CALL_IO)."""
    b, a = before_after
    return (f"this machine's own 512 B urandom write, no sandbox, took {b * 1e6:.3g} µs a call "
            f"before the battery and {a * 1e6:.3g} µs after (×{a / b:.2g})")


def why(metric: Metric, local: Local, r: Optional[float]) -> str:
    """Why a metric is not within ×1.5 here, in plain words (from what was measured)."""
    if r is None:
        return local.note or "nothing was measured for it"
    d = direction(metric.unit, r)
    f = local.facts
    k = metric.kind
    cloud = CLOUD.get(metric.profile, metric.profile)
    if k == "urandom":
        text = (f"{d} than {cloud}: dd reads /dev/urandom inside its timing, so the time is this "
                "machine's CPU generating random bytes under the profile's CPU quota, not /tmp; "
                "no calibration of /tmp can move it")
        if f.get("host_call_per_call_s"):
            text += "; " + host_call_text(f["host_call_per_call_s"])
        return text
    if k == "tmp_memory" and r > 1 and f.get("host_read_per_call_s"):
        host, pub = f["host_read_per_call_s"], local.value / r
        return (f"{d} than GCF: this machine itself, with no sandbox, takes {host * 1e6:.3g} µs to "
                f"read {f'{metric.cell.io_size:,} B' if metric.cell else 'a block'} from a file "
                f"in memory with the same dd (×{host / pub:.2g} GCF's {pub * 1e6:.3g} µs): its "
                "memory copies are that much slower than GCF's host's, and a sandbox can only add "
                "to them (the gcf profile's CPU quota and system calls)")
    if k == "tmp_memory":
        return (f"{d} than GCF: the gcf profile's /tmp is in memory as GCF's is (O_DIRECT "
                f"{'refused, served buffered' if f.get('direct_effective') is False else 'on'}), "
                "so the time is system calls (each with the profile's modelled sandbox cost, "
                "syscall_cost, fitted on the 1 GB 512 B cell; each close with close_cost, fitted "
                "on the 10 KB read at 2048 MB) and memory copies on this machine's CPU under the "
                "profile's CPU quota, not a device")
    if k == "small_file":
        if f.get("memory_mb") == 128:
            return (f"{d} than Lambda: the profile's /tmp limits scale with memory (984 reads/s at "
                    "128 MB, fitted on this cell), but blk-throttle lets a whole 100 ms slice of "
                    "the limit through at once (98 reads at 128 MB), so a 10 KB file's 20 reads "
                    "are never held back, and their CPU fits in one period's quota (1.45 ms per "
                    "20 ms at 128 MB); sustained reads do run at the fitted rate")
        return (f"{d} than Lambda: 20 calls on a 10 KB file measure per-call overhead (the first "
                "read's latency, where the CPU quota's period falls), which the device limits fitted "
                "on 1 GB files do not set")
    if k == "tmp_device":
        if f.get("direct_effective") is False:
            return (f"{d} than Lambda: O_DIRECT was refused on this /tmp, so reads came from the "
                    "page cache, not a device")
        if r < 1:
            if not f.get("calibrated") or not f.get("block_io_limits"):
                return (f"{d} than Lambda: this platform sets no calibrated block I/O limit on "
                        "the lambda profile's /tmp, so reads run at this machine's disk speed")
            return (f"{d} than Lambda although calibrated block I/O limits are in force: they "
                    "did not hold these reads to the fitted rate")
        return (f"{d} than Lambda: this machine's disk behind the profile's /tmp is slower per "
                "call than the fitted rate allows")
    if k == "network":
        if f.get("no_burst"):
            return ("no burst visible: the transfer ran at one steady rate, so the network was "
                    "not shaped with a token bucket (or the bucket was larger than the transfer)")
        if metric.unit == "B/s" and r < 1 and f.get("burst"):
            return (f"{d} than Skyrise's Lambda: the burst ran at what the sandbox's network "
                    "relay moves on this machine's CPU, below the token bucket's peak rate")
        return (f"{d} than Skyrise's Lambda: the sandbox's token bucket is set to other "
                "figures than those Skyrise measured")
    if k == "storage":
        if r < 1 / WITHIN:
            return (f"{d} than AWS: the stand-in answers from this machine "
                    f"({_ms(local.value)}) without the service's latency: it is not shaped "
                    "(no latency model in front of it)")
        return (f"{d} than AWS: a shaped stand-in's drawn latency is the whole request's, so "
                "what exceeds it is this machine's own time (the function, the shaper and the "
                "server sharing its CPUs)")
    if k == "cold":
        if r < 1 / WITHIN:
            return (f"{d} than STeLLAR: a local cold start is this machine's sandbox set-up and "
                    "runtime start, without the provider's placement, package fetch and microVM "
                    "boot, unless the profile models them")
        return (f"{d} than STeLLAR: this machine's sandbox set-up and runtime start under the "
                "profile's CPU quota take longer than the provider's")
    if k == "init":
        if r < 1 / WITHIN:
            return (f"{d} than lambda-perf: the runtime starts from a binary in this machine's "
                    "page cache on this machine's CPU; Lambda's Init phase starts it in a fresh "
                    "microVM, which no profile models (only the set-up before it is modelled)")
        return (f"{d} than lambda-perf: this machine's CPU under the 128 MB quota "
                "(0.07 vCPU) starts the runtime more slowly than Lambda's")
    if k == "warm":
        return (f"{d} than STeLLAR: a warm invocation over loopback has no cloud front end "
                "(load balancer, request routing) on its path: the profile's modelled front end "
                "(front_end_delay) was off (--no-front-end) or overridden" if r < 1 else
                f"{d} than STeLLAR: what the modelled front end (front_end_delay, less the "
                "platform's own measured path) cannot take off: the client's own part and the "
                "function's run on this machine, under the profile's CPU quota")
    return f"{d} than published"


def _ms(v: Optional[float]) -> str:
    return "–" if v is None else f"{v * 1e3:.3g} ms"


@dataclass
class Evaluation:
    """Every metric compared, and the study's decisions."""
    comparisons: list[Comparison]
    decisions: list[Decision]

    @property
    def fit(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.published.fit]

    @property
    def held_out(self) -> list[Comparison]:
        return [c for c in self.comparisons if not c.published.fit]


def evaluate(metrics: list[Metric], local: dict[str, Local],
             published_of: dict[str, Published],
             profiles: Optional[tuple[str, ...]] = None, loaded: str = "") -> Evaluation:
    """Compare every metric (a metric the battery did not measure has a Local without value)
    and decide every thesis cell for which both profiles' metrics are there; only the
    comparisons of ``profiles`` (default all) are kept, the decisions need both. ``loaded``
    (see :func:`compare`) is added to the explanation of every time that came out slower."""
    comps = [compare(m, local.get(m.id, Local(None, note="not measured")), published_of[m.id],
                     loaded) for m in metrics]
    by_cell: dict[tuple, dict[str, Comparison]] = {}
    for c in comps:
        if c.metric.cell is not None:
            by_cell.setdefault((c.metric.cell,), {})[c.metric.profile] = c
    decisions = []
    for (cell,), pair in by_cell.items():
        if set(pair) >= {"lambda", "gcf"}:
            lam, gcf = pair["lambda"].local, pair["gcf"].local
            decisions.append(decide(cell, pair["lambda"].published.value,
                                    pair["gcf"].published.value, lam.value, gcf.value,
                                    (lam.samples, gcf.samples), published_interval(cell),
                                    (lam.blocks, gcf.blocks)))
    if profiles is not None:
        comps = [c for c in comps if c.metric.profile in profiles]
    return Evaluation(comps, decisions)
