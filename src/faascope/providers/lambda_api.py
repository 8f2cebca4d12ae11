"""The boto3 Lambda provider: the one code path for AWS Lambda and for the local platform.

Only ``endpoint_url`` (and the credentials) differ between the two. Measurements are honest about
the client:

- the invoke client has an explicit retry policy, ``Config(retries={"total_max_attempts": N,
  "mode": "standard"})`` with N = ``provider.settings.max_attempts`` (default 1: never retry).
  ``total_max_attempts`` counts the first request; botocore's ``max_attempts`` counts *retries*
  (it adds one), so ``max_attempts: 1`` there sent every throttled or dropped call twice. The
  number of attempts is counted from botocore's ``before-send`` events and recorded with every
  invocation, so no retry is ever hidden;
- a call that failed after its request may have reached the function (the connection dropped or
  timed out after sending, or an earlier attempt did) is a ``client_error`` whose type starts
  with ``MayHaveRun.`` (``MayHaveRun.ConnectionClosedError``, ``MayHaveRun.ReadTimeoutError``);
  only a failure to connect at every attempt keeps botocore's plain name
  (``EndpointConnectionError``, ``ConnectTimeoutError``): nothing was sent, nothing ran;
- the send time is taken in the ``before-send`` hook (after signing, just before the request goes
  to the socket), the "headers" time in the ``response-received`` hook (status line and headers
  read, body not yet: Lambda replies only when the function has finished, so this is the first
  byte), the end time after the payload has been read; monotonic ``perf_counter_ns`` differences
  anchored to one wall-clock reading;
- control-plane calls (create, update, delete) use a separate client with the standard retry
  policy and wait for the function to be Active / Successful with boto3's waiters, as AWS needs.

The burst driver sends the same ``Invoke`` requests itself (aiohttp, :class:`LambdaRequests`,
signed by this provider's boto3 client). Both paths read a reply with one function,
:func:`lambda_result`: the async path hands it the HTTP reply as received, the boto3 path the
same status, headers and body recovered from boto3's response (or from the raw error reply).
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import secrets
import tempfile
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional

from faascope.errors import Failure
from faascope.providers.base import COLD_NONCE_VAR, FunctionConfig, Provider
from faascope.providers.invocation import (
    MAY_HAVE_RUN,
    NEVER_SENT,
    InvokeResult,
    Prepared,
    RequestFactory,
    Timing,
    classify,
    classify_user,
)
from faascope.providers.packaging import build_zip, user_package
from faascope.specs.lambda_quotas import DIRECT_UPLOAD_MAX_BYTES

PROFILE_TAG = "faascope:profile"
#: the local platform's per-function network shaping (agent/platform/function.go TagNetShape)
NET_SHAPE_TAG = "faascope:net-shape"
KEEP_ALIVE_TAG = "faascope:keep-alive"
CREATED_BY_TAG = "faascope:created-by"
CAMPAIGN_TAG = "faascope:campaign"
SPEC_TAG = "faascope:spec"
RUNTIME = "provided.al2023"
INVOKE_PATH = "/2015-03-31/functions/{name}/invocations"
#: the local platform's own reply headers (instance id, cold, setup/init/duration ms), recorded
#: under ``platform`` without the prefix; AWS sends none (docs/platform.md)
PLATFORM_HEADER_PREFIX = "x-faascope-"

# REPORT RequestId: <id>\tDuration: 1.23 ms\tBilled Duration: 2 ms\tMemory Size: 128 MB\t
# Max Memory Used: 20 MB\tInit Duration: 45.6 ms
_REPORT_FIELDS = {"Duration": ("duration_ms", float), "Billed Duration": ("billed_duration_ms", int),
                  "Memory Size": ("memory_size_mb", int), "Max Memory Used": ("max_memory_used_mb", int),
                  "Init Duration": ("init_duration_ms", float),
                  "Restore Duration": ("restore_duration_ms", float),
                  "Billed Restore Duration": ("billed_restore_duration_ms", int)}


def parse_report(log_tail: Optional[str]) -> Optional[dict]:
    """The fields of the last ``REPORT`` line of a Lambda log tail (LogType=Tail), or None."""
    if not log_tail:
        return None
    lines = [ln for ln in log_tail.splitlines() if ln.startswith("REPORT ")]
    if not lines:
        return None
    out: dict[str, Any] = {}
    for part in lines[-1].split("\t"):
        key, sep, value = part.partition(":")
        if not sep:
            continue
        key = key.strip()
        if key.startswith("REPORT "):
            continue
        spec = _REPORT_FIELDS.get(key)
        if spec is None:
            continue
        number = value.strip().split(" ")[0]
        try:
            out[spec[0]] = spec[1](float(number)) if spec[1] is int else float(number)
        except ValueError:
            continue
    return out or None


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    """Header names in lower case; of repeated names the first, as aiohttp's ``get`` gives."""
    out: dict[str, str] = {}
    for k, v in headers.items():
        out.setdefault(k.lower(), v)
    return out


def _error_type(headers: dict[str, str], body: Optional[bytes]) -> tuple[str, Optional[str]]:
    """An error reply's type and message: the ``X-Amzn-ErrorType`` header (``Type:extra``), else
    the JSON body's type; the message from the body (Lambda's ``{"Type", "message"}``)."""
    et = (headers.get("x-amzn-errortype") or "").split(":", 1)[0]
    msg = None
    try:
        d = json.loads(body.decode("utf-8", errors="replace")) if body else None
    except ValueError:
        d = None
    if isinstance(d, dict):
        et = et or str(d.get("Type") or d.get("__type") or "")
        msg = d.get("message") or d.get("Message") or d.get("errorMessage")
    elif body:
        msg = body[:300].decode("utf-8", errors="replace")
    return et, msg


def lambda_result(status: int, headers: Mapping[str, str], body: Optional[bytes], *,
                  send_ns: Optional[int], headers_ns: Optional[int], end_ns: Optional[int],
                  attempts: int = 1, retries: int = 0, user_function: bool = False) -> InvokeResult:
    """The one reading of a Lambda ``Invoke`` reply (RequestResponse), for both clients.

    ``status``, ``headers`` (any case) and ``body`` are the HTTP reply as the API reference
    describes it (https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html): a status of 300
    or more is an error of the call itself (``client_error``: throttling is 429
    ``TooManyRequestsException``); otherwise the body is the function's response, classified by
    :func:`~faascope.providers.base.classify` with ``X-Amz-Function-Error``, and
    ``X-Amz-Log-Result`` is the base64 log tail (its ``REPORT`` line parsed into
    ``platform["report"]``). ``X-Amzn-RequestId`` is the request id; the local platform's
    ``X-Faascope-*`` headers go to ``platform``. ``user_function``: the reply is a user's own
    function's, not the agent's (:func:`~faascope.providers.invocation.classify_user`).
    """
    h = _lower(headers)
    common = dict(send_ns=send_ns, headers_ns=headers_ns, end_ns=end_ns, attempts=attempts,
                  retries=retries, request_id=h.get("x-amzn-requestid"))
    extra: dict[str, Any] = {k[len(PLATFORM_HEADER_PREFIX):].replace("-", "_"): v
                             for k, v in h.items() if k.startswith(PLATFORM_HEADER_PREFIX)}
    if status >= 300:
        et, msg = _error_type(h, body)
        if not et:
            et = "TooManyRequestsException" if status == 429 else f"HTTP{status}"
        return InvokeResult(status="client_error", error_type=et,
                            error_message=f"HTTP {status}: {msg}" if msg else f"HTTP {status}",
                            platform=extra or None, **common)
    tail = h.get("x-amz-log-result")
    if tail:
        try:
            tail = base64.b64decode(tail).decode("utf-8", errors="replace")
        except ValueError:
            pass  # keep what was sent: a log tail that is not base64 is still worth reading
        report = parse_report(tail)
        if report:
            extra["report"] = report
    if user_function:
        fields = classify_user(body, h.get("x-amz-function-error"), _platform_cold(extra))
    else:
        fields = classify(body, h.get("x-amz-function-error"))
    return InvokeResult(**fields, log_tail=tail or None, platform=extra or None, **common)


def _platform_cold(extra: Mapping[str, Any]) -> Optional[bool]:
    """Whether the platform says the invocation started an instance: the local platform's
    X-Faascope-Cold header, else an Init Duration in the REPORT line (Lambda reports one on a
    cold start only); None when neither says."""
    cold = extra.get("cold")
    if cold in ("true", "false"):
        return cold == "true"
    report = extra.get("report")
    if isinstance(report, dict) and "duration_ms" in report:
        return "init_duration_ms" in report
    return None


def user_environment(config: FunctionConfig, standins: Mapping[str, str]) -> dict[str, str]:
    """A user's function's environment: the stand-ins' variables, ``AWS_ENDPOINT_URL_S3`` beside
    the S3 stand-in's (the variable the AWS SDKs read, so ``boto3.client("s3")`` reaches the
    stand-in unchanged), then the spec's own variables, which win."""
    env = dict(standins)
    if "FAASCOPE_S3_ENDPOINT_URL" in env:
        env.setdefault("AWS_ENDPOINT_URL_S3", env["FAASCOPE_S3_ENDPOINT_URL"])
    env.update(json.loads(config.environment) if config.environment else {})
    return env


def _boto3_reply(resp: dict, payload: bytes) -> tuple[int, dict[str, str], bytes]:
    """The HTTP reply behind boto3's ``invoke`` response, for :func:`lambda_result`.

    The headers are botocore's ``ResponseMetadata.HTTPHeaders``; ``FunctionError``, ``LogResult``
    and ``RequestId`` are botocore's readings of headers too, put back in case the response was
    built without HTTP (botocore's Stubber does)."""
    meta = resp.get("ResponseMetadata") or {}
    headers = _lower(meta.get("HTTPHeaders") or {})
    for name, key in (("x-amz-function-error", "FunctionError"), ("x-amz-log-result", "LogResult")):
        if resp.get(key) is not None:
            headers[name] = resp[key]
    if meta.get("RequestId"):
        headers.setdefault("x-amzn-requestid", meta["RequestId"])
    return int(resp.get("StatusCode") or meta.get("HTTPStatusCode") or 200), headers, payload


def _client_error_reply(exc: Any, raw: Optional[tuple[int, Mapping[str, str], bytes]]
                        ) -> tuple[int, dict[str, str], bytes]:
    """The HTTP reply behind a botocore ``ClientError`` from ``invoke``, for :func:`lambda_result`.

    ``raw`` is the error reply as botocore's ``response-received`` event saw it (status, headers,
    body), so the error's type and message are read exactly as the async client reads them. Without
    it (a handler answered instead of HTTP, as botocore's Stubber does) botocore's parsed error is
    put back in Lambda's error form: ``X-Amzn-ErrorType`` and ``{"message": ...}``."""
    if raw is not None:
        status, headers, body = raw
        return status, _lower(headers), body
    meta = exc.response.get("ResponseMetadata") or {}
    err = exc.response.get("Error") or {}
    headers = _lower(meta.get("HTTPHeaders") or {})
    if err.get("Code"):
        headers.setdefault("x-amzn-errortype", str(err["Code"]))
    if meta.get("RequestId"):
        headers.setdefault("x-amzn-requestid", meta["RequestId"])
    body = json.dumps({"message": err["Message"]}).encode() if err.get("Message") else b""
    return int(meta.get("HTTPStatusCode") or 400), headers, body


class LambdaRequests(RequestFactory):
    """Lambda ``Invoke`` requests for the burst driver, signed with a boto3 Lambda client's own
    signer (AWS and the local platform alike; why not aiobotocore: docs/concurrency.md)."""

    protocol = "lambda"

    def __init__(self, client: Any, log_tail: bool = False,
                 user_function: Optional[Callable[[str], bool]] = None):
        self.client = client
        #: whether a function is a user's own (its replies are not the agent's)
        self.user_function = user_function
        self.endpoint = client.meta.endpoint_url.rstrip("/")
        self.region = client.meta.region_name
        self.log_tail = log_tail
        # botocore's per-client SigV4 signer: the client's credential chain (refreshed when they
        # expire), region and signing name, with no public accessor
        signer = getattr(client, "_request_signer", None)
        if signer is None:  # pragma: no cover - botocore has had it since 2015
            raise Failure("cannot find the boto3 client's request signer")
        self.signer = signer

    def prepare(self, name: str, payload: dict | bytes, *, dry_run: bool = False) -> Prepared:
        from botocore.awsrequest import AWSRequest
        from yarl import URL

        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        url = self.endpoint + INVOKE_PATH.format(name=urllib.parse.quote(name, safe=""))
        # DryRun: Lambda validates the request and runs nothing (API_Invoke.html); the driver
        # sends it to open pooled connections before a burst
        headers = {"X-Amz-Invocation-Type": "DryRun" if dry_run else "RequestResponse",
                   "X-Amz-Log-Type": "Tail" if (self.log_tail and not dry_run) else "None",
                   "Content-Type": "application/json"}
        req = AWSRequest(method="POST", url=url, data=body, headers=headers)
        self.signer.sign("Invoke", req)  # SigV4 with the client's credentials, region, service
        return Prepared(url=URL(url, encoded=True), headers=dict(req.headers.items()), body=body,
                        endpoint=self.endpoint, protocol="lambda", function_name=name)

    def parse(self, prep: Prepared, status: int, headers: Any, body: bytes,
              timing: Timing) -> InvokeResult:
        user = (self.user_function is not None and prep.function_name is not None
                and self.user_function(prep.function_name))
        return lambda_result(status, headers, body, send_ns=timing.send_ns,
                             headers_ns=timing.headers_ns, end_ns=timing.end_ns,
                             user_function=user)

    def describe(self) -> dict:
        return {"protocol": "lambda", "endpoint_url": self.endpoint, "region": self.region,
                "signing": "SigV4 (the boto3 client's signer)"}


@dataclass
class CodeBucket:
    """Where a package over the direct-upload limit is put before CreateFunction names it: an
    S3 client (boto3), a bucket in the function's region, and a key prefix."""
    client: Any
    bucket: str
    prefix: str = ""


#: the key under a CodeBucket's prefix a package is uploaded to (deleted once the function
#: has it: Lambda keeps its own copy of the code, as the local platform does)
CODE_KEY = "faascope-code/{name}/{sha}.zip"


class LambdaAPIProvider(Provider):
    kind = "aws"

    def __init__(self, *, region: str = "us-east-1", endpoint_url: Optional[str] = None,
                 role: str, credentials: Optional[tuple[str, str]] = None,
                 credentials_profile: Optional[str] = None, max_attempts: int = 1,
                 read_timeout_s: float = 960.0, connect_timeout_s: float = 10.0,
                 keep_alive_s: Optional[int] = None, kind: str = "aws", log_tail: bool = True):
        import boto3
        from botocore.config import Config

        self.kind = kind
        self.region = region
        self.endpoint_url = endpoint_url
        self.role = role
        self.keep_alive_s = keep_alive_s
        self.log_tail = log_tail
        self.max_attempts = max_attempts
        kw: dict[str, Any] = {}
        if credentials:
            kw.update(aws_access_key_id=credentials[0], aws_secret_access_key=credentials[1])
        if credentials_profile:
            kw["profile_name"] = credentials_profile
        session = boto3.session.Session(region_name=region, **kw)
        self.client = session.client(
            "lambda", endpoint_url=endpoint_url,
            config=Config(retries={"total_max_attempts": max_attempts, "mode": "standard"},
                          read_timeout=read_timeout_s, connect_timeout=connect_timeout_s,
                          tcp_keepalive=True))
        self.control = session.client(
            "lambda", endpoint_url=endpoint_url,
            # control-plane calls are not measured: retried (8 attempts in all), as AWS needs
            config=Config(retries={"total_max_attempts": 8, "mode": "standard"}, read_timeout=120,
                          connect_timeout=connect_timeout_s))
        ev = self.client.meta.events
        ev.register("before-send.lambda.Invoke", self._on_send)
        ev.register("response-received.lambda.Invoke", self._on_response)
        ev.register("needs-retry.lambda.Invoke", self._on_attempt_done)
        self._attempts = 0
        self._reached = False
        self._send_pc: Optional[int] = None
        self._headers_pc: Optional[int] = None
        self._error_reply: Optional[tuple[int, Any, bytes]] = None
        self._zips: dict[tuple, bytes] = {}
        self._zipdir: Optional[tempfile.TemporaryDirectory] = None
        self._env: dict[str, dict[str, str]] = {}
        self._config: dict[str, FunctionConfig] = {}
        #: function -> how its package was last uploaded (inline, or through S3 when over the
        #: direct-upload limit), recorded in the ``deployed`` event (describe_function's ``code``)
        self.code_uploads: dict[str, dict[str, Any]] = {}
        self.campaign_uid: Optional[str] = None
        self.spec_name: Optional[str] = None

    def bind_campaign(self, uid: str, name: str) -> None:
        self.campaign_uid, self.spec_name = uid, name

    @classmethod
    def from_settings(cls, s: Any) -> "LambdaAPIProvider":
        return cls(region=s.region, endpoint_url=s.endpoint_url, role=s.role,
                   credentials_profile=s.credentials_profile, max_attempts=s.max_attempts,
                   read_timeout_s=s.read_timeout_s, connect_timeout_s=s.connect_timeout_s)

    def describe(self) -> dict:
        return {"kind": self.kind, "region": self.region, "endpoint_url": self.endpoint_url,
                "max_attempts": self.max_attempts}

    def describe_function(self, name: str) -> dict:
        d = self.describe()
        if name in self.code_uploads:
            d["code"] = dict(self.code_uploads[name])
        return d

    def async_requests(self, *, log_tail: bool = False) -> LambdaRequests:
        return LambdaRequests(self.client, log_tail=log_tail, user_function=self.is_user_function)

    def is_user_function(self, name: str) -> bool:
        """Whether ``name`` was deployed as a user's own function (spec ``function.code``)."""
        cfg = self._config.get(name)
        return cfg is not None and cfg.user_code

    # ------------------------------------------------------------------ hooks
    def _on_send(self, request=None, **_):
        self._attempts += 1
        self._send_pc = time.perf_counter_ns()
        self._headers_pc = None
        self._error_reply = None
        return None  # a non-None value would replace the HTTP response

    def _on_attempt_done(self, response=None, caught_exception=None, **_):
        """After each attempt (botocore asks whether to retry; None leaves that to its retry
        handler): remember whether any attempt may have reached the function, so a last attempt
        that could not connect does not hide an earlier one that was sent."""
        if response is not None or (caught_exception is not None and
                                    type(caught_exception).__name__ not in NEVER_SENT):
            self._reached = True
        return None

    def _on_response(self, response_dict=None, **_):
        self._headers_pc = time.perf_counter_ns()
        # an error reply's body is already read (botocore.endpoint.convert_to_response_dict);
        # kept so lambda_result reads it as the async client does. A 2xx body is the payload
        # stream, left to invoke().
        if response_dict and response_dict.get("status_code", 0) >= 300:
            self._error_reply = (response_dict["status_code"], response_dict.get("headers") or {},
                                 response_dict.get("body") or b"")

    # ------------------------------------------------------------------ code
    def _zip(self, arch: str, image_size: Optional[int]) -> bytes:
        key = (arch, image_size)
        if key not in self._zips:
            if self._zipdir is None:
                self._zipdir = tempfile.TemporaryDirectory(prefix="faascope-zip-")
            out = Path(self._zipdir.name) / f"agent-{arch}-{image_size or 0}.zip"
            path = build_zip(out, arch=arch, image_size=image_size)
            self._zips[key] = Path(path).read_bytes()
        return self._zips[key]

    @staticmethod
    def _sha(b: bytes) -> str:
        return base64.b64encode(hashlib.sha256(b).digest()).decode()

    def code_bucket(self) -> Optional[CodeBucket]:
        """The bucket packages over the direct-upload limit go through; None: none (subclasses
        say which: the AWS storage settings' bucket, the local S3 stand-in)."""
        return None

    @contextlib.contextmanager
    def _code_source(self, name: str, code: bytes, operation: str) -> Iterator[dict[str, Any]]:
        """The package as CreateFunction's ``Code`` (UpdateFunctionCode takes the same keys):
        inline (``ZipFile``) up to Lambda's direct-upload limit, else uploaded to the code bucket
        and named (``S3Bucket``, ``S3Key``), as SAM, Serverless and Terraform deploy large
        packages; one path for AWS and the local platform (its S3 stand-in). The object is
        deleted when the block ends: the function has its own copy by then (the caller waits
        for it to be Active / Updated inside the block)."""
        if len(code) <= DIRECT_UPLOAD_MAX_BYTES:
            self.code_uploads[name] = {"via": "inline", "zipped_bytes": len(code)}
            yield {"ZipFile": code}
            return
        cb = self.code_bucket()
        if cb is None:
            raise Failure(
                f"{operation} {name}: the package is {len(code)} bytes zipped, over Lambda's "
                f"{DIRECT_UPLOAD_MAX_BYTES}-byte limit for a direct upload, and this provider has "
                "no bucket to deploy it through (AWS: provider.settings.storage.code_bucket or "
                "s3_bucket; local: faascope run starts the S3 stand-in itself)")
        from botocore.exceptions import BotoCoreError, ClientError

        key = cb.prefix + CODE_KEY.format(name=name, sha=hashlib.sha256(code).hexdigest()[:16])
        try:
            cb.client.put_object(Bucket=cb.bucket, Key=key, Body=code)
        except (ClientError, BotoCoreError) as exc:
            raise Failure(f"{operation} {name}: uploading the {len(code)}-byte package to "
                          f"s3://{cb.bucket}/{key}: {exc}") from None
        self.code_uploads[name] = {"via": "s3", "bucket": cb.bucket, "key": key,
                                   "zipped_bytes": len(code)}
        try:
            yield {"S3Bucket": cb.bucket, "S3Key": key}
        finally:
            try:
                cb.client.delete_object(Bucket=cb.bucket, Key=key)
            except (ClientError, BotoCoreError):
                # a left object costs storage, not correctness: it stays under faascope-code/
                # (faascope cleanup removes it only with a bucket faascope created)
                pass

    def _tags(self, config: FunctionConfig) -> dict[str, str]:
        tags = {"faascope": "1", CREATED_BY_TAG: "faascope"}
        if self.campaign_uid:
            tags[CAMPAIGN_TAG] = self.campaign_uid
        if self.spec_name:
            tags[SPEC_TAG] = self.spec_name
        if config.profile:
            tags[PROFILE_TAG] = config.profile
        if config.net_shape:
            tags[NET_SHAPE_TAG] = config.net_shape
        if self.keep_alive_s is not None:
            tags[KEEP_ALIVE_TAG] = str(self.keep_alive_s)
        return tags

    # ------------------------------------------------------------------ control plane
    #: seconds between the polls of a waiter (botocore's function_*_v2 default: AWS's updates take
    #: seconds); a waiter gives up after WAIT_TOTAL_S
    wait_delay_s: float = 1.0
    WAIT_TOTAL_S = 300

    def _wait(self, waiter: str, name: str) -> None:
        """Waits as AWS clients must: a function Pending refuses invocations, an update
        InProgress refuses another update (ResourceConflictException)."""
        try:
            self.control.get_waiter(waiter).wait(
                FunctionName=name, WaiterConfig={"Delay": self.wait_delay_s,
                                                 "MaxAttempts": round(self.WAIT_TOTAL_S / self.wait_delay_s)})
        except Exception as exc:  # botocore.exceptions.WaiterError
            raise Failure(f"function {name} did not become ready: {exc}") from None

    def deploy(self, name: str, config: FunctionConfig) -> None:
        from botocore.exceptions import ClientError

        code = user_package(config.code) if config.user_code else \
            self._zip(config.arch, config.image_size)
        try:
            current = self.control.get_function(FunctionName=name)
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceNotFoundException":
                raise Failure(f"GetFunction {name}: {exc}") from None
            current = None
        if current is not None:
            tags = current.get("Tags") or {}
            cfg = current["Configuration"]
            if (tags.get(PROFILE_TAG) != (config.profile or None) and config.profile) or \
                    tags.get(NET_SHAPE_TAG) != config.net_shape:
                # the sandbox profile and network shape are fixed at creation on the local platform
                self.teardown(name)
                current = None
        if current is None:
            env = self._function_env(config)
            if config.user_code:
                env = user_environment(config, env)
            env[COLD_NONCE_VAR] = secrets.token_hex(8)
            with self._code_source(name, code, "CreateFunction") as source:
                try:
                    self.control.create_function(**self._create_kwargs(name, config, source, env))
                except ClientError as exc:
                    raise Failure(f"CreateFunction {name}: {exc}") from None
                self._wait("function_active_v2", name)
            self._env[name] = env
            self._config[name] = config
            return
        cfg = current["Configuration"]
        self._env[name] = dict((cfg.get("Environment") or {}).get("Variables") or {})
        if cfg.get("CodeSha256") != self._sha(code) or (cfg.get("Architectures") or ["x86_64"])[0] != config.arch:
            with self._code_source(name, code, "UpdateFunctionCode") as source:
                try:
                    self.control.update_function_code(FunctionName=name, **source,
                                                      Architectures=[config.arch])
                except ClientError as exc:
                    raise Failure(f"UpdateFunctionCode {name}: {exc}") from None
                self._wait("function_updated_v2", name)
        have = FunctionConfig(memory_mb=cfg.get("MemorySize"),
                              ephemeral_mb=(cfg.get("EphemeralStorage") or {}).get("Size", 512),
                              timeout_s=cfg.get("Timeout"), arch=config.arch,
                              profile=config.profile, image_size=config.image_size,
                              net_shape=config.net_shape, deployment=config.deployment,
                              code=config.code, runtime=config.runtime, handler=config.handler,
                              environment=config.environment)
        self._config[name] = have
        if have != config:
            self.update_configuration(name, config)

    def _function_env(self, config: FunctionConfig) -> dict[str, str]:
        """Environment variables a function of ``config`` gets (subclasses add storage settings)."""
        return {}

    def _create_kwargs(self, name: str, config: FunctionConfig, code: dict[str, Any],
                       env: dict[str, str]) -> dict[str, Any]:
        """The CreateFunction parameters (subclasses add VPC and file-system settings); ``code``
        is its ``Code`` (:meth:`_code_source`)."""
        user = config.user_code
        return dict(FunctionName=name, Runtime=config.runtime if user else RUNTIME,
                    Role=self.role, Handler=config.handler if user else "bootstrap",
                    Code=code, MemorySize=config.memory_mb,
                    EphemeralStorage={"Size": config.ephemeral_mb}, Timeout=config.timeout_s,
                    Environment={"Variables": env}, Architectures=[config.arch],
                    Tags=self._tags(config),
                    Description="faascope: a user's function" if user else "faascope measurement agent")

    def update_configuration(self, name: str, config: FunctionConfig) -> None:
        from botocore.exceptions import ClientError

        if self._config.get(name) == config:
            return
        try:
            self.control.update_function_configuration(
                FunctionName=name, MemorySize=config.memory_mb,
                EphemeralStorage={"Size": config.ephemeral_mb}, Timeout=config.timeout_s)
        except ClientError as exc:
            raise Failure(f"UpdateFunctionConfiguration {name}: {exc}") from None
        self._wait("function_updated_v2", name)
        self._config[name] = config

    def force_cold(self, name: str) -> None:
        from botocore.exceptions import ClientError

        env = dict(self._env.get(name) or {})
        env[COLD_NONCE_VAR] = secrets.token_hex(8)
        try:
            self.control.update_function_configuration(FunctionName=name,
                                                       Environment={"Variables": env})
        except ClientError as exc:
            raise Failure(f"UpdateFunctionConfiguration {name} (forcing a cold start): {exc}") from None
        self._wait("function_updated_v2", name)
        self._env[name] = env

    def teardown(self, name: str) -> None:
        from botocore.exceptions import ClientError

        try:
            self.control.delete_function(FunctionName=name)
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceNotFoundException":
                raise Failure(f"DeleteFunction {name}: {exc}") from None
        self._config.pop(name, None)
        self._env.pop(name, None)

    # ------------------------------------------------------------------ invoke
    def invoke(self, name: str, payload: Any) -> InvokeResult:
        from botocore.exceptions import BotoCoreError, ClientError

        user = self.is_user_function(name)

        body = json.dumps(payload).encode()
        self._attempts = 0
        self._reached = False
        self._send_pc = self._headers_pc = None
        self._error_reply = None
        wall0 = time.time_ns()
        pc0 = time.perf_counter_ns()

        def wall(pc: Optional[int]) -> Optional[int]:
            return None if pc is None else wall0 + (pc - pc0)

        def retries(meta: dict) -> int:
            return max(self._attempts - 1, meta.get("RetryAttempts", 0) or 0)

        try:
            resp = self.client.invoke(FunctionName=name, InvocationType="RequestResponse",
                                      LogType="Tail" if self.log_tail else "None", Payload=body)
            headers_pc = self._headers_pc or time.perf_counter_ns()
            data = resp["Payload"].read()
            end_pc = time.perf_counter_ns()
        except ClientError as exc:
            end_pc = time.perf_counter_ns()
            status, headers, reply = _client_error_reply(exc, self._error_reply)
            return lambda_result(status, headers, reply, send_ns=wall(self._send_pc),
                                 headers_ns=wall(self._headers_pc), end_ns=wall(end_pc),
                                 attempts=max(self._attempts, 1),
                                 retries=retries(exc.response.get("ResponseMetadata") or {}),
                                 user_function=user)
        except (BotoCoreError, OSError) as exc:
            end_pc = time.perf_counter_ns()
            kind, message = type(exc).__name__, str(exc)
            if self._reached or kind not in NEVER_SENT:
                # the request was sent (this attempt or an earlier one): the function may have
                # run, so this is a recorded error, never "unreachable"
                message = (f"the request was sent and the function may have run "
                           f"({self._attempts} attempt(s)): {message}")
                kind = MAY_HAVE_RUN + kind
            return InvokeResult(
                status="client_error", error_type=kind, error_message=message,
                send_ns=wall(self._send_pc), headers_ns=wall(self._headers_pc), end_ns=wall(end_pc),
                attempts=max(self._attempts, 1), retries=max(self._attempts - 1, 0))
        status, headers, reply = _boto3_reply(resp, data)
        return lambda_result(status, headers, reply, send_ns=wall(self._send_pc),
                             headers_ns=wall(headers_pc), end_ns=wall(end_pc),
                             attempts=max(self._attempts, 1),
                             retries=retries(resp.get("ResponseMetadata") or {}),
                             user_function=user)

    def close(self) -> None:
        if self._zipdir is not None:
            self._zipdir.cleanup()
            self._zipdir = None
