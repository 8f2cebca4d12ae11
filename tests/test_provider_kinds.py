"""One descriptor per provider kind (faascope.provider_kinds): every kind the spec schema accepts
has one, its settings model is the one the spec validates with, and no code outside the descriptor
module and ``faascope/providers/`` compares a kind with a provider's name (it asks the descriptor).
The comparisons are read from the source with ``ast``, as tests/test_structure.py reads imports."""
from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest
from own_sources import python_sources

from faascope.provider_kinds import PROFILE_TMP, PROFILE_VCPU, PROVIDER_KINDS
from faascope.specs.model import PROVIDER_SETTINGS, DeploymentSpec, FunctionSpec, ProviderSpec

PKG = Path(__file__).resolve().parents[1] / "src" / "faascope"
#: where a provider's name may be compared with a kind: the descriptors and the providers
ALLOWED = (PKG / "provider_kinds", PKG / "providers")
#: names of provider kinds that mean nothing else in the code base; "local" and "http" also
#: name a site ("local" or "cloud", a descriptor's ``where``) and a URL scheme, so they count
#: only where the other side of the comparison names a kind, provider or cloud
ALWAYS = {"aws", "gcp"}
KIND_WORDS = ("kind", "provider", "cloud")


def _literal_args(annotation) -> set[str]:
    """The values of the Literal in ``annotation`` (also inside Optional[...])."""
    if typing.get_origin(annotation) is typing.Literal:
        return set(typing.get_args(annotation))
    return set().union(*(_literal_args(a) for a in typing.get_args(annotation)))


def test_every_kind_the_schema_accepts_has_a_descriptor():
    kinds = _literal_args(ProviderSpec.model_fields["kind"].annotation)
    assert kinds == {"local", "aws", "gcp", "http"}  # the schema read right
    assert set(PROVIDER_KINDS) == kinds
    assert _literal_args(DeploymentSpec.model_fields["kind"].annotation) == kinds
    for name, d in PROVIDER_KINDS.items():
        assert d.name == name
        assert PROVIDER_SETTINGS[name].__name__ == d.settings_model


def test_descriptors_answer_consistently():
    profiles = _literal_args(FunctionSpec.model_fields["profile"].annotation)
    assert set(PROFILE_TMP) == profiles == set(PROFILE_VCPU)
    for d in PROVIDER_KINDS.values():
        if d.has_profiles:
            assert d.default_profile in profiles
            assert d.cpu_rule is None and d.tmp is None  # the profile says
        else:
            assert d.cpu_rule in PROFILE_VCPU and PROFILE_VCPU[d.cpu_rule] is not None
        assert (d.price_from_setting is None) == (d.default_price_platform is not None)


def _mentions_kind(node: ast.AST) -> bool:
    text = ast.unparse(node).lower()
    return any(w in text for w in KIND_WORDS)


def _kind_names(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & set(PROVIDER_KINDS)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return set().union(*(_kind_names(e) for e in node.elts)) if node.elts else set()
    return set()


def kind_comparisons(src: str) -> list[tuple[int, str]]:
    """(line, source) of each comparison of a kind with a provider's name in ``src``."""
    bad = []
    for node in ast.walk(ast.parse(src)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for i, side in enumerate(sides):
            names = _kind_names(side)
            others = [s for j, s in enumerate(sides) if j != i]
            if names & ALWAYS or (names and any(_mentions_kind(o) for o in others)):
                bad.append((node.lineno, ast.unparse(node)))
                break
    return bad


def test_no_kind_comparison_outside_the_descriptors():
    bad = []
    for p in python_sources():
        if any(p.is_relative_to(a) for a in ALLOWED):
            continue
        bad += [f"{p.relative_to(PKG.parent)}:{line}: {text}"
                for line, text in kind_comparisons(p.read_text())]
    assert not bad, ("ask faascope.provider_kinds.PROVIDER_KINDS instead of comparing a kind "
                     "with a provider's name:\n" + "\n".join(bad))


@pytest.mark.parametrize("src, found", [
    ('if provider_kind == "aws":\n    pass\n', 1),
    ('x = kind in ("aws", "gcp")\n', 1),
    ('x = spec.provider.kind != "local"\n', 1),
    ('x = described.get("kind") != "local"\n', 1),
    ('x = cloud == "gcp"\n', 1),
    ('x = where == "local"\n', 0),          # a site, the descriptor's answer
    ('x = url.scheme == "http"\n', 0),
    ('x = d.where == "local" and d.local\n', 0),
])
def test_the_check_sees_comparisons(src, found):
    assert len(kind_comparisons(src)) == found


@pytest.mark.parametrize("memory_mb", [128, 129, 256, 512, 1000, 1024, 1769, 2048, 3008, 4096, 10240])
def test_the_cpu_rules_name_the_functions_the_estimate_agrees_with(memory_mb):
    # the descriptor's CPU rule names a tiers function; the duration estimate's share of one CPU
    # (faascope.designs.estimate.cpu_share) is that function's vCPU, capped at one CPU
    from faascope.designs.estimate import cpu_share
    for rule, vcpu in PROFILE_VCPU.items():
        want = 1.0 if vcpu is None else min(1.0, vcpu(memory_mb))
        assert cpu_share(rule, memory_mb) == pytest.approx(want, rel=1e-12), rule
