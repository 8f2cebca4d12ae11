"""One invocation as every provider sees it: the request a provider prepares for the burst
driver's asynchronous client (:mod:`faascope.driver.aclient`), and the result of any invocation.

The driver only sends and times; which URL, headers and body an invocation needs, and what its
reply means, is the provider's business (the Lambda API for ``local`` and ``aws``, agent URLs for
``http``). So a provider returns a :class:`RequestFactory` from
:meth:`~faascope.providers.base.Provider.async_requests`: it prepares requests ahead of their
scheduled time (serialised and, for Lambda, signed; see docs/concurrency.md) and turns each reply
into an :class:`InvokeResult`, the type every provider's synchronous ``invoke`` returns too.

These types live here, below the driver and below the provider interface, because providers
must not import the driver.

Statuses of an :class:`InvokeResult`:

- ``ok``: the agent answered and its workload ran (``response["ok"]`` is true);
- ``agent_error``: the agent answered with ``ok: false`` (``error_type`` = the agent's error type,
  e.g. ``InvalidRequest``, ``IOError``, ``NoSpace``);
- ``function_error``: the platform reported a function error (``X-Amz-Function-Error``: the
  function crashed, timed out or ran out of memory) or the reply was not an agent response;
- ``client_error``: the call itself failed (throttling, connection refused, read timeout …).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from faascope.schemas.response import parse_response


#: error types of a call whose request never left this machine (connection refused, DNS,
#: connect timeout; botocore's names, which every provider uses): no function can have run, so
#: nothing is recorded and the campaign stops (docs/reliability.md)
NEVER_SENT = ("EndpointConnectionError", "ConnectTimeoutError")
#: the error-type prefix of a failed call whose request may have reached the function (a reset,
#: a dropped connection or a read timeout after sending): recorded, never resent
MAY_HAVE_RUN = "MayHaveRun."


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
    # the agent's fields are read through AgentResponse (one reading of the response schema)
    agent = parse_response(parsed)
    if not agent.ok:
        out["status"] = "agent_error"
        out["error_type"] = agent.error_type or "AgentError"
        out["error_message"] = agent.error_message
    return out


def classify_user(body: bytes | None, function_error: str | None,
                  cold: Optional[bool] = None) -> dict[str, Any]:
    """Status, response and error fields of a reply from a user's own function (spec
    ``function.code``): no agent answers, so any reply without ``X-Amz-Function-Error`` is
    ``ok`` and what the function returned is kept whole under ``response["returned"]`` (its
    JSON, or its text when it is not JSON); a function error is ``function_error`` with
    Lambda's ``errorType``/``errorMessage``. ``response["cold"]`` is the platform's word on the
    start (the local platform's X-Faascope-Cold, or an Init Duration in the REPORT line), so
    the flat view's ``cold`` column is filled as the agent's own ``cold`` fills it."""
    text = body.decode("utf-8", errors="replace") if body is not None else None
    try:
        returned: Any = json.loads(text) if text else None
    except ValueError:
        returned = text
    out: dict[str, Any] = {"status": "ok", "response": {"returned": returned, "cold": cold},
                           "raw_payload": None, "function_error": function_error,
                           "error_type": None, "error_message": None}
    if function_error:
        out["status"] = "function_error"
        if isinstance(returned, dict):
            out["error_type"] = str(returned.get("errorType") or function_error)
            msg = returned.get("errorMessage")
            out["error_message"] = msg if msg is None or isinstance(msg, str) else json.dumps(msg)
        else:
            out["error_type"] = function_error
    return out


@dataclass
class Prepared:
    """A request ready to go: URL, headers (signed), body; ``endpoint`` is what may be recorded."""

    url: Any  # yarl.URL (already encoded)
    headers: dict[str, str]
    body: bytes
    endpoint: str
    protocol: str  # "lambda" or "http"
    endpoint_name: Optional[str] = None
    #: a health check (``dry_run`` on agent URLs) is a GET without a body; everything else POSTs
    method: str = "POST"
    #: the function it invokes (Lambda API requests), so its reply is read as that function's
    function_name: Optional[str] = None


@dataclass
class Timing:
    """When one request went out and its reply came back, wall-clock Unix ns (the client's)."""

    send_ns: Optional[int] = None
    headers_ns: Optional[int] = None
    end_ns: Optional[int] = None
    connection: str = ""  # "reused" or "new"


class RequestFactory:
    """Builds :class:`Prepared` requests for a provider and parses their replies."""

    protocol = "abstract"

    def prepare(self, name: str, payload: dict | bytes, *, dry_run: bool = False) -> Prepared:
        """The invocation of function ``name`` with ``payload``; ``dry_run``: a request that only
        opens a connection (nothing runs in a function)."""
        raise NotImplementedError

    def parse(self, prep: Prepared, status: int, headers: Any, body: bytes,
              timing: Timing) -> InvokeResult:
        """The result of one reply to ``prep``, sent once (``attempts`` 1, ``retries`` 0);
        ``headers`` is a case-insensitive mapping (aiohttp's)."""
        raise NotImplementedError

    def describe(self) -> dict:
        """What the campaign records about the client."""
        return {"protocol": self.protocol}
