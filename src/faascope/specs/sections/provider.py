"""The provider section: its settings as its kind's settings model says, where a sandbox profile
may be set, and the deployments (each a provider of its own) with the deployment factor's levels."""
from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from faascope.provider_kinds import PROVIDER_KINDS
from faascope.specs.fields import FUNCTION_ALIASES, field_adapter, format_errors
from faascope.specs.loaded import Deployment
from faascope.specs.model import (
    DEPLOYMENT_NAME,
    PROVIDER_SETTINGS,
    CommonProviderSettings,
    FunctionSpec,
    Spec,
)


def check_provider(spec: Spec, problems: list[tuple[str, str]]) -> dict[str, Deployment]:
    """The provider's settings and the function's sandbox profile checked; the deployments."""
    # provider settings
    settings_model = PROVIDER_SETTINGS.get(spec.provider.kind)
    if settings_model is not None:
        try:
            settings_model.model_validate(spec.provider.settings)
        except ValidationError as exc:
            problems += format_errors(exc, ("provider", "settings"), settings_model)
    if spec.deployments and spec.function.profile is not None:
        problems.append(("function.profile", "with deployments, a sandbox profile belongs to "
                         "each local deployment (deployments.NAME.function.profile)"))
    elif not PROVIDER_KINDS[spec.provider.kind].has_profiles and spec.function.profile is not None:
        problems.append(("function.profile", "only the local provider has sandbox profiles "
                         f"(provider.kind is {spec.provider.kind!r})"))
    deployments = check_deployments(spec, problems)
    return deployments


def check_deployments(spec: Spec, problems: list[tuple[str, str]]) -> dict[str, Deployment]:
    """The spec's deployments, each provider's settings validated as that provider's (the
    errors name ``deployments.NAME.settings.FIELD``) and its function fields as the function's."""
    out: dict[str, Deployment] = {}
    common = set(CommonProviderSettings.model_fields)
    for name, d in spec.deployments.items():
        where = f"deployments.{name}"
        if not isinstance(name, str) or not re.match(DEPLOYMENT_NAME, name):
            problems.append((where, f"a deployment's name must match {DEPLOYMENT_NAME}"))
            continue
        kind = d.kind or spec.provider.kind
        base = spec.provider.settings if kind == spec.provider.kind else \
            {k: v for k, v in spec.provider.settings.items() if k in common}
        settings = {**base, **d.settings}
        try:
            PROVIDER_SETTINGS[kind].model_validate(settings)
        except ValidationError as exc:
            problems.extend(format_errors(exc, ("deployments", name, "settings"),
                                          PROVIDER_SETTINGS[kind]))
        fn: dict[str, Any] = {}
        for key, value in d.function.items():
            fname = FUNCTION_ALIASES.get(key, key)
            if fname not in FunctionSpec.model_fields:
                problems.append((f"{where}.function.{key}", "unknown function field; allowed: "
                                 f"{', '.join(FunctionSpec.model_fields)}"))
                continue
            if fname == "profile" and not PROVIDER_KINDS[kind].has_profiles:
                problems.append((f"{where}.function.{key}", "only local deployments have sandbox "
                                 f"profiles (this one is {kind!r})"))
                continue
            try:
                fn[fname] = field_adapter(FunctionSpec, fname).validate_python(value)
            except ValidationError as exc:
                problems.extend(format_errors(exc, ("deployments", name, "function", key)))
        out[name] = Deployment(name=name, kind=kind, settings=settings, function=fn)
    return out


def deployment_levels(name: str, raw_levels: list, deployments: dict[str, Deployment],
                       problems: list[tuple[str, str]]) -> list[str]:
    """The levels of the deployment factor: names of the spec's deployments, each once."""
    if not deployments:
        problems.append((f"factors.{name}", "needs a deployments: section naming each level "
                         "(kind, settings and function fields of each deployment)"))
        return []
    levels: list[str] = []
    for i, raw in enumerate(raw_levels):
        if raw not in deployments:
            problems.append((f"factors.{name}[{i}]", f"must be one of the deployments "
                             f"{', '.join(deployments)} (got {raw!r})"))
        elif raw in levels:
            problems.append((f"factors.{name}[{i}]", f"{raw!r} repeats an earlier level"))
        else:
            levels.append(raw)
    return levels
