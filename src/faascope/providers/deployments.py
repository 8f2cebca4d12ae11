"""Several providers in one campaign: a spec's ``deployments`` (docs/specs.md, "Deployments").

A spec can compare places a function runs (local profiles, AWS regions and architectures, Cloud
Run or Cloud Functions, HTTP endpoints) as the levels of its ``deployment`` factor. Each cell's
function configuration names its deployment (:attr:`FunctionConfig.deployment`), so its function
is distinct from every other deployment's; :class:`DeploymentProviders` is the campaign's one
provider and hands every call to the provider of the function's deployment. Deployments with the
same provider kind and settings share one provider object (two local profiles are two functions
on one local platform, as a ``profile`` factor would be).

The executors see one :class:`~faascope.providers.base.Provider`, so deploying, forcing cold
starts, invoking, recording and the teardown of a resumed campaign work as for one provider.
"""
from __future__ import annotations

from typing import Optional

from faascope.errors import BadInput, Failure
from faascope.providers.base import FunctionConfig, Provider
from faascope.providers.invocation import InvokeResult, RequestFactory


class DeploymentProviders(Provider):
    """The provider of a campaign with deployments: one provider per deployment."""

    kind = "deployments"

    def __init__(self, providers: dict[str, Provider]):
        if not providers:
            raise BadInput("a campaign with deployments needs at least one", field="deployments")
        self.providers = dict(providers)
        #: function name -> deployment name (from the plan's cells, and from every deploy)
        self.owner: dict[str, str] = {}

    def distinct(self) -> list[Provider]:
        """Each provider object once (deployments of one kind and settings share one)."""
        seen: dict[int, Provider] = {}
        for p in self.providers.values():
            seen.setdefault(id(p), p)
        return list(seen.values())

    def assign(self, name: str, deployment: str) -> None:
        """Say which deployment a function belongs to (before a resumed campaign deletes the
        functions an earlier run deployed)."""
        if deployment not in self.providers:
            raise Failure(f"function {name}: no deployment named {deployment!r}")
        self.owner[name] = deployment

    def provider_of(self, name: str) -> Provider:
        dep = self.owner.get(name)
        if dep is None:
            raise Failure(f"function {name} belongs to no deployment of this campaign")
        return self.providers[dep]

    # ------------------------------------------------------------------ Provider
    def deploy(self, name: str, config: FunctionConfig) -> None:
        if config.deployment is None:
            raise Failure(f"function {name} has no deployment in its configuration")
        self.assign(name, config.deployment)
        self.providers[config.deployment].deploy(name, config)

    def update_configuration(self, name: str, config: FunctionConfig) -> None:
        self.provider_of(name).update_configuration(name, config)

    def force_cold(self, name: str) -> None:
        self.provider_of(name).force_cold(name)

    def invoke(self, name: str, payload: dict) -> InvokeResult:
        return self.provider_of(name).invoke(name, payload)

    def teardown(self, name: str) -> None:
        if name in self.owner:
            self.provider_of(name).teardown(name)
            return
        # a function no cell of the plan names (a plan replaced with --force): every provider
        # treats a function it does not have as already deleted
        for p in self.distinct():
            p.teardown(name)

    def describe(self) -> dict:
        return {"kind": self.kind,
                "deployments": {n: p.describe() for n, p in self.providers.items()}}

    def describe_function(self, name: str) -> dict:
        dep = self.owner.get(name)
        if dep is None:
            return self.describe()
        return {"deployment": dep, **self.providers[dep].describe_function(name)}

    def async_requests(self, *, log_tail: bool = False) -> RequestFactory:
        raise BadInput("bursts run on one provider; a spec with deployments invokes one at a "
                       "time", field="deployments")

    def bind_campaign(self, uid: str, name: str) -> None:
        for p in self.distinct():
            p.bind_campaign(uid, name)

    def close(self) -> None:
        first: Optional[BaseException] = None
        for p in self.distinct():
            try:
                p.close()
            except Exception as exc:  # close the others (stand-ins, platforms) all the same
                first = first or exc
        if first is not None:
            raise first
