"""The cost model: what one invocation costs on each platform, with every term shown.

AWS Lambda (table ``aws_lambda``)::

    billed_ms   = ceil(init_ms + duration_ms)            # 1 ms granularity (REPORT's Billed Duration);
                                                         # init_ms: a cold start's Init Duration, billed
                                                         # while the table's init_billed is 1
    GB          = memory_mb / 1024                       # AWS's "MB" is MiB; 1 GB = 1024 MB
    compute     = GB x billed_ms / 1000 x price[arch]    # $0.0000166667 (x86_64) / $0.0000133334 (arm64) per GB-s
    request     = $0.20 / 1,000,000
    ephemeral   = max(0, ephemeral_mb - 512) / 1024 x billed_ms / 1000 x $0.0000000309

GCF 2nd gen / Cloud Run, request-based (table ``gcp_functions``)::

    billed_s    = ceil((init_s + duration_s) / 0.1) x 0.1  # 100 ms granularity; init_s as above
    compute     = vcpu x billed_s x $0.000024 + memory_mb / 1024 x billed_s x $0.0000025
    request     = $0.40 / 1,000,000

with vcpu = the GCF tier's for the memory (128 MB -> 0.083 ...) unless given (Cloud Run's limit).
Storage: S3 PUT/COPY/POST/LIST $0.005 and GET $0.0004 per 1,000; GCS Class A $0.005 and Class B
$0.0004 per 1,000; DynamoDB $0.625 / $0.125 per million write / read request units; transfer per GB.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Optional

from faascope.cost.pricing import Pricing
from faascope.errors import BadInput
from faascope.tiers import gcf_vcpu

#: the platforms the model prices, and the names that mean them
PLATFORM_ALIASES = {
    "aws_lambda": "aws_lambda", "aws": "aws_lambda", "lambda": "aws_lambda",
    "local-lambda": "aws_lambda", "unlimited": "aws_lambda",
    "gcf": "gcf", "gcp": "gcf", "gcf2": "gcf", "gcp_functions": "gcf", "local-gcf": "gcf",
    "cloudrun": "cloudrun", "cloud_run": "cloudrun", "cloud-run": "cloudrun",
}
PLATFORM_TITLES = {"aws_lambda": "AWS Lambda", "gcf": "GCF 2nd gen", "cloudrun": "Cloud Run"}
#: which price table prices which platform
PLATFORM_TABLE = {"aws_lambda": "aws_lambda", "gcf": "gcp_functions", "cloudrun": "gcp_functions"}
#: the cloud whose storage prices apply to a platform's requests
PLATFORM_CLOUD = {"aws_lambda": "aws", "gcf": "gcp", "cloudrun": "gcp"}


def platform_key(name: str) -> str:
    key = PLATFORM_ALIASES.get(str(name).strip().lower())
    if key is None:
        raise BadInput(f"no cost model for platform {name!r}; one of "
                       f"{', '.join(sorted(set(PLATFORM_ALIASES.values())))}", field="platform")
    return key


@dataclass
class InvocationCost:
    platform: str
    billed_s: float
    compute: float
    request: float
    ephemeral: float = 0.0
    storage: float = 0.0
    #: Lambda: GB-s; GCF/Cloud Run: GiB-s of memory
    memory_gb_s: float = 0.0
    vcpu_s: float = 0.0

    @property
    def total(self) -> float:
        return self.compute + self.request + self.ephemeral + self.storage

    def as_dict(self) -> dict:
        d = asdict(self)
        d["total"] = self.total
        return d


def round_up(seconds: float, granularity_ms: float) -> float:
    """``seconds`` rounded up to the billing granularity (float noise below 1 ns is ignored)."""
    if seconds <= 0:
        return 0.0
    g = granularity_ms / 1000.0
    units = seconds / g
    n = math.ceil(units - 1e-9)
    return n * g


def round_up_many(seconds, granularity_ms: float):
    """:func:`round_up` of an array (the same rule, vectorised, for pricing many invocations)."""
    import numpy as np

    s = np.asarray(seconds, dtype=float)
    g = granularity_ms / 1000.0
    return np.where(s > 0, np.ceil(s / g - 1e-9) * g, 0.0)


def lambda_gb(memory_mb: float, pricing: Optional[Pricing] = None) -> float:
    """AWS's GB of a MemorySize: MB / 1024 (128 MB = 0.125 GB)."""
    per = pricing["aws_lambda"]["mb_per_gb"] if pricing else 1024.0
    return memory_mb / per


def billable_seconds(table, duration_s, init_s=0.0):
    """The seconds a price table bills before rounding: the duration plus, where the table's
    ``init_billed`` is 1, a cold start's init (Lambda: the REPORT line's Init Duration); floats
    or numpy arrays. The
    table key is the rule's one source (the local platform's REPORT line is checked against
    it: agent/platform/billing.go)."""
    return duration_s + (init_s if table["init_billed"] else 0.0)


def lambda_cost(memory_mb: float, duration_s: float, *, arch: str = "x86_64",
                ephemeral_mb: float = 512, billed: bool = False, init_s: float = 0.0,
                pricing: Optional[Pricing] = None) -> InvocationCost:
    """One Lambda invocation. ``billed=True``: ``duration_s`` is already the billed duration
    (REPORT's Billed Duration, init included); otherwise ``init_s`` (a cold start's Init
    Duration) is added as the table's ``init_billed`` says and the sum rounded up to the
    table's granularity (1 ms)."""
    p = (pricing or Pricing())["aws_lambda"]
    if arch not in ("x86_64", "arm64"):
        raise BadInput(f"arch must be x86_64 or arm64 (got {arch!r})", field="arch")
    billed_s = duration_s if billed else round_up(billable_seconds(p, duration_s, init_s),
                                                  p["granularity_ms"])
    gb = memory_mb / p["mb_per_gb"]
    gb_s = gb * billed_s
    eph_gb = max(0.0, ephemeral_mb - p["ephemeral_free_mb"]) / p["mb_per_gb"]
    return InvocationCost(
        platform="aws_lambda", billed_s=billed_s, compute=gb_s * p[f"gb_second_{arch}"],
        request=p["requests_per_million"] / 1e6, ephemeral=eph_gb * billed_s * p["ephemeral_gb_second"],
        memory_gb_s=gb_s)


def gcf_cost(memory_mb: float, duration_s: float, *, vcpu: Optional[float] = None,
             platform: str = "gcf", init_s: float = 0.0,
             pricing: Optional[Pricing] = None) -> InvocationCost:
    """One GCF 2nd gen / Cloud Run (request-based) invocation; ``vcpu`` defaults to the GCF
    tier's; ``init_s`` (a cold start's init) is billed as the table's ``init_billed`` says."""
    p = (pricing or Pricing())["gcp_functions"]
    cpu = vcpu if vcpu is not None else gcf_vcpu(int(memory_mb))
    billed_s = round_up(billable_seconds(p, duration_s, init_s), p["granularity_ms"])
    gib_s = memory_mb / p["mb_per_gib"] * billed_s
    return InvocationCost(
        platform=platform, billed_s=billed_s,
        compute=cpu * billed_s * p["vcpu_second"] + gib_s * p["gib_second"],
        request=p["requests_per_million"] / 1e6, memory_gb_s=gib_s, vcpu_s=cpu * billed_s)


def invocation_cost(platform: str, memory_mb: float, duration_s: float, *, arch: str = "x86_64",
                    ephemeral_mb: float = 512, vcpu: Optional[float] = None, billed: bool = False,
                    init_s: float = 0.0, pricing: Optional[Pricing] = None) -> InvocationCost:
    """One invocation on ``platform``; ``init_s``: a cold start's init, billed as the platform's
    table says (``init_billed``), ignored when ``duration_s`` is already ``billed``."""
    key = platform_key(platform)
    if key == "aws_lambda":
        return lambda_cost(memory_mb, duration_s, arch=arch, ephemeral_mb=ephemeral_mb,
                           billed=billed, init_s=init_s, pricing=pricing)
    if key == "cloudrun" and vcpu is None:
        vcpu = 1.0
    return gcf_cost(memory_mb, duration_s, vcpu=vcpu, platform=key, init_s=init_s, pricing=pricing)


def dynamodb_units(item_bytes: int, *, read: bool, consistent: bool = False,
                   pricing: Optional[Pricing] = None) -> float:
    """Request units one on-demand request for an item of ``item_bytes`` (attribute names plus
    values) consumes: writes and deletes 1 per started KB (1,024 B), reads 1 per started 4 KB,
    half that when eventually consistent (table ``aws_dynamodb``); at least one unit's worth."""
    p = (pricing or Pricing())["aws_dynamodb"]
    unit = p["read_unit_bytes"] if read else p["write_unit_bytes"]
    units = max(1, math.ceil(item_bytes / unit))
    if read and not consistent:
        return units * p["eventually_consistent_read_units"]
    return float(units)


def storage_cost(service: str, *, puts: int = 0, gets: int = 0, bytes_out_internet: int = 0,
                 read_units: int = 0, write_units: int = 0, bytes_read: int = 0,
                 bytes_written: int = 0, pricing: Optional[Pricing] = None) -> dict[str, float]:
    """Request and transfer cost of storage used by invocations (``s3``, ``gcs``, ``dynamodb``,
    ``efs``). Sizes in bytes; GB = 10**9 bytes as the storage price lists mean it."""
    pr = pricing or Pricing()
    gb_out = bytes_out_internet / 1e9
    if service == "s3":
        p = pr["aws_s3"]
        d = {"requests": puts / 1000 * p["put_per_1000"] + gets / 1000 * p["get_per_1000"],
             "transfer": gb_out * p["transfer_internet_out_gb"]}
    elif service == "gcs":
        p = pr["gcp_storage"]
        d = {"requests": puts / 1000 * p["class_a_per_1000"] + gets / 1000 * p["class_b_per_1000"],
             "transfer": gb_out * p["transfer_internet_out_gb"]}
    elif service == "dynamodb":
        p = pr["aws_dynamodb"]
        d = {"requests": write_units / 1e6 * p["write_request_units_per_million"]
             + read_units / 1e6 * p["read_request_units_per_million"], "transfer": 0.0}
    elif service == "efs":
        p = pr["aws_efs"]
        d = {"requests": 0.0, "transfer": bytes_read / 1e9 * p["elastic_read_gb"]
             + bytes_written / 1e9 * p["elastic_write_gb"]}
    else:
        raise BadInput(f"no cost model for storage {service!r}; one of s3, gcs, dynamodb, efs",
                       field="storage")
    d["total"] = d["requests"] + d["transfer"]
    return d
