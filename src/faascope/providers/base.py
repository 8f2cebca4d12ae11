"""The provider interface: deploy, update configuration, force a cold start, invoke, tear down.

Every provider returns an :class:`InvokeResult` with the client's own timestamps next to the
agent's response, the number of attempts the client made (every retry is counted, none is hidden)
and a status:

- ``ok``: the agent answered and its workload ran (``response["ok"]`` is true);
- ``agent_error``: the agent answered with ``ok: false`` (``error_type`` = the agent's error type,
  e.g. ``InvalidRequest``, ``IOError``, ``NoSpace``);
- ``function_error``: the platform reported a function error (``X-Amz-Function-Error``: the
  function crashed, timed out or ran out of memory) or the reply was not an agent response;
- ``client_error``: the call itself failed (throttling, connection refused, read timeout …).
"""
from __future__ import annotations

import abc
import importlib
import json
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from faascope.errors import BadInput

if TYPE_CHECKING:  # providers.requests imports this module
    from faascope.providers.requests import RequestFactory

COLD_NONCE_VAR = "FAASCOPE_COLD_NONCE"


@dataclass(frozen=True)
class FunctionConfig:
    """What a deployed function is: a change of any of these is a new configuration."""

    memory_mb: int
    ephemeral_mb: int = 512
    timeout_s: int = 300
    arch: str = "x86_64"
    profile: Optional[str] = None  # local platform only
    image_size: Optional[int] = None

    @classmethod
    def from_dict(cls, d: dict) -> "FunctionConfig":
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__ if k in d})

    def as_dict(self) -> dict:
        return asdict(self)

    def identity(self, strategy: str = "per_config") -> tuple:
        """What must match for two cells to share a function.

        ``per_config``: everything; ``shared``: only what needs a new function or new code
        (profile, arch, image size); memory, ephemeral storage and timeout are then changed in
        place with UpdateFunctionConfiguration.
        """
        if strategy == "shared":
            return (self.profile, self.arch, self.image_size)
        return (self.memory_mb, self.ephemeral_mb, self.timeout_s, self.arch, self.profile,
                self.image_size)


@dataclass
class InvokeResult:
    status: str
    response: Optional[dict] = None
    raw_payload: Optional[str] = None
    function_error: Optional[str] = None
    error_type: Optional[str] = None
    error_message: Optional[str] = None
    #: wall-clock Unix ns: when the request was handed to the socket (boto3 "before-send", last
    #: attempt), when the reply's headers were parsed (≈ first byte: Lambda sends the headers
    #: only once the function has returned), and when the body had been read
    send_ns: Optional[int] = None
    headers_ns: Optional[int] = None
    end_ns: Optional[int] = None
    attempts: int = 1
    retries: int = 0
    request_id: Optional[str] = None
    log_tail: Optional[str] = None
    #: what the platform says beyond AWS (the local platform's X-Faascope-* reply headers)
    platform: Optional[dict] = None

    @property
    def client_latency_s(self) -> Optional[float]:
        if self.send_ns is None or self.end_ns is None:
            return None
        return (self.end_ns - self.send_ns) / 1e9

    @property
    def client_headers_s(self) -> Optional[float]:
        if self.send_ns is None or self.headers_ns is None:
            return None
        return (self.headers_ns - self.send_ns) / 1e9


def classify(body: bytes | None, function_error: str | None) -> dict[str, Any]:
    """Status, parsed response and error fields of a reply body (shared by every provider)."""
    out: dict[str, Any] = {"status": "ok", "response": None, "raw_payload": None,
                           "function_error": function_error, "error_type": None,
                           "error_message": None}
    text = body.decode("utf-8", errors="replace") if body is not None else None
    parsed: Any = None
    if text:
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
    if function_error:
        out["status"] = "function_error"
        if isinstance(parsed, dict):
            out["error_type"] = str(parsed.get("errorType") or function_error)
            out["error_message"] = parsed.get("errorMessage")
            if "ok" in parsed and "instance" in parsed:
                out["response"] = parsed
        else:
            out["error_type"] = function_error
        if out["response"] is None:
            out["raw_payload"] = text
        return out
    if not isinstance(parsed, dict) or "ok" not in parsed:
        out["status"] = "function_error"
        out["error_type"] = "InvalidAgentResponse"
        out["error_message"] = f"the reply is not an agent response: {(text or '')[:200]!r}"
        out["raw_payload"] = text
        return out
    out["response"] = parsed
    if not parsed.get("ok"):
        err = parsed.get("error") or {}
        out["status"] = "agent_error"
        out["error_type"] = str(err.get("type") or "AgentError")
        out["error_message"] = err.get("message")
    return out


class Provider(abc.ABC):
    """Deploys functions and invokes them. One instance per campaign run; not thread-safe."""

    kind: str = "abstract"

    @abc.abstractmethod
    def deploy(self, name: str, config: FunctionConfig) -> None:
        """Create ``name`` with ``config``, or bring an existing function to it (idempotent)."""

    @abc.abstractmethod
    def update_configuration(self, name: str, config: FunctionConfig) -> None:
        """Change memory, ephemeral storage or timeout in place (retires warm instances)."""

    @abc.abstractmethod
    def force_cold(self, name: str) -> None:
        """Make the next invocation of ``name`` a cold start (the AWS-portable way: change an
        environment variable, which retires every warm instance)."""

    @abc.abstractmethod
    def invoke(self, name: str, payload: dict) -> InvokeResult:
        """Invoke synchronously; never raises for a failed invocation (it is a result)."""

    @abc.abstractmethod
    def teardown(self, name: str) -> None:
        """Delete the function (no error if it is already gone)."""

    def describe(self) -> dict:
        """What to record about the provider in the campaign (endpoint, region …)."""
        return {"kind": self.kind}

    def async_requests(self, *, log_tail: bool = False) -> "RequestFactory":
        """The burst driver's requests for this provider: prepared ahead of time, sent by its
        asynchronous client (:mod:`faascope.driver.aclient`), replies parsed here.
        ``log_tail``: ask for the platform's log tail where there is one (Lambda's
        ``LogType=Tail``). Providers that support bursts override this."""
        raise BadInput(f"bursts need the Lambda API (providers local, aws) or agent URLs (http); the "
                       f"{self.kind!r} provider is not supported yet", field="provider.kind")

    def bind_campaign(self, uid: str, name: str) -> None:
        """Called by the runner before deploying: providers tag what they create with it
        (``faascope:campaign``), so ``faascope cleanup --campaign`` finds it."""

    def close(self) -> None:
        pass


PROVIDERS = {
    "local": "faascope.providers.local:LocalProvider",
    "aws": "faascope.providers.aws:AWSProvider",
    "gcp": "faascope.providers.gcp:GCPProvider",
    "http": "faascope.providers.http:HTTPProvider",
}


def make_provider(kind: str, settings: Any) -> Provider:
    """The provider for a spec's ``provider`` section (classes expose ``from_settings``)."""
    target = PROVIDERS.get(kind)
    if target is None:
        raise BadInput(f"unknown provider {kind!r}; one of {', '.join(PROVIDERS)}", field="provider.kind")
    module, attr = target.split(":")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except (ModuleNotFoundError, AttributeError) as exc:
        name = getattr(exc, "name", "") or ""
        if isinstance(exc, AttributeError) or name.startswith("faascope"):
            raise BadInput(f"the {kind!r} provider is not available in this build of faascope",
                           field="provider.kind") from None
        raise
    return cls.from_settings(settings)
