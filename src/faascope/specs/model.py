"""The experiment spec: pydantic v2 models with ``extra="forbid"``.

A spec names a provider, a base function configuration, a base workload, the factors (spec fields
with lists of levels), optional conditional overrides and the design. The base function and
workload may leave out what the factors supply; every run cell (base + its levels + overrides) is
validated in full by :mod:`faascope.specs.loader`. The workload models are not written here: they
are generated from the agent's request schema (:mod:`faascope.specs.workloads`).
"""
from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal, Optional, Union
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from faascope.units import parse_duration, parse_memory_mb, parse_size
from faascope.cost.pricing import Pricing
from faascope.errors import BadInput
from faascope.provider_kinds import PROVIDER_KINDS
from faascope.specs.lambda_quotas import UNZIPPED_MAX_BYTES
from faascope.specs.workloads import WORKLOAD_MODELS, WorkloadModel


def _size(v: Any) -> int:
    return parse_size(v)


def _memory(v: Any) -> int:
    return parse_memory_mb(v)


def _duration(v: Any) -> float:
    return parse_duration(v)


#: a size in bytes: an int, or a string such as 512B, 10KB, 128KiB, 1GiB (see faascope.units)
Size = Annotated[int, BeforeValidator(_size)]
#: Lambda's "MB", which is MiB: 128 means 134,217,728 bytes; also 128MiB or 2GiB
MemoryMB = Annotated[int, BeforeValidator(_memory)]
#: seconds, or a string such as 30s, 15m, 1h, 1d
Duration = Annotated[float, BeforeValidator(_duration)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


# --------------------------------------------------------------------------------------------
# provider
# --------------------------------------------------------------------------------------------
class CommonProviderSettings(Strict):
    #: functions are named ``<function_prefix>-<spec name>-<config hash>``
    function_prefix: str = Field("faascope", pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,20}$")
    #: keep the deployed functions when the campaign completes (default: delete them)
    keep_functions: bool = False
    #: total attempts per invocation by the boto3 client (1 = never retry; every retry is recorded)
    max_attempts: int = Field(1, ge=1, le=10)
    #: seconds to wait for an invocation's reply (must exceed the function timeout)
    read_timeout_s: float = Field(960.0, gt=0)
    connect_timeout_s: float = Field(10.0, gt=0)
    #: ``per_config``: one function per distinct configuration (memory, ephemeral, timeout,
    #: profile, arch, image size) so that a randomised order does not turn every invocation cold;
    #: ``shared``: one function per (profile, arch, image size), its memory/ephemeral/timeout
    #: changed with UpdateFunctionConfiguration whenever the next run needs another one (each
    #: change retires warm instances, as on AWS).
    functions: Literal["per_config", "shared"] = "per_config"
    #: price-table overrides for the cost estimate: {versions: {table: version}, <table>: {<price>:
    #: number}} (see docs/cost.md)
    pricing: Optional[dict[str, Any]] = None

    @field_validator("pricing")
    @classmethod
    def _pricing(cls, v: Optional[dict]) -> Optional[dict]:
        if v is not None:
            try:
                Pricing(v, field_prefix="pricing")
            except BadInput as exc:
                raise ValueError(exc.message) from None
        return v


class LocalProviderSettings(CommonProviderSettings):
    #: the platform's data directory (default: faascope's own)
    data_dir: Optional[str] = None
    #: use an already running platform (or another Lambda-API endpoint) instead of starting one
    endpoint_url: Optional[str] = None
    #: seconds an idle instance stays warm (default: the platform's, 5 minutes)
    keep_alive_s: Optional[int] = Field(None, ge=0)


class AWSStorageSettings(Strict):
    #: S3 bucket for object workloads; created (tagged) when create_bucket is true
    s3_bucket: Optional[str] = Field(None, pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
    s3_prefix: str = "faascope/"
    create_bucket: bool = False
    #: S3-compatible endpoint for the storage clients (e.g. a local server); default: AWS
    s3_endpoint_url: Optional[str] = None
    #: bucket (in the functions' region) that packages over Lambda's 50 MB direct-upload limit
    #: are deployed through (uploaded, named in CreateFunction, deleted once the function has
    #: them); default: s3_bucket, under s3_prefix
    code_bucket: Optional[str] = Field(None, pattern=r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
    #: DynamoDB table for key-value workloads (key attribute "pk", string); created when create_table
    dynamodb_table: Optional[str] = Field(None, pattern=r"^[A-Za-z0-9_.-]{3,255}$")
    create_table: bool = False
    #: EFS access point mounted at efs_mount_path; needs the function in a VPC (subnets, groups)
    efs_access_point_arn: Optional[str] = Field(None, pattern=r"^arn:aws[a-zA-Z-]*:elasticfilesystem:.+$")
    efs_mount_path: str = Field("/mnt/efs", pattern=r"^/mnt/[A-Za-z0-9_.-]+$")
    subnet_ids: list[str] = Field(default_factory=list)
    security_group_ids: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _efs_needs_vpc(self) -> "AWSStorageSettings":
        if self.efs_access_point_arn and not (self.subnet_ids and self.security_group_ids):
            raise ValueError("efs_access_point_arn needs subnet_ids and security_group_ids (a "
                             "Lambda function reaches EFS only from a VPC)")
        return self


class AWSProviderSettings(CommonProviderSettings):
    region: str = "us-east-1"
    #: the execution role's ARN (required to create functions)
    role: str = Field(..., pattern=r"^arn:aws[a-zA-Z-]*:iam::\d{12}:role/.+$")
    #: a named AWS credentials profile (default: the standard credential chain)
    credentials_profile: Optional[str] = None
    endpoint_url: Optional[str] = None
    #: S3, DynamoDB and EFS for the storage workloads (passed to the function; see docs/providers.md)
    storage: AWSStorageSettings = Field(default_factory=AWSStorageSettings)
    #: extra tags on everything faascope creates (faascope:* tags are its own)
    tags: dict[str, str] = Field(default_factory=dict)
    #: read the log tail (REPORT line: billed duration, init duration, max memory used)
    log_tail: bool = True


class GCPStorageSettings(Strict):
    gcs_bucket: Optional[str] = Field(None, pattern=r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$")
    gcs_prefix: str = "faascope/"


class GCPProviderSettings(CommonProviderSettings):
    #: the Google Cloud project id
    project: str = Field(..., pattern=r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")
    region: str = "us-central1"
    #: cloud_run: a Cloud Run service from ``image``; cloud_functions: a 2nd gen function from
    #: ``source`` (a zip in GCS you prepared)
    service: Literal["cloud_run", "cloud_functions"] = "cloud_run"
    #: container image with the agent as its entrypoint (Cloud Run), e.g. REGION-docker.pkg.dev/P/R/agent:tag
    image: Optional[str] = None
    #: Cloud Functions source: {bucket, object}, with entry_point and runtime
    source: Optional[dict[str, str]] = None
    entry_point: str = "Faascope"
    runtime: str = "go122"
    #: endpoints you deployed yourself: one URL, or {"<memory_mb>": URL}; nothing is deployed then
    urls: Optional[Union[str, dict[str, str]]] = None
    #: CPU per memory: "gcf" (the GCF 2nd gen tier table), "match_lambda" (closest to MB/1769 that
    #: Cloud Run allows), or a number of vCPUs
    cpu: Union[Literal["gcf", "match_lambda"], float] = "gcf"
    #: runtime service account of the function (default: the project's default)
    service_account: Optional[str] = None
    #: id_token: an ID token for the service URL from google-auth (the standard credential chain)
    auth: Literal["id_token", "none"] = "id_token"
    max_instances: int = Field(100, ge=1, le=1000)
    #: default: gen1 below 512 MiB (gen2 needs 512 MiB), gen2 otherwise
    execution_environment: Optional[Literal["gen1", "gen2"]] = None
    storage: GCPStorageSettings = Field(default_factory=GCPStorageSettings)
    labels: dict[str, str] = Field(default_factory=dict)


class HTTPProviderSettings(CommonProviderSettings):
    #: the agents' URLs: strings, or {url, memory_mb?, name?} (Knative, OpenFaaS, self-hosted …)
    endpoints: list[Union[str, dict[str, Any]]] = Field(..., min_length=1)
    #: round_robin: every invocation the next endpoint; per_cell: each cell keeps one endpoint
    #: (the one whose memory_mb matches, else the cells take turns); per_function: likewise per
    #: function configuration
    routing: Literal["round_robin", "per_cell", "per_function"] = "round_robin"
    #: request headers; values may name environment variables as ${VAR} (never recorded)
    headers: dict[str, str] = Field(default_factory=dict)
    #: price the runs as this platform (aws_lambda, gcf, cloudrun) in cost estimates
    price_as: Optional[Literal["aws_lambda", "gcf", "cloudrun"]] = None


#: each provider kind's settings model, as its descriptor names it (faascope.provider_kinds)
PROVIDER_SETTINGS: dict[str, type[BaseModel] | None] = {
    name: {m.__name__: m for m in (LocalProviderSettings, AWSProviderSettings, GCPProviderSettings,
                                   HTTPProviderSettings)}[kind.settings_model]
    for name, kind in PROVIDER_KINDS.items()
}


class ProviderSpec(Strict):
    kind: Literal["local", "aws", "gcp", "http"]
    settings: dict[str, Any] = Field(default_factory=dict)

    def parsed_settings(self) -> Any:
        model = PROVIDER_SETTINGS.get(self.kind)
        return model.model_validate(self.settings) if model else dict(self.settings)


#: a deployment's name: a level of the ``deployment`` factor, recorded with every invocation
DEPLOYMENT_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$"


class DeploymentSpec(Strict):
    """One place a campaign runs its functions: a provider (kind and settings) and the function
    fields that deployment fixes (a local profile, an architecture). A spec with ``deployments``
    compares them as the levels of its ``deployment`` factor (docs/specs.md)."""

    #: the provider; default: ``provider.kind``
    kind: Optional[Literal["local", "aws", "gcp", "http"]] = None
    #: the provider's settings; with the provider's kind they are merged over
    #: ``provider.settings``, with another kind only the common ones (function_prefix,
    #: keep_functions, max_attempts, timeouts, pricing) are inherited
    settings: dict[str, Any] = Field(default_factory=dict)
    #: function fields this deployment sets (``profile`` on local deployments, ``arch`` …)
    function: dict[str, Any] = Field(default_factory=dict)
    description: Optional[str] = None


# --------------------------------------------------------------------------------------------
# function
# --------------------------------------------------------------------------------------------
#: the stand-ins a user's function may ask the local provider for (docs/user-functions.md)
CODE_USES = ("s3", "dynamodb", "redis")


class CodeSpec(Strict):
    """A user's own function (docs/user-functions.md): its package, runtime and handler, in
    place of faascope's agent. The workload is then ``kind: invoke`` (the event to send)."""
    #: a directory (zipped as it is, its files at the package's root) or a .zip file, relative
    #: to the spec file; made absolute when the spec is loaded
    path: str = Field(..., min_length=1)
    #: Lambda's runtime identifier: a managed one (python3.12) or a custom one (provided.al2023,
    #: with a ``bootstrap`` in the package)
    runtime: str = Field(..., pattern=r"^[a-z0-9.]{3,32}$")
    #: Lambda's handler (``app.handler``: function ``handler`` of module ``app``)
    handler: str = Field(..., min_length=1, max_length=128, pattern=r"^[^\s]+$")
    #: environment variables of the function (names as Lambda allows them)
    environment: dict[str, str] = Field(default_factory=dict)
    #: local provider only: the stand-ins the function talks to; it finds them through the
    #: environment (AWS_ENDPOINT_URL_S3 and FAASCOPE_S3_BUCKET for s3 …); ignored elsewhere
    uses: list[Literal[CODE_USES]] = Field(default_factory=list)  # type: ignore[valid-type]

    @field_validator("environment")
    @classmethod
    def _env_names(cls, v: dict[str, str]) -> dict[str, str]:
        import re
        for k in v:
            if not re.fullmatch(r"[a-zA-Z][a-zA-Z0-9_]*", k):
                raise ValueError(f"{k!r} is not a valid environment variable name "
                                 "(a letter, then letters, digits and _)")
        return v


class FunctionSpec(Strict):
    #: Lambda's memory "MB" (= MiB); CPU follows memory on every platform
    memory_mb: MemoryMB = Field(128, ge=128, le=10240)
    #: /tmp size in Lambda's "MB" (= MiB)
    ephemeral_mb: MemoryMB = Field(512, ge=512, le=10240)
    timeout_s: int = Field(300, ge=1, le=900)
    arch: Literal["x86_64", "arm64"] = "x86_64"
    #: local platform only: which platform's limits the sandbox imitates (default lambda)
    profile: Optional[Literal["lambda", "gcf", "unlimited"]] = None
    #: pad the deployment package to this size (cold starts grow with image size); packages
    #: over Lambda's 50 MB direct-upload limit are deployed through S3, none may exceed its
    #: 250 MB unzipped limit (faascope.specs.lambda_quotas)
    image_size: Optional[Size] = Field(None, ge=0, le=UNZIPPED_MAX_BYTES)
    #: local platform only: the sandbox's network token bucket, modelled on Firecracker's rate
    #: limiter (docs/platform.md): "none", "lambda" (Lambda's measured burst and baseline), or
    #: "size=B,refill_ms=N[,one_time_burst=B][,peak=B/s]"; fixed when the function is created
    net_shape: Optional[str] = Field(
        None, pattern=r"^(none|lambda|size=\d+,refill_ms=\d+(,one_time_burst=\d+)?(,peak=\d+)?)$")
    #: a user's own function instead of faascope's agent (with ``workload: {kind: invoke}``)
    code: Optional[CodeSpec] = None


# --------------------------------------------------------------------------------------------
# workloads (the agent's request, docs/agent.md): generated from agent-request.schema.json
# --------------------------------------------------------------------------------------------
NoopWorkload = WORKLOAD_MODELS["noop"]
#: the workload kind of a user's own function (``function.code``): not the agent's
INVOKE_KIND = "invoke"
SpinWorkload = WORKLOAD_MODELS["spin"]
FileIOWorkload = WORKLOAD_MODELS["fileio"]


class InvokeWorkload(WorkloadModel):
    """A user's own function's invocation: the event sent as it is (``payload``, any JSON).
    Not an agent request: the agent's schema does not know this kind, so it has no
    schema problems and its request is the payload itself."""
    kind: Literal["invoke"]
    #: the event (Lambda's Invoke ``Payload``): any JSON value; a factor may vary it
    payload: Any = Field(default_factory=dict)

    def agent_request(self) -> Any:
        return self.payload

    def schema_problems(self) -> list[tuple[str, str]]:
        import json
        try:
            json.dumps(self.payload, allow_nan=False)
        except ValueError as exc:
            return [("payload", f"must be JSON: {exc}")]
        return []


#: the workload kinds a spec may name: the agent's (its request schema) and a user's function's
SPEC_WORKLOADS: dict[str, type[WorkloadModel]] = {**WORKLOAD_MODELS, INVOKE_KIND: InvokeWorkload}


def agent_request(workload: WorkloadModel) -> dict:
    """The invocation payload: for the agent ``{"workload": {...}}`` (docs/agent.md); for a
    user's function (``kind: invoke``) its event as it is."""
    if isinstance(workload, InvokeWorkload):
        return workload.payload
    return {"workload": workload.agent_request()}


# --------------------------------------------------------------------------------------------
# design
# --------------------------------------------------------------------------------------------
class BlockingSpec(Strict):
    #: run the design in this many blocks; replication r belongs to block r mod blocks
    blocks: int = Field(..., ge=1, strict=True)
    #: block b starts no earlier than the campaign's start + b * interval
    interval: Duration = Field(..., gt=0)


def _instant(v: Any) -> Any:
    """An ISO 8601 date and time with its UTC offset (``2026-11-27T00:00:00Z``); one without an
    offset is ambiguous across machines and is refused."""
    if isinstance(v, str):
        try:
            v = datetime.fromisoformat(v.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"cannot read {v!r} as a date and time; write ISO 8601 with its "
                             "offset, e.g. 2026-11-27T09:00:00+01:00 or 2026-11-27T08:00:00Z")
    if isinstance(v, datetime) and v.tzinfo is None:
        raise ValueError(f"{v.isoformat()} has no UTC offset; add one (Z for UTC, or +01:00)")
    return v


#: a date and time with its UTC offset
Instant = Annotated[datetime, BeforeValidator(_instant)]


class ScheduleSpec(Strict):
    """A periodic campaign (docs/schedules.md): every cell runs once (``design.replications``
    times) in each slot; slots are due every ``every`` seconds or at the times of a cron
    expression, from ``start`` until ``until``, for ``duration`` or for ``slots`` slots."""
    #: the period between slots (e.g. 1m, 2s); or give ``cron``
    every: Optional[Duration] = Field(None, gt=0, le=366 * 86400)
    #: a five-field cron expression (minute hour day-of-month month day-of-week), in ``tz``
    cron: Optional[str] = None
    #: the time zone of ``cron`` (IANA name)
    tz: str = "UTC"
    #: the first slot (default: the campaign's creation for ``every``; the next cron time)
    start: Optional[Instant] = None
    #: how long slots are due for, from the start (slots at start + k*every < start + duration)
    duration: Optional[Duration] = Field(None, gt=0, le=3660 * 86400)
    #: no slot is due at or after this instant
    until: Optional[Instant] = None
    #: at most this many slots
    slots: Optional[int] = Field(None, ge=1, le=1_000_000, strict=True)
    #: a slot that cannot start within ``grace`` of its due time: ``miss`` records it as missed
    #: (an event, durable); ``run`` runs it late, still one period after the slot before
    late: Literal["miss", "run"] = "miss"
    #: how late a slot may start and still run (default: half the shortest gap between slots)
    grace: Optional[Duration] = Field(None, ge=0)

    @field_validator("cron")
    @classmethod
    def _cron(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and (len(v.split()) != 5 or not croniter.is_valid(v)):
            raise ValueError(f"{v!r} is not a five-field cron expression (minute hour "
                             "day-of-month month day-of-week, e.g. '*/15 * * * *')")
        return v

    @field_validator("tz")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {v!r}; use an IANA name such as UTC or "
                             "Europe/Berlin") from None
        return v

    @model_validator(mode="after")
    def _shape(self) -> "ScheduleSpec":
        if (self.every is None) == (self.cron is None):
            raise ValueError("give exactly one of every (a period) and cron (an expression)")
        if self.duration is None and self.until is None and self.slots is None:
            raise ValueError("say when the schedule ends: duration, until or slots")
        if self.start is not None and self.until is not None and self.until <= self.start:
            raise ValueError("until must be after start")
        return self


class DesignSpec(Strict):
    type: Literal["full_factorial", "two_level"] = "full_factorial"
    replications: int = Field(1, ge=1, le=1_000_000, strict=True)
    #: seed of the run order; a random one is drawn and recorded when absent
    seed: Optional[int] = Field(None, ge=0, lt=2**63, strict=True)
    randomize: bool = True
    #: constraints each run cell must satisfy; cells that break one are excluded
    rules: list[str] = Field(default_factory=list)
    #: warm-up invocations per cell (per block), recorded with warmup = true, run just before
    #: the cell's first measured invocation
    warmup: int = Field(0, ge=0, le=1000, strict=True)
    #: false: never force cold starts; true: a fresh instance for each cell's first invocation
    #: (per block); "every": force a cold start before every measured invocation
    cold: Any = False
    blocking: Optional[BlockingSpec] = None
    #: run the design periodically: every cell (design.replications times) in every slot
    schedule: Optional[ScheduleSpec] = None

    @field_validator("cold", mode="before")
    @classmethod
    def _cold(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return v
        if isinstance(v, str) and v.lower() in ("every", "true", "false"):
            return {"every": "every", "true": True, "false": False}[v.lower()]
        raise ValueError(f"must be false, true or 'every' (got {v!r})")

    @property
    def cold_mode(self) -> str:
        return {False: "none", True: "cell", "every": "every"}[self.cold]


# --------------------------------------------------------------------------------------------
# load: bursts, arrival processes and staggering (docs/concurrency.md)
# --------------------------------------------------------------------------------------------
class StaggerSpec(Strict):
    #: invocations launched together in one batch
    batch_size: int = Field(..., ge=1, le=1_000_000, strict=True)
    #: time between the starts of consecutive batches (0 = all at once)
    delay: Duration = Field(..., ge=0, le=86400)


class ArrivalSpec(Strict):
    #: ``burst``: every member as close together as the client allows (or as ``stagger`` says);
    #: ``fixed``: member i at i * interval; ``exponential``: gaps of shift + Exp(mean = interval),
    #: seeded; ``trace``: offsets (or gaps) in seconds from a file, one number a line
    process: Literal["burst", "fixed", "exponential", "trace"] = "burst"
    interval: Optional[Duration] = Field(None, ge=0, le=86400)
    #: the constant part of a shifted exponential gap
    shift: Duration = Field(0.0, ge=0, le=86400)
    #: seed of the exponential gaps (burst k draws with seed + k); drawn and recorded when absent
    seed: Optional[int] = Field(None, ge=0, lt=2**63, strict=True)
    #: trace file (relative to the spec file): one number a line, '#' comments
    trace: Optional[str] = None
    trace_format: Literal["offsets", "gaps"] = "offsets"

    def missing(self) -> Optional[str]:
        """What a run cell's arrival process still lacks (the interval may be a factor, so this
        is checked per cell, not here)."""
        if self.process in ("fixed", "exponential") and self.interval is None:
            return (f"process {self.process} needs interval (the "
                    f"{'gap' if self.process == 'fixed' else 'mean of the exponential part'})")
        if self.process == "trace" and not self.trace:
            return "process trace needs trace: a file with one offset a line"
        return None


class ErrorBudgetSpec(Strict):
    #: stop the campaign when more than this fraction of a burst fails (throttles count) …
    max_failed_fraction: float = Field(0.5, ge=0, le=1)
    #: … and at least this many of its members failed (one failure in a burst of 1 is no trend)
    min_failed: int = Field(3, ge=1, strict=True)
    #: a staggered or spaced burst stops sending once the failures already exceed the budget
    stop_sending: bool = True


class LoadSpec(Strict):
    #: invocations per burst (each replication of a cell is one burst)
    burst_size: int = Field(1, ge=1, le=100_000, strict=True)
    arrival: ArrivalSpec = Field(default_factory=ArrivalSpec)
    #: launch the burst in batches of batch_size with delay between batch starts
    stagger: Optional[StaggerSpec] = None
    #: copies of the function, invoked side by side (members go round robin): parallel endpoints
    functions: int = Field(1, ge=1, le=1000, strict=True)
    #: how each burst starts: ``warm`` (as the platform has it, after the warm pool if any),
    #: ``cold`` (retire warm instances before each burst: environment change, AWS-portable),
    #: ``fresh`` (a newly created function for each burst), ``expire`` (wait for the keep-alive,
    #: provider.settings.keep_alive_s, to evict instances before each burst)
    start: Literal["warm", "cold", "fresh", "expire"] = "warm"
    #: warm-up invocations sent together before each warm burst (recorded as warm-ups), to have
    #: this many warm instances; "burst" = burst_size; not used when start is not warm
    warm_pool: Union[int, Literal["burst"]] = 0
    #: pause between consecutive bursts
    pause: Duration = Field(0.0, ge=0, le=86400)
    error_budget: ErrorBudgetSpec = Field(default_factory=ErrorBudgetSpec)
    #: open this many connections before the first burst (DryRun invokes), so connection set-up
    #: is not in the dispatch spread; "burst" = burst_size
    preconnect: Union[int, Literal["burst"]] = "burst"
    #: a workload field set to each member's index (burst * burst_size + member), e.g. ``index``
    #: so that concurrent object/kv/sharedfs invocations use distinct keys or files; the text
    #: ``{index}`` in any string field of the workload is replaced likewise
    member_index: Optional[str] = Field(None, pattern=r"^[a-z_][a-z0-9_]{0,40}$")

    @field_validator("warm_pool", "preconnect", mode="before")
    @classmethod
    def _count(cls, v: Any) -> Any:
        # as strict as the other counts: true is not 1, nor "3" 3 (pydantic's lax int would)
        if isinstance(v, bool) or (isinstance(v, str) and v != "burst") or \
                not isinstance(v, (int, str)):
            raise ValueError(f"must be a whole number or 'burst' (got {v!r})")
        return v

    @field_validator("warm_pool", "preconnect")
    @classmethod
    def _nonneg(cls, v: Any) -> Any:
        if isinstance(v, int) and not 0 <= v <= 100_000:
            raise ValueError(f"must be between 0 and 100000 or 'burst' (got {v})")
        return v

    @model_validator(mode="after")
    def _combos(self) -> "LoadSpec":
        if self.stagger is not None and self.arrival.process != "burst":
            raise ValueError("stagger needs arrival.process: burst (the batches are the arrival "
                             "process)")
        return self


class Override(Strict):
    #: a rule-style condition over the cell's values, e.g. "op == 'read'"
    when: str
    #: fields to set when it holds (factor-style names: direct, prepare, memory, workload.path …)
    set: dict[str, Any]


class Spec(Strict):
    name: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
    description: Optional[str] = None
    provider: ProviderSpec
    #: several deployments (providers, regions, profiles) compared within one campaign, as the
    #: levels of the ``deployment`` factor; absent: every cell runs on ``provider``
    deployments: dict[str, DeploymentSpec] = Field(default_factory=dict)
    function: FunctionSpec = Field(default_factory=FunctionSpec)
    workload: dict[str, Any]
    factors: dict[str, list[Any]] = Field(default_factory=dict)
    overrides: list[Override] = Field(default_factory=list)
    design: DesignSpec = Field(default_factory=DesignSpec)
    #: bursts, arrival process and staggering; absent = one invocation at a time
    load: Optional[LoadSpec] = None
