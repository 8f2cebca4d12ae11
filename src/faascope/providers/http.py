"""The ``http`` provider: agents in HTTP mode behind any list of endpoints (Knative, OpenFaaS,
vHive, Cloud Run or Cloud Functions you deployed yourself, a self-hosted platform).

faascope deploys nothing here: the endpoints exist. Each invocation is ``POST <url>`` with the
agent's JSON payload (the agent serves ``POST /`` and ``POST /invoke``). Routing:

- ``round_robin``: every invocation goes to the next endpoint (of those that fit the cell);
- ``per_cell``: each cell keeps one endpoint, assigned in turn as cells first appear;
- ``per_function``: likewise per function configuration.

An endpoint may declare the memory it runs with (``{url, memory_mb}``); cells then go only to the
endpoints of their memory, and a cell whose memory no endpoint has is an error before anything
runs. Without declared memory, faascope cannot know or change it: the recorded configuration is the
spec's, and ``describe()`` says ``memory_controlled: false``. Cold starts cannot be forced.

Headers and URLs may carry credentials (``Authorization: Bearer ${OPENFAAS_TOKEN}``,
``https://host/fn?key=${KEY}``): ``${VAR}`` is read from the environment at invocation time, so
the secret never enters the spec (which is stored verbatim with the results); the values, URL user
info and query strings are never recorded (``describe()`` and error messages show redacted URLs
and header names only).

The client is :class:`HTTPInvoker` (``http.client``, one persistent connection per endpoint):
send time just before the request is written, headers time when the status line and headers have
been read (the agent replies when the workload is done, so this is the first byte), end time when
the body has been read; ``max_attempts`` attempts on connection errors and HTTP 429/502/503/504,
every attempt counted.
"""
from __future__ import annotations

import http.client
import itertools
import json
import os
import re
import socket
import ssl
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Optional

from faascope.errors import BadInput, Failure
from faascope.providers.base import FunctionConfig, Provider
from faascope.providers.invocation import (
    MAY_HAVE_RUN,
    InvokeResult,
    Prepared,
    RequestFactory,
    Timing,
    classify,
)

RETRY_STATUS = {429, 502, 503, 504}
_ENV_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def redact_url(url: str) -> str:
    """The URL without user info, query string or fragment (they may hold credentials)."""
    u = urllib.parse.urlsplit(url)
    host = u.hostname or ""
    if u.port:
        host = f"{host}:{u.port}"
    q = "?<redacted>" if u.query else ""
    return urllib.parse.urlunsplit((u.scheme, host, u.path, "", "")) + q


def expand_env(value: str) -> str:
    def sub(m: re.Match) -> str:
        v = os.environ.get(m.group(1))
        if v is None:
            raise Failure(f"the environment variable {m.group(1)} (used in a provider header) is not set")
        return v
    return _ENV_RE.sub(sub, value)


def _peer_closed(sock) -> bool:
    """True when an idle connection is readable: the peer closed it (or sent something unasked)."""
    import select

    try:
        r, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(r)


class HTTPInvoker:
    """POST JSON to agents with honest timestamps and counted retries."""

    def __init__(self, read_timeout_s: float = 960.0, connect_timeout_s: float = 10.0,
                 max_attempts: int = 1):
        self.read_timeout_s = read_timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.max_attempts = max_attempts
        self._conns: dict[tuple[str, str, int], http.client.HTTPConnection] = {}

    def _conn(self, u: urllib.parse.SplitResult) -> http.client.HTTPConnection:
        port = u.port or (443 if u.scheme == "https" else 80)
        key = (u.scheme, u.hostname or "", port)
        c = self._conns.get(key)
        if c is None:
            if u.scheme == "https":
                c = http.client.HTTPSConnection(u.hostname, port, timeout=self.connect_timeout_s,
                                                context=ssl.create_default_context())
            else:
                c = http.client.HTTPConnection(u.hostname, port, timeout=self.connect_timeout_s)
            self._conns[key] = c
        return c

    def _drop(self, u: urllib.parse.SplitResult) -> None:
        port = u.port or (443 if u.scheme == "https" else 80)
        c = self._conns.pop((u.scheme, u.hostname or "", port), None)
        if c is not None:
            c.close()

    def post(self, url: str, payload: bytes, headers: Optional[dict[str, str]] = None,
             headers_fn: Optional[Callable[[], dict[str, str]]] = None,
             display: Optional[str] = None) -> InvokeResult:
        """POST ``payload`` to ``url``; ``display`` is the URL as it may be recorded (default: the
        URL without user info and query)."""
        shown = display or redact_url(url)
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise BadInput(f"not an http(s) URL: {shown}", field="provider.settings.endpoints")
        path = (u.path or "/") + (f"?{u.query}" if u.query else "")
        attempts = 0
        wall0, pc0 = time.time_ns(), time.perf_counter_ns()

        def wall(pc: Optional[int]) -> Optional[int]:
            return None if pc is None else wall0 + (pc - pc0)

        last: Optional[InvokeResult] = None
        reached = False
        while attempts < self.max_attempts:
            attempts += 1
            h = {"Content-Type": "application/json", "Connection": "keep-alive"}
            if headers_fn is not None:
                h.update(headers_fn())  # e.g. an ID token, fetched before the clock starts
            if headers:
                h.update(headers)
            send_pc = headers_pc = None
            try:
                conn = self._conn(u)
                if conn.sock is not None and _peer_closed(conn.sock):
                    conn.close()  # an idle keep-alive connection the server has dropped
                if conn.sock is None:
                    conn.connect()
                conn.sock.settimeout(self.read_timeout_s)
                send_pc = time.perf_counter_ns()
                conn.request("POST", path, body=payload, headers=h)
                resp = conn.getresponse()
                headers_pc = time.perf_counter_ns()
                body = resp.read()
                end_pc = time.perf_counter_ns()
            except (OSError, http.client.HTTPException) as exc:
                end_pc = time.perf_counter_ns()
                self._drop(u)
                kind = "ReadTimeout" if isinstance(exc, (socket.timeout, TimeoutError)) else type(exc).__name__
                sent = send_pc is not None or reached
                if sent:
                    # the request left (now or at an earlier attempt): the function may have run
                    kind = MAY_HAVE_RUN + kind
                elif isinstance(exc, OSError):
                    # connecting failed at every attempt so far: named as every provider names
                    # a call that never left this machine (the campaign stops, records nothing)
                    kind = "ConnectTimeoutError" if kind == "ReadTimeout" else "EndpointConnectionError"
                reached = reached or send_pc is not None
                last = InvokeResult(status="client_error", error_type=kind,
                                    error_message=f"POST {shown}: {type(exc).__name__}: {exc}",
                                    send_ns=wall(send_pc), headers_ns=wall(headers_pc),
                                    end_ns=wall(end_pc), attempts=attempts, retries=attempts - 1,
                                    platform={"endpoint": shown})
                if sent:
                    break  # the request may have run: never resend it
                continue
            if resp.getheader("Connection", "").lower() == "close":
                self._drop(u)
            fields = classify(body, None)
            meta = {"endpoint": shown, "http_status": resp.status}
            for k in ("x-cloud-trace-context", "x-request-id", "traceparent"):
                if resp.getheader(k):
                    meta[k.replace("-", "_")] = resp.getheader(k)
            if fields["response"] is None:
                # not an agent reply: a throttle, a platform error page, a crash
                status = "client_error" if resp.status == 429 else "function_error"
                fields.update(status=status, error_type=f"HTTP{resp.status}" if resp.status >= 300
                              else fields["error_type"])
            last = InvokeResult(**fields, send_ns=wall(send_pc), headers_ns=wall(headers_pc),
                                end_ns=wall(end_pc), attempts=attempts, retries=attempts - 1,
                                request_id=resp.getheader("x-request-id"), platform=meta)
            if resp.status in RETRY_STATUS and fields["response"] is None:
                continue
            break
        assert last is not None
        return last

    def close(self) -> None:
        for c in self._conns.values():
            c.close()
        self._conns.clear()


@dataclass
class Endpoint:
    url: str
    memory_mb: Optional[int] = None
    name: Optional[str] = None
    headers: Optional[dict[str, str]] = None


def parse_endpoints(raw: list) -> list[Endpoint]:
    out = []
    for i, e in enumerate(raw):
        where = f"provider.settings.endpoints[{i}]"
        if isinstance(e, str):
            e = {"url": e}
        if not isinstance(e, dict) or "url" not in e:
            raise BadInput("must be a URL or a mapping with url (and optional memory_mb, name, headers)",
                           field=where)
        unknown = set(e) - {"url", "memory_mb", "name", "headers"}
        if unknown:
            raise BadInput(f"unknown field(s) {', '.join(sorted(unknown))}; allowed: url, memory_mb, "
                           "name, headers", field=where)
        u = urllib.parse.urlsplit(str(e["url"]))
        if u.scheme not in ("http", "https") or not u.hostname:
            raise BadInput(f"not an http(s) URL: {redact_url(str(e['url']))}", field=f"{where}.url")
        mem = e.get("memory_mb")
        if mem is not None and (isinstance(mem, bool) or not isinstance(mem, int) or mem <= 0):
            raise BadInput(f"must be a positive whole number of MB (got {mem!r})", field=f"{where}.memory_mb")
        out.append(Endpoint(str(e["url"]), mem, e.get("name"), e.get("headers")))
    return out


class HTTPProvider(Provider):
    kind = "http"

    def __init__(self, endpoints: list, *, routing: str = "round_robin",
                 headers: Optional[dict[str, str]] = None, max_attempts: int = 1,
                 read_timeout_s: float = 960.0, connect_timeout_s: float = 10.0):
        self.endpoints = parse_endpoints(endpoints) if endpoints and not isinstance(endpoints[0], Endpoint) \
            else list(endpoints)
        if not self.endpoints:
            raise BadInput("give at least one endpoint", field="provider.settings.endpoints")
        if routing not in ("round_robin", "per_cell", "per_function"):
            raise BadInput("must be round_robin, per_cell or per_function", field="provider.settings.routing")
        self.routing = routing
        self.headers = dict(headers or {})
        self.invoker = HTTPInvoker(read_timeout_s, connect_timeout_s, max_attempts)
        self._config: dict[str, FunctionConfig] = {}
        self._cycle: dict[Optional[int], Any] = {}
        self._assigned: dict[Any, Endpoint] = {}
        self.memory_controlled = any(e.memory_mb is not None for e in self.endpoints)

    @classmethod
    def from_settings(cls, s: Any) -> "HTTPProvider":
        g = (lambda k, d=None: s.get(k, d)) if isinstance(s, dict) else (lambda k, d=None: getattr(s, k, d))
        return cls(g("endpoints") or [], routing=g("routing", "round_robin"), headers=g("headers") or {},
                   max_attempts=g("max_attempts", 1), read_timeout_s=g("read_timeout_s", 960.0),
                   connect_timeout_s=g("connect_timeout_s", 10.0))

    def describe(self) -> dict:
        return {"kind": self.kind, "routing": self.routing,
                "endpoints": [{"url": redact_url(e.url), "memory_mb": e.memory_mb, "name": e.name}
                              for e in self.endpoints],
                "header_names": sorted(set(self.headers) | {k for e in self.endpoints for k in (e.headers or {})}),
                "memory_controlled": self.memory_controlled}

    # ------------------------------------------------------------------ lifecycle
    def _eligible(self, config: FunctionConfig) -> list[Endpoint]:
        if not self.memory_controlled:
            return self.endpoints
        out = [e for e in self.endpoints if e.memory_mb == config.memory_mb]
        if not out:
            have = sorted({e.memory_mb for e in self.endpoints if e.memory_mb is not None})
            raise Failure(f"no endpoint runs with {config.memory_mb} MB (endpoints declare "
                          f"{', '.join(map(str, have))} MB); add one or drop that level")
        return out

    def deploy(self, name: str, config: FunctionConfig) -> None:
        self._eligible(config)
        self._config[name] = config

    def update_configuration(self, name: str, config: FunctionConfig) -> None:
        self._eligible(config)  # nothing to change remotely: routing follows the memory
        self._config[name] = config

    def force_cold(self, name: str) -> None:
        raise Failure("the http provider cannot force cold starts (it does not control the "
                      "platform); use design.cold: false")

    def teardown(self, name: str) -> None:
        self._config.pop(name, None)

    def pick(self, name: str, payload: dict) -> Endpoint:
        config = self._config.get(name)
        eligible = self._eligible(config) if config else self.endpoints
        mem = config.memory_mb if (config and self.memory_controlled) else None
        if self.routing == "round_robin":
            if mem not in self._cycle:
                self._cycle[mem] = itertools.cycle(eligible)
            return next(self._cycle[mem])
        key: Any = name if self.routing == "per_function" else (name, json.dumps(payload, sort_keys=True))
        if key not in self._assigned:
            if mem not in self._cycle:
                self._cycle[mem] = itertools.cycle(eligible)
            self._assigned[key] = next(self._cycle[mem])
        return self._assigned[key]

    def endpoint_headers(self, ep: Endpoint) -> dict[str, str]:
        """The headers to send to ``ep`` (provider-wide, then the endpoint's own), with ``${VAR}``
        read from the environment now; never to be recorded."""
        h = {k: expand_env(v) for k, v in self.headers.items()}
        h.update({k: expand_env(v) for k, v in (ep.headers or {}).items()})
        return h

    def async_requests(self, *, log_tail: bool = False) -> "HTTPRequests":
        return HTTPRequests(self)  # agents in HTTP mode have no log tail

    def invoke(self, name: str, payload: dict) -> InvokeResult:
        ep = self.pick(name, payload)
        body = json.dumps(payload).encode()
        res = self.invoker.post(expand_env(ep.url), body, headers_fn=lambda: self.endpoint_headers(ep),
                                display=redact_url(ep.url))
        if ep.name and res.platform is not None:
            res.platform["endpoint_name"] = ep.name
        return res

    def close(self) -> None:
        self.invoker.close()


class HTTPRequests(RequestFactory):
    """The burst driver's requests to agents in HTTP mode (the ``http`` provider's endpoints, routed
    as :meth:`HTTPProvider.pick` routes): POST the payload; a dry run is a ``GET /healthz``."""

    protocol = "http"

    def __init__(self, provider: HTTPProvider):
        self.provider = provider

    def prepare(self, name: str, payload: dict | bytes, *, dry_run: bool = False) -> Prepared:
        from yarl import URL

        pl = json.loads(payload) if isinstance(payload, bytes) else payload
        ep = self.provider.pick(name, pl)
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        headers.update(self.provider.endpoint_headers(ep))
        url = expand_env(ep.url)
        method = "POST"
        if dry_run:  # the agent's health check: opens a connection without running anything
            u = urllib.parse.urlsplit(url)
            url = urllib.parse.urlunsplit((u.scheme, u.netloc, "/healthz", "", ""))
            method = "GET"
        return Prepared(url=URL(url), headers=headers, body=body, endpoint=redact_url(ep.url),
                        protocol="http", endpoint_name=ep.name, method=method)

    def parse(self, prep: Prepared, status: int, headers: Any, body: bytes,
              timing: Timing) -> InvokeResult:
        fields = classify(body, None)
        meta: dict[str, Any] = {"endpoint": prep.endpoint, "http_status": status}
        if prep.endpoint_name:
            meta["endpoint_name"] = prep.endpoint_name
        if fields["response"] is None:
            # not an agent reply: a throttle, a platform error page, a crash (as HTTPInvoker.post)
            st = "client_error" if status == 429 else "function_error"
            fields.update(status=st, error_type=f"HTTP{status}" if status >= 300 else fields["error_type"])
        return InvokeResult(**fields, request_id=headers.get("x-request-id"), platform=meta,
                            send_ns=timing.send_ns, headers_ns=timing.headers_ns,
                            end_ns=timing.end_ns, attempts=1, retries=0)
