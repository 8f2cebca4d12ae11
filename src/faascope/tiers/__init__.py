"""Cross-platform resource tiers: the same memory everywhere, CPU as close as each platform allows.

Serverless platforms expose one knob, memory, and derive CPU from it, each in its own way:

- ``aws`` (AWS Lambda): any memory from 128 to 10,240 MB in 1 MB steps; CPU is proportional to it,
  1 vCPU per 1,769 MB (so 128 MB -> 0.072 vCPU, 2,048 MB -> 1.158 vCPU);
- ``gcf`` (Google Cloud Functions 2nd gen): fixed tiers, 128 MB -> 0.083 vCPU, 256 -> 0.167,
  512 -> 0.333, 1 GiB -> 0.583, 2 GiB -> 1, 4 GiB -> 2, 8 GiB -> 2, 16 GiB -> 4, 32 GiB -> 8;
- ``cloudrun`` (Cloud Run, request-based billing, concurrency 1): memory 128 MiB to 32 GiB and a CPU
  limit chosen freely between 0.08 and 1 in steps of 0.001 (or 1, 2, 4, 6, 8), with the documented
  constraints (below 0.5 vCPU at most 512 MiB; below 1 vCPU at most 1 GiB; 4 vCPU needs >= 2 GiB,
  6 and 8 vCPU need >= 4 GiB; at most 4 GiB per vCPU) — so it can match another platform's CPU;
- ``local-lambda`` / ``local-gcf``: faascope's local platform profiles, which imitate the two.

"MB" is what the platforms mean by it: MiB (Lambda's MemorySize=128 is 134,217,728 bytes; GCF's
"128MB" tier is 128Mi). A tier is one memory size; memory matches exactly on every platform (a
platform that cannot run that memory makes the tier incomplete, and says why), and each platform
gets the CPU closest to the reference platform's (the first one listed) among those it allows.

:func:`derive_tiers` returns them with the CPU difference per tier, and ``faascope tiers`` prints
them (the 2024 thesis's resource tiers, docs/cost.md: ``faascope tiers --platforms aws,gcf --memory 128,256,512,1024,2048``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Optional

from faascope.calibration import load_table
from faascope.errors import BadInput

#: the published CPU-per-memory figures, one table for Python and Go (the Go platform compiles
#: agent/platform/cputiers_gen.go, generated from it; tests/calibration/test_cpu_tiers.py)
CPU_TIERS_TABLE = "cpu-tiers"
_CPU_TIERS = load_table(CPU_TIERS_TABLE)
_GCF_PREFIX = "gcf_vcpu_m"

#: AWS: "at 1,769 MB, a function has the equivalent of one vCPU" (its entry in the table)
LAMBDA_TIER_KEY = "lambda_mb_per_vcpu"
LAMBDA_MB_PER_VCPU = int(_CPU_TIERS.value(LAMBDA_TIER_KEY))
LAMBDA_MIN_MB, LAMBDA_MAX_MB = 128, 10240

#: GCF 2nd gen: memory tier (MB = MiB) -> default vCPU, smallest tier first
GCF_TIERS: dict[int, float] = dict(sorted(
    (int(k[len(_GCF_PREFIX):]), float(e.value)) for k, e in _CPU_TIERS.entries.items()
    if k.startswith(_GCF_PREFIX)))

CLOUD_RUN_MIN_CPU = 0.08
CLOUD_RUN_WHOLE_CPUS = (1, 2, 4, 6, 8)
CLOUD_RUN_MIN_MB, CLOUD_RUN_MAX_MB = 128, 32768


class TierError(ValueError):
    """A platform cannot run a memory size (the message says why)."""


@dataclass(frozen=True)
class Platform:
    name: str
    title: str
    #: how its CPU follows memory, in words (printed under the table)
    rule: str

    def cpu_options(self, memory_mb: int) -> list[float]:
        """The vCPU values this platform can give a function of ``memory_mb`` (raises TierError)."""
        raise NotImplementedError

    def closest_cpu(self, memory_mb: int, target: Optional[float]) -> float:
        options = self.cpu_options(memory_mb)
        if target is None or len(options) == 1:
            return options[0]
        return min(options, key=lambda c: (abs(c - target), c))


class LambdaPlatform(Platform):
    def cpu_options(self, memory_mb: int) -> list[float]:
        if not LAMBDA_MIN_MB <= memory_mb <= LAMBDA_MAX_MB:
            raise TierError(f"{self.title} memory is {LAMBDA_MIN_MB}..{LAMBDA_MAX_MB} MB")
        return [memory_mb / LAMBDA_MB_PER_VCPU]


class GCFPlatform(Platform):
    def cpu_options(self, memory_mb: int) -> list[float]:
        if memory_mb not in GCF_TIERS:
            raise TierError(f"{self.title} has no {memory_mb} MB tier (tiers: "
                            f"{', '.join(str(m) for m in GCF_TIERS)} MB)")
        return [GCF_TIERS[memory_mb]]


class CloudRunPlatform(Platform):
    def cpu_options(self, memory_mb: int) -> list[float]:
        if not CLOUD_RUN_MIN_MB <= memory_mb <= CLOUD_RUN_MAX_MB:
            raise TierError(f"{self.title} memory is {CLOUD_RUN_MIN_MB}..{CLOUD_RUN_MAX_MB} MiB")
        out: list[float] = []
        if memory_mb <= 1024:  # fractional CPU: >= 0.5 above 512 MiB, < 1 only up to 1 GiB
            lo = CLOUD_RUN_MIN_CPU if memory_mb <= 512 else 0.5
            out += [round(x / 1000, 3) for x in range(int(lo * 1000), 1000)]
        for c in CLOUD_RUN_WHOLE_CPUS:
            need = 4096 if c >= 6 else 2048 if c == 4 else 0
            if memory_mb >= need and memory_mb <= 4096 * c:
                out.append(float(c))
        if not out:
            raise TierError(f"{self.title} has no CPU setting for {memory_mb} MiB")
        return out

    def closest_cpu(self, memory_mb: int, target: Optional[float]) -> float:
        if target is None:  # Cloud Run's own default: 1 vCPU where allowed
            opts = self.cpu_options(memory_mb)
            return 1.0 if 1.0 in opts else opts[0]
        return super().closest_cpu(memory_mb, target)


PLATFORMS: dict[str, Platform] = {
    "aws": LambdaPlatform("aws", "AWS Lambda", f"vCPU = MB / {LAMBDA_MB_PER_VCPU}"),
    "gcf": GCFPlatform("gcf", "GCF 2nd gen", "fixed tiers: " + ", ".join(
        f"{m}->{c:g}" for m, c in GCF_TIERS.items())),
    "cloudrun": CloudRunPlatform("cloudrun", "Cloud Run",
                                 "CPU chosen: 0.08-1 in 0.001 steps (< 0.5 up to 512 MiB, < 1 up to "
                                 "1 GiB) or 1, 2, 4, 6, 8"),
    "local-lambda": LambdaPlatform("local-lambda", "local lambda profile",
                                   f"CPU quota = MB / {LAMBDA_MB_PER_VCPU}"),
    "local-gcf": GCFPlatform("local-gcf", "local gcf profile", "the GCF tier table"),
}
ALIASES = {"lambda": "aws", "aws-lambda": "aws", "gcf2": "gcf", "cloud-functions": "gcf",
           "cloud-run": "cloudrun", "run": "cloudrun"}


def platform(name: str) -> Platform:
    key = ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in PLATFORMS:
        raise BadInput(f"unknown platform {name!r}; one of {', '.join(PLATFORMS)}", field="--platforms")
    return PLATFORMS[key]


def lambda_vcpu(memory_mb: int) -> float:
    return memory_mb / LAMBDA_MB_PER_VCPU


def gcf_tier(memory_mb: int) -> int:
    """The GCF 2nd gen tier ``memory_mb`` runs in: the smallest that holds it (MB)."""
    for m in GCF_TIERS:
        if memory_mb <= m:
            return m
    raise TierError(f"GCF 2nd gen has no tier above {max(GCF_TIERS)} MB")


def gcf_tier_key(memory_mb: int) -> str:
    """The cpu-tiers table's entry of the GCF tier ``memory_mb`` runs in."""
    return f"{_GCF_PREFIX}{gcf_tier(memory_mb)}"


def gcf_vcpu(memory_mb: int) -> float:
    """The GCF 2nd gen tier's vCPU for ``memory_mb`` (the smallest tier that holds it)."""
    return GCF_TIERS[gcf_tier(memory_mb)]


def round3(x: float) -> float:
    """Round half up to 3 decimals (the precision GCF's tier table uses)."""
    return float(Decimal(repr(x)).quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))


@dataclass
class TierCell:
    platform: str
    memory_mb: int
    vcpu: Optional[float]
    error: Optional[str] = None


@dataclass
class Tier:
    memory_mb: int
    cells: list[TierCell]
    reference: str
    #: vCPU of each platform minus the reference's (None when either is missing)
    cpu_diff: dict[str, Optional[float]] = field(default_factory=dict)
    #: the same as a percentage of the reference's vCPU
    cpu_diff_pct: dict[str, Optional[float]] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return all(c.vcpu is not None for c in self.cells)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["complete"] = self.complete
        return d


def derive_tiers(platforms: list[str], memory_mb: list[int]) -> list[Tier]:
    """One tier per memory size: memory identical, CPU as close to the first platform's as each
    other platform allows; the CPU difference (absolute and relative) per platform."""
    if not platforms:
        raise BadInput("give at least one platform", field="--platforms")
    plats = [platform(p) for p in platforms]
    names = [p.name for p in plats]
    if len(set(names)) != len(names):
        raise BadInput(f"a platform is listed twice: {', '.join(platforms)}", field="--platforms")
    tiers = []
    for mem in memory_mb:
        if not isinstance(mem, int) or mem <= 0:
            raise BadInput(f"memory sizes are positive whole MB (got {mem!r})", field="--memory")
        ref = plats[0]
        try:
            ref_cpu: Optional[float] = ref.closest_cpu(mem, None)
            cells = [TierCell(ref.name, mem, ref_cpu)]
        except TierError as exc:
            ref_cpu = None
            cells = [TierCell(ref.name, mem, None, str(exc))]
        diff: dict[str, Optional[float]] = {}
        pct: dict[str, Optional[float]] = {}
        for p in plats[1:]:
            try:
                c = p.closest_cpu(mem, ref_cpu)
                cells.append(TierCell(p.name, mem, c))
            except TierError as exc:
                c = None
                cells.append(TierCell(p.name, mem, None, str(exc)))
            if c is None or ref_cpu is None:
                diff[p.name] = pct[p.name] = None
            else:
                diff[p.name] = c - ref_cpu
                pct[p.name] = 100.0 * (c - ref_cpu) / ref_cpu
        tiers.append(Tier(mem, cells, ref.name, diff, pct))
    return tiers


def tiers_json(tiers: list[Tier], platforms: list[str]) -> dict:
    plats = [platform(p) for p in platforms]
    return {
        "reference": plats[0].name,
        "platforms": [{"name": p.name, "title": p.title, "cpu_rule": p.rule} for p in plats],
        "memory_unit": "MB as the platforms mean it (MiB)",
        "tiers": [
            {"memory_mb": t.memory_mb, "complete": t.complete,
             "vcpu": {c.platform: (round3(c.vcpu) if c.vcpu is not None else None) for c in t.cells},
             "vcpu_exact": {c.platform: c.vcpu for c in t.cells},
             "errors": {c.platform: c.error for c in t.cells if c.error},
             "cpu_diff": {k: (round3(v) if v is not None else None) for k, v in t.cpu_diff.items()},
             "cpu_diff_pct": {k: (round(v, 1) if v is not None else None)
                              for k, v in t.cpu_diff_pct.items()}}
            for t in tiers
        ],
    }
