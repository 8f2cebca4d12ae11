"""Which local stand-ins an agent payload needs: the one place that reads workloads for it.

It works on the agent's request as JSON (``{"workload": {"kind": ..., ...}}``, the schema in
``schemas/agent-request.schema.json``), not on the spec's models, so every kind the agent knows
is covered whatever the spec layer models. A payload that names its own server (``endpoint``,
``sink``, ``lambda_endpoint``) needs no stand-in for it: that server is the user's business.

Stand-in names are those of :data:`faascope.standins.KINDS`; ``lambda_api`` says a function
invokes functions (``transfer``), so the platform's own API must be reachable from sandboxes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

#: the defaults of the request schema that select a backend
DEFAULT_KV_BACKEND = "redis"
DEFAULT_TRANSFER_VIA = "inline"
DEFAULT_APP_STORAGE = "object"


@dataclass
class Needs:
    kinds: set[str] = field(default_factory=set)
    #: buckets named by payloads (the stand-in's default bucket is always there)
    buckets: set[str] = field(default_factory=set)
    #: DynamoDB tables named by payloads (the default table is always there)
    tables: set[str] = field(default_factory=set)
    lambda_api: bool = False
    #: a package is over Lambda's direct-upload limit: it is deployed through the S3 stand-in,
    #: which the platform must read code from (Code.S3Bucket/S3Key)
    code_s3: bool = False

    def __bool__(self) -> bool:
        return bool(self.kinds) or self.lambda_api or self.code_s3

    def merge(self, other: "Needs") -> "Needs":
        self.kinds |= other.kinds
        self.buckets |= other.buckets
        self.tables |= other.tables
        self.lambda_api = self.lambda_api or other.lambda_api
        self.code_s3 = self.code_s3 or other.code_s3
        return self


def _object(w: Mapping, n: Needs) -> None:
    if w.get("api", "s3") == "s3" and not w.get("endpoint"):
        n.kinds.add("s3")
        if w.get("bucket"):
            n.buckets.add(w["bucket"])


def _kv(w: Mapping, n: Needs) -> None:
    if w.get("endpoint"):
        return
    backend = w.get("backend", DEFAULT_KV_BACKEND)
    if backend == "redis":
        n.kinds.add("redis")
    elif backend == "dynamodb":
        n.kinds.add("dynamodb")
        if w.get("table"):
            n.tables.add(w["table"])


def _sharedfs(w: Mapping, n: Needs) -> None:
    n.kinds.add("shared")


def _network(w: Mapping, n: Needs) -> None:
    if not w.get("sink"):
        n.kinds.add("sink")


def _transfer(w: Mapping, n: Needs) -> None:
    if not w.get("lambda_endpoint"):
        n.lambda_api = True
    via = w.get("via", DEFAULT_TRANSFER_VIA)
    if via == "object":
        _object(w, n)
    elif via == "kv":
        _kv(w, n)


def _app(w: Mapping, n: Needs) -> None:
    storage = w.get("storage", DEFAULT_APP_STORAGE)
    if storage == "object":
        _object(w, n)
    elif storage == "kv":
        _kv(w, n)
    elif storage == "sharedfs":
        _sharedfs(w, n)


#: kind -> what it needs; kinds not here (noop, spin, fileio, unknown ones) need nothing
BY_KIND = {"object": _object, "kv": _kv, "sharedfs": _sharedfs, "network": _network,
           "transfer": _transfer, "app": _app}


def needs(payload: Mapping) -> Needs:
    """The stand-ins one payload needs; ``payload`` is the agent request or its ``workload``."""
    w = payload.get("workload", payload)
    n = Needs()
    if isinstance(w, Mapping) and w.get("kind") in BY_KIND:
        BY_KIND[w["kind"]](w, n)
    return n


#: the stand-ins a user's own function may name (spec ``function.code.uses``), as the agent
#: workloads that need the same (faascope.specs.model.CODE_USES lists the names)
USES: dict[str, dict] = {"s3": {"kind": "object"},
                         "dynamodb": {"kind": "kv", "backend": "dynamodb"},
                         "redis": {"kind": "kv", "backend": "redis"}}


def uses_payloads(uses: Iterable[str]) -> list[dict]:
    """Payloads whose needs are the stand-ins a user's function uses (its own payload is its
    event, which says nothing about them)."""
    return [{"workload": USES[u]} for u in uses]


def needs_of(payloads: Iterable[Mapping]) -> Needs:
    """What all of a campaign's payloads need together."""
    total = Needs()
    for p in payloads:
        total.merge(needs(p))
    return total
