"""The ``local`` provider: faascope's own FaaS platform on loopback, driven through exactly the same
boto3 Lambda code as AWS (:class:`~faascope.providers.lambda_api.LambdaAPIProvider`); only the
endpoint and the (dummy) credentials differ.

It starts the platform when it is not running (``faascope.providers.local_platform.
ensure_running``), or uses ``provider.settings.endpoint_url`` when given. The sandbox profile
(lambda, gcf, unlimited) is chosen per function with the ``faascope:profile`` tag, so profiles can
be a factor within one campaign.
"""
from __future__ import annotations

import os
from typing import Any, Optional

from faascope.errors import Failure
from faascope.providers.lambda_api import LambdaAPIProvider
from faascope.providers.local_platform import ensure_running

LOCAL_ROLE = "arn:aws:iam::000000000000:role/faascope-local"
LOCAL_CREDENTIALS = ("faascope-local", "faascope-local")


def local_credentials() -> tuple[str, str]:
    """Dummy credentials, or the platform's token (FAASCOPE_PLATFORM_TOKEN) as the access key id
    when the platform was started with --require-token."""
    token = os.environ.get("FAASCOPE_PLATFORM_TOKEN")
    return (token, token) if token else LOCAL_CREDENTIALS


def local_endpoint(data_dir: Optional[str] = None) -> str:
    kw = {"data_dir": data_dir} if data_dir else {}
    try:
        return ensure_running(profile="lambda", **kw)
    except Failure:
        raise
    except Exception as exc:
        raise Failure(f"cannot start the local platform: {exc}") from None


class LocalProvider(LambdaAPIProvider):
    kind = "local"

    def __init__(self, *, endpoint_url: Optional[str] = None, data_dir: Optional[str] = None,
                 max_attempts: int = 1, read_timeout_s: float = 960.0,
                 connect_timeout_s: float = 10.0, keep_alive_s: Optional[int] = None):
        endpoint = endpoint_url or local_endpoint(data_dir)
        super().__init__(region="us-east-1", endpoint_url=endpoint, role=LOCAL_ROLE,
                         credentials=local_credentials(), max_attempts=max_attempts,
                         read_timeout_s=read_timeout_s, connect_timeout_s=connect_timeout_s,
                         keep_alive_s=keep_alive_s, kind="local")

    @classmethod
    def from_settings(cls, s: Any) -> "LocalProvider":
        return cls(endpoint_url=s.endpoint_url, data_dir=s.data_dir, max_attempts=s.max_attempts,
                   read_timeout_s=s.read_timeout_s, connect_timeout_s=s.connect_timeout_s,
                   keep_alive_s=getattr(s, "keep_alive_s", None))
