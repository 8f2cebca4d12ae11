"""The provider interface: deploy, update configuration, force a cold start, invoke, tear down.

Every provider returns an :class:`~faascope.providers.invocation.InvokeResult` with the client's
own timestamps next to the agent's response, the number of attempts the client made (every retry
is counted, none is hidden) and a status (see :mod:`faascope.providers.invocation`).
"""
from __future__ import annotations

import abc
import importlib
from dataclasses import asdict, dataclass
from typing import Any, Optional

from faascope.errors import BadInput
from faascope.providers.invocation import InvokeResult, RequestFactory

COLD_NONCE_VAR = "FAASCOPE_COLD_NONCE"
#: the FunctionConfig fields of a user's own function (None for faascope's agent)
USER_CODE_FIELDS = ("code", "runtime", "handler", "environment")


@dataclass(frozen=True)
class FunctionConfig:
    """What a deployed function is: a change of any of these is a new configuration."""

    memory_mb: int
    ephemeral_mb: int = 512
    timeout_s: int = 300
    arch: str = "x86_64"
    profile: Optional[str] = None  # local platform only
    image_size: Optional[int] = None
    net_shape: Optional[str] = None  # local platform only (the faascope:net-shape tag)
    #: the deployment it runs on, in a campaign comparing several (a spec's ``deployments``)
    deployment: Optional[str] = None
    #: a user's own function (spec ``function.code``): its package (a directory or a zip, an
    #: absolute path), runtime, handler and environment (sorted JSON); None: faascope's agent
    code: Optional[str] = None
    runtime: Optional[str] = None
    handler: Optional[str] = None
    environment: Optional[str] = None

    @classmethod
    def from_dict(cls, d: dict) -> "FunctionConfig":
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__ if k in d})

    def as_dict(self) -> dict:
        d = asdict(self)
        for k in ("deployment",) + USER_CODE_FIELDS:
            if d[k] is None:
                del d[k]  # recorded configurations of campaigns without them unchanged
        return d

    @property
    def user_code(self) -> bool:
        """Whether this is a user's own function rather than faascope's agent."""
        return self.code is not None

    def identity(self, strategy: str = "per_config") -> tuple:
        """What must match for two cells to share a function.

        ``per_config``: everything; ``shared``: only what needs a new function or new code
        (profile, arch, image size, network shape); memory, ephemeral storage and timeout are
        then changed in place with UpdateFunctionConfiguration.
        """
        if strategy == "shared":
            return (self.profile, self.arch, self.image_size) + self._shape()
        return (self.memory_mb, self.ephemeral_mb, self.timeout_s, self.arch, self.profile,
                self.image_size) + self._shape()

    def _shape(self) -> tuple:
        # only when set, so that function names of campaigns without them stay as they were
        return ((self.net_shape,) if self.net_shape else ()) + \
            ((("deployment", self.deployment),) if self.deployment else ()) + \
            (tuple((k, getattr(self, k)) for k in USER_CODE_FIELDS) if self.code else ())


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

    def describe_function(self, name: str) -> dict:
        """What to record about the provider that runs ``name`` (a campaign with deployments
        has one per deployment)."""
        return self.describe()

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
