"""The ``local`` provider: faascope's own FaaS platform on loopback, driven through exactly the same
boto3 Lambda code as AWS (:class:`~faascope.providers.lambda_api.LambdaAPIProvider`); only the
endpoint and the (dummy) credentials differ.

It starts the platform when it is not running (``faascope.providers.local_platform.
ensure_running``), or uses ``provider.settings.endpoint_url`` when given. The sandbox profile
(lambda, gcf, unlimited) is chosen per function with the ``faascope:profile`` tag, so profiles can
be a factor within one campaign.

Stand-ins (``faascope.standins.wiring``, which ``faascope run`` uses for a local campaign) hand
it the functions' environment (``function_env``: stand-in endpoints and their made-up keys), the
host ports sandboxes must reach (``expose``, the ``faascope:expose`` tag of every function it
creates) and what to stop when the campaign ends (``on_close``); with ``by_profile``, a
function's profile (or ``default_profile``) picks its own environment and ports (the stand-ins
shaped for that profile).
"""
from __future__ import annotations

import os
from typing import Any, Callable, Optional

from faascope.errors import Failure
from faascope.providers.base import FunctionConfig
from faascope.providers.lambda_api import CodeBucket, LambdaAPIProvider
from faascope.providers.local_platform import ensure_running, require_platform

LOCAL_ROLE = "arn:aws:iam::000000000000:role/faascope-local"
LOCAL_CREDENTIALS = ("faascope-local", "faascope-local")
#: host loopback ports a function's sandboxes may reach ("6379,9000", or "9002:9001" to map)
EXPOSE_TAG = "faascope:expose"


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
    #: the local platform's updates stay InProgress for its update window (agent/platform:
    #: DefaultUpdateWindow, 200 ms): polling every 1 s, as for AWS, would add up to a second to
    #: every forced cold start of a local campaign
    wait_delay_s = 0.1

    def __init__(self, *, endpoint_url: Optional[str] = None, data_dir: Optional[str] = None,
                 max_attempts: int = 1, read_timeout_s: float = 960.0,
                 connect_timeout_s: float = 10.0, keep_alive_s: Optional[int] = None,
                 function_env: Optional[dict[str, str]] = None, expose: str = "",
                 on_close: Optional[Callable[[], None]] = None, details: Optional[dict] = None,
                 default_profile: str = "lambda",
                 by_profile: Optional[dict[str, tuple[dict[str, str], str]]] = None,
                 code_s3: Optional[dict[str, str]] = None):
        endpoint = endpoint_url or local_endpoint(data_dir)
        super().__init__(region="us-east-1", endpoint_url=endpoint, role=LOCAL_ROLE,
                         credentials=local_credentials(), max_attempts=max_attempts,
                         read_timeout_s=read_timeout_s, connect_timeout_s=connect_timeout_s,
                         keep_alive_s=keep_alive_s, kind="local")
        self.standin_env = dict(function_env or {})
        self.expose = expose
        self.on_close = on_close
        self.details = dict(details or {})
        self.default_profile = default_profile
        self.by_profile = dict(by_profile or {})
        self.code_s3 = dict(code_s3) if code_s3 else None
        self._code_bucket: Optional[CodeBucket] = None

    def standins_for(self, config: FunctionConfig) -> tuple[dict[str, str], str]:
        """The stand-in environment and exposed ports of a function of ``config``."""
        got = self.by_profile.get(config.profile or self.default_profile)
        return (dict(got[0]), got[1]) if got else (dict(self.standin_env), self.expose)

    def describe(self) -> dict:
        return {**super().describe(), **self.details}

    def code_bucket(self) -> Optional[CodeBucket]:
        """The S3 stand-in the platform reads ``Code.S3Bucket``/``S3Key`` from (``code_s3``:
        endpoint, bucket, region, keys; faascope.standins.wiring hands it over when a package is
        over the direct-upload limit)."""
        if self.code_s3 is None:
            return None
        if self._code_bucket is None:
            import boto3
            from botocore.config import Config

            c = self.code_s3
            client = boto3.client("s3", endpoint_url=c["endpoint"], region_name=c.get("region") or "us-east-1",
                                  aws_access_key_id=c.get("access_key"), aws_secret_access_key=c.get("secret_key"),
                                  config=Config(s3={"addressing_style": "path"},
                                                retries={"total_max_attempts": 3, "mode": "standard"}))
            self._code_bucket = CodeBucket(client, c["bucket"])
        return self._code_bucket

    def _function_env(self, config: FunctionConfig) -> dict[str, str]:
        return self.standins_for(config)[0]

    def _tags(self, config: FunctionConfig) -> dict[str, str]:
        tags = super()._tags(config)
        expose = self.standins_for(config)[1]
        if expose:
            tags[EXPOSE_TAG] = expose
        return tags

    def deploy(self, name: str, config: FunctionConfig) -> None:
        if self.standin_env or self.expose or self.by_profile:
            self.replace_if_stale(name, config)
        super().deploy(name, config)

    def replace_if_stale(self, name: str, config: Optional[FunctionConfig] = None) -> None:
        """Delete the function if it exists with other stand-in settings (a resumed campaign's
        stand-ins listen on new ports): deploy only updates code and limits, and the
        environment and the expose tag are fixed at creation here."""
        from botocore.exceptions import ClientError

        try:
            current = self.control.get_function(FunctionName=name)
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "ResourceNotFoundException":
                return
            raise Failure(f"GetFunction {name}: {exc}") from None
        want_env, want_expose = self.standins_for(config) if config is not None else \
            (self.standin_env, self.expose)
        env = (current["Configuration"].get("Environment") or {}).get("Variables") or {}
        tags = current.get("Tags") or {}
        if any(env.get(k) != v for k, v in want_env.items()) or \
                (tags.get(EXPOSE_TAG) or "") != want_expose:
            self.teardown(name)

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.on_close is not None:
                on_close, self.on_close = self.on_close, None
                on_close()

    @classmethod
    def from_settings(cls, s: Any) -> "LocalProvider":
        if s.endpoint_url:  # a platform the user runs: refuse now when none listens there
            require_platform(s.endpoint_url)
        return cls(endpoint_url=s.endpoint_url, data_dir=s.data_dir, max_attempts=s.max_attempts,
                   read_timeout_s=s.read_timeout_s, connect_timeout_s=s.connect_timeout_s,
                   keep_alive_s=getattr(s, "keep_alive_s", None))
