"""What a provider hands the burst driver's asynchronous client (:mod:`faascope.driver.aclient`).

The driver only sends and times; which URL, headers and body an invocation needs, and what its
reply means, is the provider's business (the Lambda API for ``local`` and ``aws``, agent URLs for
``http``). So a provider returns a :class:`RequestFactory` from
:meth:`~faascope.providers.base.Provider.async_requests`: it prepares requests ahead of their
scheduled time (serialised and, for Lambda, signed; see docs/concurrency.md) and turns each reply
into an :class:`~faascope.providers.base.InvokeResult`.

These types live here, below the driver, because providers must not import the driver.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from faascope.providers.base import InvokeResult


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
