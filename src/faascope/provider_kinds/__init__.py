"""One descriptor per provider kind: what the rest of faascope asks about a provider.

A spec's ``provider.kind`` (and a deployment's ``kind``) is one of the keys of
:data:`PROVIDER_KINDS`; the spec loader, the planner, the cost and time estimates, the report,
the campaign driver and cleanup ask its :class:`ProviderKind` instead of comparing the kind with a
name. Adding a provider means adding a descriptor here (and its settings model in
``faascope.specs.model``, its implementation in ``faascope.providers``); ``tests/test_provider_kinds.py``
checks that every kind the spec schema accepts has one and that no ``kind == "<provider>"``
comparison is left outside this module and ``faascope/providers/``.

This folder sits below ``specs``, ``designs`` and ``providers`` (tests/test_structure.py's
LAYERS) and above ``tiers``, whose CPU rules (:func:`faascope.tiers.lambda_vcpu`,
:func:`faascope.tiers.gcf_vcpu`) the descriptors name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, Optional

from faascope.tiers import gcf_vcpu, lambda_vcpu

#: price table key (faascope.cost: aws_lambda, gcf, cloudrun) and a vCPU override (-1.0: as
#: close to Lambda's as Cloud Run allows); (None, None) when unknown
Price = tuple[Optional[str], Optional[float]]

#: where a sandbox profile's /tmp is limited: "ephemeral" (Lambda's ephemeral_mb, on disk),
#: "memory" (a tmpfs counted against memory_mb, as on GCF 2nd gen), None (no limit modelled)
PROFILE_TMP: dict[str, Optional[str]] = {"lambda": "ephemeral", "gcf": "memory", "unlimited": None}
#: a sandbox profile's CPU rule: the CPU share functions of faascope.designs.estimate.cpu_share
#: and faascope.tiers (lambda: memory / 1769 MB, tiers.lambda_vcpu; gcf: the GCF tier table,
#: tiers.gcf_vcpu; unlimited: a whole CPU)
PROFILE_VCPU: dict[str, Optional[Callable[[int], float]]] = {"lambda": lambda_vcpu, "gcf": gcf_vcpu,
                                                            "unlimited": None}


def settings_get(settings: Any, key: str, default=None):
    """A setting from a parsed settings model or from a plain dict of settings."""
    if isinstance(settings, dict):
        return settings.get(key, default)
    return getattr(settings, key, default)


def _price_lambda(profile: Optional[str], settings: Any) -> Price:
    return "aws_lambda", None


def _price_local(profile: Optional[str], settings: Any) -> Price:
    return ("gcf" if profile == "gcf" else "aws_lambda"), None


def _price_gcp(profile: Optional[str], settings: Any) -> Price:
    service = settings_get(settings, "service", "cloud_run") or "cloud_run"
    cpu = settings_get(settings, "cpu", "gcf")
    if service == "cloud_functions" or cpu in (None, "gcf"):
        return "gcf", None
    return "cloudrun", (float(cpu) if cpu not in ("match_lambda",) else -1.0)


def _price_http(profile: Optional[str], settings: Any) -> Price:
    as_ = settings_get(settings, "price_as")
    return (as_, None) if as_ else (None, None)


@dataclass(frozen=True)
class ProviderKind:
    """What a provider kind is, as far as the code outside ``faascope.providers`` cares."""

    name: str
    #: "local": on this machine (faascope's local platform: sandboxes share the host's CPUs, the
    #: stand-ins serve its storage, a run costs nothing); "cloud": on machines of its own
    where: Literal["local", "cloud"]
    #: the class name of its settings model in faascope.specs.model (PROVIDER_SETTINGS)
    settings_model: str
    #: (platform, vcpu) that prices a cell, from the cell's sandbox profile and the settings
    price: Callable[[Optional[str], Any], Price]
    #: the price table its invocations are priced as when the results name none (the report);
    #: None: the settings say (price_from_setting) or nothing does
    default_price_platform: Optional[str]
    #: the setting that names the price table (http: price_as), None: the kind itself says
    price_from_setting: Optional[str] = None
    #: its functions run in a sandbox profile (function.profile): the profile a function
    #: without one gets; None: the kind has no sandbox profiles
    default_profile: Optional[str] = None
    #: its settings name a cloud region (settings.region)
    has_region: bool = False
    #: the CPU rule of a function (a key of PROFILE_VCPU, the argument of
    #: faascope.designs.estimate.cpu_share); None: the sandbox profile's own
    cpu_rule: Optional[str] = None
    #: where /tmp is limited (see PROFILE_TMP); with sandbox profiles the profile says
    tmp: Optional[str] = None
    #: the object store its functions' object requests are billed by (faascope.cost's storage
    #: tables: s3, gcs); None: a cloud of neither kind
    object_storage: Optional[str] = None
    #: the shared file system billed per use (efs); None: none billed per use
    shared_fs_storage: Optional[str] = None
    #: cleanup also looks for its DynamoDB tables (on the cloud itself, not at a stand-in endpoint)
    cleanup_tables: bool = False
    #: it deploys through the Lambda API (boto3's lambda client): what `faascope tune` and
    #: `faascope cleanup` drive
    lambda_api: bool = False

    @property
    def local(self) -> bool:
        return self.where == "local"

    @property
    def has_profiles(self) -> bool:
        return self.default_profile is not None

    def cpu_rule_of(self, profile: Optional[str]) -> Optional[str]:
        """The CPU rule a function with sandbox ``profile`` gets on this kind."""
        return (profile or self.default_profile) if self.has_profiles else self.cpu_rule

    def tmp_of(self, profile: Optional[str]) -> Optional[str]:
        """Where /tmp is limited for a function with sandbox ``profile`` (see PROFILE_TMP)."""
        return PROFILE_TMP.get(profile or "") if self.has_profiles else self.tmp


PROVIDER_KINDS: dict[str, ProviderKind] = {
    "local": ProviderKind("local", "local", "LocalProviderSettings", _price_local, "aws_lambda",
                          default_profile="lambda", lambda_api=True),
    "aws": ProviderKind("aws", "cloud", "AWSProviderSettings", _price_lambda, "aws_lambda",
                        has_region=True, cpu_rule="lambda", tmp="ephemeral",
                        object_storage="s3", shared_fs_storage="efs", cleanup_tables=True,
                        lambda_api=True),
    "gcp": ProviderKind("gcp", "cloud", "GCPProviderSettings", _price_gcp, "gcf",
                        has_region=True, cpu_rule="gcf", tmp="memory", object_storage="gcs"),
    # an agent at a URL: its platform is unknown; the time estimate assumes Lambda's CPU rule
    "http": ProviderKind("http", "cloud", "HTTPProviderSettings", _price_http, None,
                         price_from_setting="price_as", cpu_rule="lambda"),
}


#: the kinds whose functions are deployed through the Lambda API
LAMBDA_API_KINDS: tuple[str, ...] = tuple(k for k, d in PROVIDER_KINDS.items() if d.lambda_api)


def provider_kind(name: Optional[str]) -> Optional[ProviderKind]:
    """The descriptor of ``name``; None for a name that is no provider kind."""
    return PROVIDER_KINDS.get(name or "")
