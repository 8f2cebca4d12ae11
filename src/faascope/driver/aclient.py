"""The burst driver's asynchronous invoker: one asyncio event loop, one aiohttp connection pool,
no thread per request.

Why not boto3 (synchronous: a thread per in-flight request, ~0.3 ms of Python before each send)
or aiobotocore (it pins botocore to a narrow range, so installing it moves the botocore that
boto3 and the rest of faascope use; see docs/concurrency.md): the Lambda ``Invoke`` call is one
REST request, so it is sent with aiohttp and signed by **the boto3 client's own request signer**
(SigV4, the same credential chain, region and signing name as every other faascope call). The
same code reaches AWS and the local platform; only the endpoint differs.

This module only sends and times. What to send and what a reply means belong to the provider:
``provider.async_requests(log_tail=...)`` returns a
:class:`~faascope.providers.invocation.RequestFactory` (the Lambda API for ``local`` and ``aws`` in
:mod:`faascope.providers.lambda_api`, agent URLs for ``http`` in :mod:`faascope.providers.http`).

Requests are prepared (serialised and signed) before their scheduled time, so the send path is
only aiohttp's request write. Timestamps, all wall-clock Unix ns (``time.time_ns``, the clock the
agent's ``received_ns`` uses on the same machine):

- ``send_ns``: aiohttp's ``on_request_headers_sent`` trace signal (the request line and headers
  are in the socket's buffer; the small body follows in the same write burst);
- ``headers_ns``: the status line and headers of the reply have been read (Lambda replies only
  when the function has returned: the first byte);
- ``end_ns``: the body has been read.

Every request is sent once. A throttle (HTTP 429 ``TooManyRequestsException``), a connection
error or a timeout is a ``client_error`` result with its type, never retried; a failure after
the request was sent (reset, dropped, read timeout) has a type starting ``MayHaveRun.``: the
function may have run.
"""
from __future__ import annotations

import asyncio
import resource
import time
from dataclasses import dataclass, field

from faascope.errors import Failure
from faascope.providers.base import Provider
from faascope.providers.invocation import MAY_HAVE_RUN, InvokeResult, Prepared, RequestFactory, Timing

__all__ = ["AsyncInvoker", "ClientStats", "Prepared", "RequestFactory", "Timing",
           "raise_fd_limit", "request_factory"]


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


def request_factory(provider: Provider, log_tail: bool = False) -> RequestFactory:
    """The provider's burst requests (:meth:`~faascope.providers.base.Provider.async_requests`);
    kept for callers written before the method existed."""
    return provider.async_requests(log_tail=log_tail)


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
                res = self.factory.parse(prep, resp.status, resp.headers, body, t)
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            t.end_ns = time.time_ns()
            # the names botocore gives the same failures, so analyses treat both clients alike
            if isinstance(exc, aiohttp.ClientConnectorError):
                kind = "EndpointConnectionError"  # never reached the endpoint
            elif isinstance(exc, aiohttp.ConnectionTimeoutError):
                kind = "ConnectTimeoutError"
            else:
                kind = ("ReadTimeout" if isinstance(exc, (asyncio.TimeoutError,
                                                          aiohttp.SocketTimeoutError))
                        else type(exc).__name__)
                if t.send_ns is not None:
                    # the request went out, then the reply failed (reset, dropped, timed out):
                    # the function may have run, and the record says so
                    kind = MAY_HAVE_RUN + kind
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
                async with self.session.request(p.method, p.url,
                                                data=None if p.method == "GET" else p.body,
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
