"""The burst driver's asynchronous invoker: one asyncio event loop, one aiohttp connection pool,
no thread per request.

Why not boto3 (synchronous: a thread per in-flight request, ~0.3 ms of Python before each send)
or aiobotocore (it pins botocore to a narrow range, so installing it moves the botocore that
boto3 and the rest of faascope use; see docs/concurrency.md): the Lambda ``Invoke`` call is one
REST request, so it is sent with aiohttp and signed by **the boto3 client's own request signer**
(SigV4, the same credential chain, region and signing name as every other faascope call). The
same code reaches AWS and the local platform; only the endpoint differs.

Requests are prepared (serialised and signed) before their scheduled time, so the send path is
only aiohttp's request write. Timestamps, all wall-clock Unix ns (``time.time_ns``, the clock the
agent's ``received_ns`` uses on the same machine):

- ``send_ns``: aiohttp's ``on_request_headers_sent`` trace signal (the request line and headers
  are in the socket's buffer; the small body follows in the same write burst);
- ``headers_ns``: the status line and headers of the reply have been read (Lambda replies only
  when the function has returned: the first byte);
- ``end_ns``: the body has been read.

Every request is sent once. A throttle (HTTP 429 ``TooManyRequestsException``), a connection
error or a timeout is a ``client_error`` result with its type, never retried.
"""
from __future__ import annotations

import asyncio
import base64
import json
import resource
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Optional

from faascope.errors import BadInput, Failure
from faascope.providers.base import InvokeResult, Provider, classify

INVOKE_PATH = "/2015-03-31/functions/{name}/invocations"


def _aiohttp():
    try:
        import aiohttp
    except ModuleNotFoundError:  # pragma: no cover - a dependency of faascope
        raise Failure("the burst driver needs aiohttp (pip install aiohttp)") from None
    return aiohttp


def raise_fd_limit(want: int) -> int:
    """Raise the soft open-files limit towards ``want`` (a socket per connection); returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # pragma: no cover - not allowed here
            pass
    return soft


@dataclass
class Prepared:
    """A request ready to go: URL, headers (signed), body; ``endpoint`` is what may be recorded."""

    url: Any  # yarl.URL (already encoded)
    headers: dict[str, str]
    body: bytes
    endpoint: str
    protocol: str  # "lambda" or "http"
    endpoint_name: Optional[str] = None


@dataclass
class Timing:
    send_ns: Optional[int] = None
    headers_ns: Optional[int] = None
    end_ns: Optional[int] = None
    connection: str = ""  # "reused" or "new"


class RequestFactory:
    """Builds :class:`Prepared` requests for a provider."""

    protocol = "abstract"

    def prepare(self, name: str, payload: dict | bytes, *, dry_run: bool = False) -> Prepared:
        raise NotImplementedError

    def describe(self) -> dict:
        return {"protocol": self.protocol}


class LambdaRequests(RequestFactory):
    """Lambda ``Invoke`` requests signed with the boto3 client's own signer (AWS and local)."""

    protocol = "lambda"

    def __init__(self, client: Any, log_tail: bool = False):
        self.client = client
        self.endpoint = client.meta.endpoint_url.rstrip("/")
        self.region = client.meta.region_name
        self.log_tail = log_tail
        signer = getattr(client, "_request_signer", None)
        if signer is None:  # pragma: no cover - botocore has had it since 2015
            raise Failure("cannot find the boto3 client's request signer")
        self.signer = signer

    def prepare(self, name: str, payload: dict | bytes, *, dry_run: bool = False) -> Prepared:
        from botocore.awsrequest import AWSRequest
        from yarl import URL

        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        url = self.endpoint + INVOKE_PATH.format(name=urllib.parse.quote(name, safe=""))
        headers = {"X-Amz-Invocation-Type": "DryRun" if dry_run else "RequestResponse",
                   "X-Amz-Log-Type": "Tail" if (self.log_tail and not dry_run) else "None",
                   "Content-Type": "application/json"}
        req = AWSRequest(method="POST", url=url, data=body, headers=headers)
        self.signer.sign("Invoke", req)  # SigV4 with the client's credentials, region, service
        return Prepared(url=URL(url, encoded=True), headers=dict(req.headers.items()), body=body,
                        endpoint=self.endpoint, protocol="lambda")

    def describe(self) -> dict:
        return {"protocol": "lambda", "endpoint_url": self.endpoint, "region": self.region,
                "signing": "SigV4 (the boto3 client's signer)"}


class HTTPRequests(RequestFactory):
    """Agents in HTTP mode (the ``http`` provider's endpoints): POST the payload."""

    protocol = "http"

    def __init__(self, provider: Any):
        self.provider = provider

    def prepare(self, name: str, payload: dict | bytes, *, dry_run: bool = False) -> Prepared:
        from yarl import URL

        from faascope.providers.http import expand_env, redact_url

        pl = json.loads(payload) if isinstance(payload, bytes) else payload
        ep = self.provider.pick(name, pl)
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        headers.update(self.provider._headers(ep))
        url = expand_env(ep.url)
        if dry_run:  # the agent's health check: opens a connection without running anything
            u = urllib.parse.urlsplit(url)
            url = urllib.parse.urlunsplit((u.scheme, u.netloc, "/healthz", "", ""))
        return Prepared(url=URL(url), headers=headers, body=body, endpoint=redact_url(ep.url),
                        protocol="http", endpoint_name=ep.name)


def request_factory(provider: Provider, log_tail: bool = False) -> RequestFactory:
    """The request factory for a provider: the Lambda API (local, aws) or agent URLs (http)."""
    client = getattr(provider, "client", None)
    if client is not None and getattr(getattr(client, "meta", None), "service_model", None) is not None \
            and client.meta.service_model.service_name == "lambda":
        return LambdaRequests(client, log_tail=log_tail)
    if getattr(provider, "kind", "") == "http":
        return HTTPRequests(provider)
    raise BadInput(f"bursts need the Lambda API (providers local, aws) or agent URLs (http); the "
                   f"{getattr(provider, 'kind', '?')!r} provider is not supported yet",
                   field="provider.kind")


def _error_type(headers: Any, body: bytes) -> tuple[str, Optional[str]]:
    et = headers.get("X-Amzn-ErrorType") or ""
    et = et.split(":", 1)[0]
    msg = None
    try:
        d = json.loads(body.decode("utf-8", errors="replace")) if body else None
    except ValueError:
        d = None
    if isinstance(d, dict):
        et = et or str(d.get("Type") or d.get("__type") or "")
        msg = d.get("message") or d.get("Message") or d.get("errorMessage")
    elif body:
        msg = body[:300].decode("utf-8", errors="replace")
    return et, msg


def parse_reply(prep: Prepared, status: int, headers: Any, body: bytes, t: Timing) -> InvokeResult:
    """An :class:`InvokeResult` from an HTTP reply (the same statuses as the boto3 provider)."""
    common = dict(send_ns=t.send_ns, headers_ns=t.headers_ns, end_ns=t.end_ns, attempts=1,
                  retries=0)
    if prep.protocol == "lambda":
        rid = headers.get("X-Amzn-RequestId") or headers.get("x-amzn-requestid")
        extra = {k.lower()[len("x-faascope-"):].replace("-", "_"): v for k, v in headers.items()
                 if k.lower().startswith("x-faascope-")}
        if status >= 300:
            et, msg = _error_type(headers, body)
            if not et:
                et = "TooManyRequestsException" if status == 429 else f"HTTP{status}"
            return InvokeResult(status="client_error", error_type=et,
                                error_message=f"HTTP {status}: {msg}" if msg else f"HTTP {status}",
                                request_id=rid, platform=(extra or None), **common)
        fields = classify(body, headers.get("X-Amz-Function-Error"))
        tail = headers.get("X-Amz-Log-Result")
        if tail:
            try:
                tail = base64.b64decode(tail).decode("utf-8", errors="replace")
            except ValueError:
                pass
        return InvokeResult(**fields, request_id=rid, log_tail=tail or None,
                            platform=extra or None, **common)
    # agent over plain HTTP
    fields = classify(body, None)
    meta: dict[str, Any] = {"endpoint": prep.endpoint, "http_status": status}
    if prep.endpoint_name:
        meta["endpoint_name"] = prep.endpoint_name
    if fields["response"] is None:
        st = "client_error" if status == 429 else "function_error"
        fields.update(status=st, error_type=f"HTTP{status}" if status >= 300 else fields["error_type"])
    return InvokeResult(**fields, request_id=headers.get("x-request-id"), platform=meta, **common)


@dataclass
class ClientStats:
    sent: int = 0
    new_connections: int = 0
    reused_connections: int = 0
    errors: dict[str, int] = field(default_factory=dict)


class AsyncInvoker:
    """One aiohttp session (connection pool) for a whole campaign. Use inside a running loop."""

    def __init__(self, factory: RequestFactory, *, max_connections: int = 1000,
                 connect_timeout_s: float = 10.0, read_timeout_s: float = 960.0,
                 keepalive_s: float = 300.0):
        aiohttp = _aiohttp()
        self.factory = factory
        self.max_connections = max_connections
        raise_fd_limit(max_connections + 256)
        self.stats = ClientStats()
        trace = aiohttp.TraceConfig()
        trace.on_request_headers_sent.append(self._on_headers_sent)
        trace.on_connection_create_end.append(self._on_new_conn)
        trace.on_connection_reuseconn.append(self._on_reuse)
        self._connector = aiohttp.TCPConnector(limit=max_connections, limit_per_host=0,
                                               keepalive_timeout=keepalive_s, ttl_dns_cache=3600,
                                               enable_cleanup_closed=True)
        self.session = aiohttp.ClientSession(
            connector=self._connector, trace_configs=[trace], auto_decompress=False,
            skip_auto_headers=("User-Agent", "Accept-Encoding", "Accept"),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout_s,
                                          sock_read=read_timeout_s))

    # trace hooks: ``trace_request_ctx`` is the request's Timing
    async def _on_headers_sent(self, session, ctx, params):
        t = ctx.trace_request_ctx
        if t is not None:
            t.send_ns = time.time_ns()

    async def _on_new_conn(self, session, ctx, params):
        self.stats.new_connections += 1
        if ctx.trace_request_ctx is not None:
            ctx.trace_request_ctx.connection = "new"

    async def _on_reuse(self, session, ctx, params):
        self.stats.reused_connections += 1
        if ctx.trace_request_ctx is not None:
            ctx.trace_request_ctx.connection = "reused"

    async def send(self, prep: Prepared) -> InvokeResult:
        """Send once; never raises for a failed invocation (it is a result)."""
        aiohttp = _aiohttp()
        t = Timing()
        self.stats.sent += 1
        try:
            async with self.session.post(prep.url, data=prep.body, headers=prep.headers,
                                         trace_request_ctx=t, allow_redirects=False) as resp:
                t.headers_ns = time.time_ns()
                body = await resp.read()
                t.end_ns = time.time_ns()
                res = parse_reply(prep, resp.status, resp.headers, body, t)
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            t.end_ns = time.time_ns()
            # the names botocore gives the same failures, so analyses treat both clients alike
            if isinstance(exc, aiohttp.ClientConnectorError):
                kind = "EndpointConnectionError"  # never reached the endpoint
            elif isinstance(exc, aiohttp.ConnectionTimeoutError):
                kind = "ConnectTimeoutError"
            elif isinstance(exc, (asyncio.TimeoutError, aiohttp.SocketTimeoutError)):
                kind = "ReadTimeout"  # the function may have run
            else:
                kind = type(exc).__name__
            res = InvokeResult(status="client_error", error_type=kind,
                               error_message=f"{type(exc).__name__}: {exc}"[:500],
                               send_ns=t.send_ns, headers_ns=t.headers_ns, end_ns=t.end_ns,
                               attempts=1, retries=0)
        if res.status != "ok":
            self.stats.errors[res.error_type or res.status] = \
                self.stats.errors.get(res.error_type or res.status, 0) + 1
        if t.connection:
            res.platform = dict(res.platform or {}, connection=t.connection)
        return res

    async def preconnect(self, name: str, n: int) -> dict:
        """Open up to ``n`` pooled connections with DryRun invocations (Lambda) or health checks
        (HTTP agents), all at once; returns what happened. Nothing runs in a function."""
        if n <= 0:
            return {"requested": 0}
        n = min(n, self.max_connections)
        t0 = time.perf_counter()
        new0 = self.stats.new_connections
        preps = [self.factory.prepare(name, b"{}", dry_run=True) for _ in range(n)]

        errors: dict[str, int] = {}

        async def one(p: Prepared) -> int:
            try:
                method = "GET" if p.protocol == "http" else "POST"
                async with self.session.request(method, p.url, data=None if method == "GET" else p.body,
                                                headers=p.headers, trace_request_ctx=Timing()) as r:
                    await r.read()
                    return r.status
            except Exception as exc:  # noqa: BLE001 - counted, not fatal
                k = ("EndpointConnectionError" if isinstance(exc, aiohttp.ClientConnectorError)
                     else type(exc).__name__)
                errors[k] = errors.get(k, 0) + 1
                return -1

        aiohttp = _aiohttp()
        codes = await asyncio.gather(*(one(p) for p in preps))
        bad = [c for c in codes if c < 0 or c >= 300]
        return {"requested": n, "new_connections": self.stats.new_connections - new0,
                "failed": len(bad), "errors": errors, "seconds": round(time.perf_counter() - t0, 3)}

    async def close(self) -> None:
        await self.session.close()
        await asyncio.sleep(0)  # let the connector close its transports
