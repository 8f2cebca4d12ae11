"""The agent's response (agent-response.schema.json), parsed once into one typed object.

Code that reads a response asks :class:`AgentResponse` for ``received_ns`` or ``instance_id``
instead of walking ``resp["timings"]["received_ns"]`` by string keys in many places, so a renamed
field is one change here (and the schema), not a hunt.

Parsing is lenient on purpose: responses come from results files written by older versions, from
test doubles that send only the fields they care about, and from replies that are not the agent's
at all (a crashed function's error body). A missing or ill-typed field is None; nothing raises.
Whether a response is valid is the schema's question (tests/test_schemas.py), not this module's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

#: the result fields every workload kind has; the rest are the kind's own measures
COMMON_RESULT_FIELDS = ("kind", "elapsed_s", "bytes", "ops")


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _num(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) else None


def _obj(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


@dataclass(frozen=True)
class WorkloadResult:
    """The ``workload`` part of a successful response."""
    kind: Optional[str]
    #: the timed region only, seconds (monotonic clock)
    elapsed_s: Optional[float]
    bytes: Optional[int]
    ops: Optional[int]
    #: the kind's own measures (op, latency, direct_effective, read_s, hops …), as the agent sent them
    measures: dict[str, Any] = field(default_factory=dict)

    @property
    def op(self) -> Optional[str]:
        return _str(self.measures.get("op"))


def parse_workload_result(w: Any) -> Optional[WorkloadResult]:
    """A response's ``workload`` object (None when there is none)."""
    if not isinstance(w, dict):
        return None
    return WorkloadResult(kind=_str(w.get("kind")), elapsed_s=_num(w.get("elapsed_s")),
                          bytes=_int(w.get("bytes")), ops=_int(w.get("ops")),
                          measures={k: v for k, v in w.items() if k not in COMMON_RESULT_FIELDS})


@dataclass(frozen=True)
class AgentResponse:
    ok: bool
    #: the agent's own flag: the first invocation its process handled
    cold: Optional[bool]
    instance_id: Optional[str]
    started_at: Optional[str]
    #: the cgroup path: one sandbox
    sandbox: Optional[str]
    #: the (micro)VM boot: equal values mean co-location
    boot_id: Optional[str]
    cpu_quota: Optional[float]
    memory_limit_bytes: Optional[int]
    #: wall-clock Unix ns inside the function
    received_ns: Optional[int]
    workload_start_ns: Optional[int]
    workload_end_ns: Optional[int]
    workload: Optional[WorkloadResult]
    error_type: Optional[str]
    error_message: Optional[str]

    @property
    def kind(self) -> Optional[str]:
        return self.workload.kind if self.workload else None

    @property
    def elapsed_s(self) -> Optional[float]:
        return self.workload.elapsed_s if self.workload else None

    @property
    def bytes(self) -> Optional[int]:
        return self.workload.bytes if self.workload else None

    @property
    def ops(self) -> Optional[int]:
        return self.workload.ops if self.workload else None

    @property
    def measures(self) -> dict[str, Any]:
        return self.workload.measures if self.workload else {}


def parse_response(resp: Any) -> AgentResponse:
    """One agent response (a dict as decoded from JSON; anything else gives an empty, not-ok
    response)."""
    d = _obj(resp)
    inst, t, err = _obj(d.get("instance")), _obj(d.get("timings")), _obj(d.get("error"))
    cold = d.get("cold")
    return AgentResponse(
        ok=d.get("ok") is True,
        cold=cold if isinstance(cold, bool) else None,
        instance_id=_str(inst.get("id")) or None,
        started_at=_str(inst.get("started_at")),
        sandbox=_str(inst.get("sandbox")) or None,
        boot_id=_str(inst.get("boot_id")) or None,
        cpu_quota=_num(inst.get("cpu_quota")),
        memory_limit_bytes=_int(inst.get("memory_limit_bytes")),
        received_ns=_int(t.get("received_ns")),
        workload_start_ns=_int(t.get("workload_start_ns")),
        workload_end_ns=_int(t.get("workload_end_ns")),
        workload=parse_workload_result(d.get("workload")),
        error_type=_str(err.get("type")),
        error_message=_str(err.get("message")),
    )
