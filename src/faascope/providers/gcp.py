"""The ``gcp`` provider: Cloud Run services or Cloud Functions 2nd gen running the agent in HTTP
mode (``PORT``), invoked with an ID token.

Deployment (``provider.settings.service``):

- ``cloud_run`` (default): a Cloud Run service from ``image`` (a container whose entrypoint is the
  agent binary; docs/providers.md shows a two-line Dockerfile), request-based billing (``cpuIdle``),
  concurrency 1 (one request per instance, like Lambda and GCF), the cell's memory and a CPU
  following ``cpu``: ``gcf`` = the GCF 2nd gen tier table (128 MB -> 0.083 vCPU …), so Cloud Run
  stands in for GCF exactly; ``match_lambda`` = the Cloud Run CPU closest to Lambda's MB/1769; or a
  number. Execution environment gen1 below 512 MiB (gen2 needs 512 MiB), else gen2.
- ``cloud_functions``: a 2nd gen function built by Google from a source zip you put in GCS
  (``source: {bucket, object}``, ``entry_point``, ``runtime``), with the tier's memory and CPU.
- ``urls``: endpoints you deployed yourself (``gcloud run deploy`` / ``gcloud functions deploy``):
  nothing is created; faascope only invokes. One URL, or one per memory size.

Both APIs are called over REST (Cloud Run Admin API v2, Cloud Functions API v2) with
``google-auth``'s ``AuthorizedSession`` and the standard credential chain (Application Default
Credentials: ``GOOGLE_APPLICATION_CREDENTIALS``, ``gcloud auth application-default login``, the
metadata server). Invocation sends ``Authorization: Bearer <ID token>`` for the service URL
(``google.oauth2.id_token.fetch_id_token``; or ``FAASCOPE_GCP_ID_TOKEN`` from the environment,
e.g. ``$(gcloud auth print-identity-token)``). google-auth is an optional dependency: without it
the provider says how to install it. Tokens are fetched before the clock starts, cached for 45
minutes, and never recorded.

Everything created is labelled ``faascope-created-by=faascope`` and ``faascope-campaign=<uid>``.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import time
from typing import Any, Callable, Optional

from faascope.errors import BadInput, Failure
from faascope.providers.base import COLD_NONCE_VAR, FunctionConfig, Provider
from faascope.providers.invocation import InvokeResult
from faascope.providers.http import HTTPInvoker, redact_url
from faascope.tiers import PLATFORMS, TierError, gcf_vcpu, lambda_vcpu

RUN_API = "https://run.googleapis.com/v2"
FUNCTIONS_API = "https://cloudfunctions.googleapis.com/v2"
SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
TOKEN_TTL_S = 45 * 60
ID_TOKEN_ENV = "FAASCOPE_GCP_ID_TOKEN"
STORAGE_ENV = {"gcs_bucket": "FAASCOPE_GCS_BUCKET", "gcs_prefix": "FAASCOPE_GCS_PREFIX"}
INSTALL_HINT = ("pip install 'google-auth[requests]' (the gcp provider needs it to deploy and to "
                "fetch ID tokens; or set provider.settings.auth: none for public URLs)")


def _google():
    try:
        import google.auth  # noqa: F401
        import google.auth.transport.requests  # noqa: F401
        import google.oauth2.id_token  # noqa: F401
    except ImportError as exc:
        raise Failure(f"google-auth is not installed ({exc.name}): {INSTALL_HINT}") from None
    import google

    return google


def gcp_name(name: str) -> str:
    """A Cloud Run service / Cloud Functions id from a faascope function name: lowercase letters,
    digits and hyphens, starting with a letter, at most 49 characters, the hash suffix kept."""
    s = re.sub(r"[^a-z0-9-]", "-", name.lower())
    s = re.sub(r"-+", "-", s).strip("-")
    if not s or not s[0].isalpha():
        s = "f-" + s
    if len(s) > 49:
        s = s[:40].rstrip("-") + "-" + s[-8:]
    return s.strip("-")


def label_value(v: str) -> str:
    """A GCP label value: lowercase letters, digits, '_' and '-', at most 63 characters."""
    return re.sub(r"[^a-z0-9_-]", "-", str(v).lower())[:63]


def resolve_cpu(memory_mb: int, cpu: Any = "gcf") -> float:
    """vCPUs for a memory size: the GCF tier ("gcf"), the Cloud Run CPU closest to Lambda's
    ("match_lambda"), or the number given."""
    try:
        if cpu in (None, "gcf"):
            return gcf_vcpu(memory_mb)
        if cpu == "match_lambda":
            return PLATFORMS["cloudrun"].closest_cpu(memory_mb, lambda_vcpu(memory_mb))
    except TierError as exc:
        raise BadInput(str(exc), field="provider.settings.cpu") from None
    return float(cpu)


def cpu_quantity(vcpu: float) -> str:
    """A Kubernetes quantity: whole CPUs as "1", "2"; fractions in millicores ("83m")."""
    if float(vcpu).is_integer():
        return str(int(vcpu))
    return f"{int(round(vcpu * 1000))}m"


def check_cloud_run_resources(memory_mb: int, vcpu: float) -> None:
    """Cloud Run's documented CPU/memory rules (fractional CPU: 0.08..1 in 0.001 steps; below 0.5
    vCPU at most 512 MiB, below 1 vCPU at most 1 GiB; whole CPUs 1, 2, 4, 6, 8 with 4 GiB each)."""
    try:
        options = PLATFORMS["cloudrun"].cpu_options(memory_mb)
    except TierError as exc:
        raise BadInput(str(exc), field="function.memory_mb") from None
    if not any(abs(o - vcpu) < 1e-9 for o in options):
        raise BadInput(f"Cloud Run cannot run {vcpu:g} vCPU with {memory_mb} MiB (below 0.5 vCPU at "
                       "most 512 MiB, below 1 vCPU at most 1 GiB; whole CPUs 1, 2, 4, 6, 8)",
                       field="provider.settings.cpu")


class GCPProvider(Provider):
    kind = "gcp"

    def __init__(self, *, project: str, region: str = "us-central1", service: str = "cloud_run",
                 image: Optional[str] = None, source: Optional[dict] = None,
                 entry_point: str = "Faascope", runtime: str = "go122",
                 urls: Any = None, cpu: Any = "gcf", service_account: Optional[str] = None,
                 auth: str = "id_token", max_instances: int = 100,
                 execution_environment: Optional[str] = None, storage: Any = None,
                 labels: Optional[dict[str, str]] = None, max_attempts: int = 1,
                 read_timeout_s: float = 960.0, connect_timeout_s: float = 10.0,
                 session: Any = None, token_fetcher: Optional[Callable[[str], str]] = None,
                 poll_interval_s: float = 2.0):
        self.project, self.region, self.service = project, region, service
        self.image, self.source = image, source
        self.entry_point, self.runtime = entry_point, runtime
        self.cpu, self.service_account, self.auth = cpu, service_account, auth
        self.max_instances, self.execution_environment = max_instances, execution_environment
        if hasattr(storage, "model_dump"):
            storage = storage.model_dump()
        self.storage = {k: v for k, v in dict(storage or {}).items() if v}
        self.user_labels = {k: label_value(v) for k, v in (labels or {}).items()}
        self.urls = urls
        self.invoker = HTTPInvoker(read_timeout_s, connect_timeout_s, max_attempts)
        self._session = session
        self._token_fetcher = token_fetcher
        self._tokens: dict[str, tuple[str, float]] = {}
        self._urls: dict[str, str] = {}
        self._config: dict[str, FunctionConfig] = {}
        self._env: dict[str, dict[str, str]] = {}
        self.poll_interval_s = poll_interval_s
        self.campaign_uid: Optional[str] = None
        self.spec_name: Optional[str] = None
        if not urls:
            if service == "cloud_run" and not image:
                raise BadInput("a Cloud Run deployment needs the agent's container image (or give "
                               "urls of services you deployed)", field="provider.settings.image")
            if service == "cloud_functions" and not (source and source.get("bucket") and source.get("object")):
                raise BadInput("a Cloud Functions deployment needs source: {bucket, object} (or give "
                               "urls of functions you deployed)", field="provider.settings.source")

    @classmethod
    def from_settings(cls, s: Any) -> "GCPProvider":
        g = (lambda k, d=None: s.get(k, d)) if isinstance(s, dict) else (lambda k, d=None: getattr(s, k, d))
        if not g("project"):
            raise BadInput("required field is missing", field="provider.settings.project")
        return cls(project=g("project"), region=g("region", "us-central1"),
                   service=g("service", "cloud_run"), image=g("image"), source=g("source"),
                   entry_point=g("entry_point", "Faascope"), runtime=g("runtime", "go122"),
                   urls=g("urls"), cpu=g("cpu", "gcf"), service_account=g("service_account"),
                   auth=g("auth", "id_token"), max_instances=g("max_instances", 100),
                   execution_environment=g("execution_environment"), storage=g("storage"),
                   labels=g("labels") or {}, max_attempts=g("max_attempts", 1),
                   read_timeout_s=g("read_timeout_s", 960.0),
                   connect_timeout_s=g("connect_timeout_s", 10.0))

    def bind_campaign(self, uid: str, name: str) -> None:
        self.campaign_uid, self.spec_name = uid, name

    def labels(self) -> dict[str, str]:
        out = {**self.user_labels, "faascope-created-by": "faascope"}
        if self.campaign_uid:
            out["faascope-campaign"] = label_value(self.campaign_uid)
        if self.spec_name:
            out["faascope-spec"] = label_value(self.spec_name)
        return out

    def describe(self) -> dict:
        d: dict[str, Any] = {"kind": self.kind, "project": self.project, "region": self.region,
                             "service": self.service if not self.urls else "urls",
                             "cpu": self.cpu, "auth": self.auth, "storage": dict(self.storage),
                             "labels": self.labels()}
        if self.urls:
            d["urls"] = ({k: redact_url(v) for k, v in self.urls.items()} if isinstance(self.urls, dict)
                         else redact_url(self.urls))
        else:
            d.update(image=self.image, max_instances=self.max_instances,
                     source=dict(self.source) if self.source else None)
        return d

    # ------------------------------------------------------------------ request bodies
    def env(self) -> dict[str, str]:
        e = {var: str(self.storage[k]) for k, var in STORAGE_ENV.items() if self.storage.get(k)}
        if "FAASCOPE_GCS_PREFIX" in e and "FAASCOPE_GCS_BUCKET" not in e:
            e.pop("FAASCOPE_GCS_PREFIX")
        return e

    def vcpu(self, config: FunctionConfig) -> float:
        return resolve_cpu(config.memory_mb, self.cpu)

    def cloud_run_service_body(self, config: FunctionConfig, env: dict[str, str]) -> dict:
        """A Cloud Run Admin API v2 ``Service`` (projects.locations.services.create/patch)."""
        vcpu = self.vcpu(config)
        check_cloud_run_resources(config.memory_mb, vcpu)
        gen = self.execution_environment or ("gen1" if config.memory_mb < 512 else "gen2")
        container: dict[str, Any] = {
            "image": self.image,
            "ports": [{"name": "http1", "containerPort": 8080}],
            "resources": {"limits": {"cpu": cpu_quantity(vcpu), "memory": f"{config.memory_mb}Mi"},
                          "cpuIdle": True, "startupCpuBoost": False},
            "env": [{"name": k, "value": v} for k, v in sorted(env.items())],
        }
        template: dict[str, Any] = {
            "labels": self.labels(),
            "scaling": {"minInstanceCount": 0, "maxInstanceCount": self.max_instances},
            "maxInstanceRequestConcurrency": 1,
            "timeout": f"{int(config.timeout_s)}s",
            "executionEnvironment": f"EXECUTION_ENVIRONMENT_{gen.upper()}",
            "containers": [container],
        }
        if self.service_account:
            template["serviceAccount"] = self.service_account
        return {"labels": self.labels(), "description": "faascope measurement agent",
                "ingress": "INGRESS_TRAFFIC_ALL", "invokerIamDisabled": False,
                "template": template}

    def gcf_function_body(self, name: str, config: FunctionConfig, env: dict[str, str]) -> dict:
        """A Cloud Functions API v2 ``Function`` (projects.locations.functions.create/patch)."""
        vcpu = self.vcpu(config)
        svc: dict[str, Any] = {
            "availableMemory": f"{config.memory_mb}Mi",
            "availableCpu": f"{vcpu:g}",
            "timeoutSeconds": int(config.timeout_s),
            "maxInstanceCount": self.max_instances,
            "maxInstanceRequestConcurrency": 1,
            "environmentVariables": dict(sorted(env.items())),
            "ingressSettings": "ALLOW_ALL",
            "allTrafficOnLatestRevision": True,
        }
        if self.service_account:
            svc["serviceAccountEmail"] = self.service_account
        return {
            "name": f"projects/{self.project}/locations/{self.region}/functions/{gcp_name(name)}",
            "description": "faascope measurement agent",
            "environment": "GEN_2",
            "labels": self.labels(),
            "buildConfig": {"runtime": self.runtime, "entryPoint": self.entry_point,
                            "source": {"storageSource": {"bucket": self.source["bucket"],
                                                         "object": self.source["object"]}}},
            "serviceConfig": svc,
        }

    # ------------------------------------------------------------------ REST
    @property
    def session(self):
        if self._session is None:
            google = _google()
            creds, _ = google.auth.default(scopes=SCOPES)
            self._session = google.auth.transport.requests.AuthorizedSession(creds)
        return self._session

    def _parent(self) -> str:
        return f"projects/{self.project}/locations/{self.region}"

    def _resource(self, name: str) -> str:
        kind = "services" if self.service == "cloud_run" else "functions"
        return f"{self._parent()}/{kind}/{gcp_name(name)}"

    def _api(self) -> str:
        return RUN_API if self.service == "cloud_run" else FUNCTIONS_API

    def _call(self, method: str, url: str, body: Optional[dict] = None, ok404: bool = False) -> Optional[dict]:
        r = self.session.request(method, url, json=body, timeout=120)
        if ok404 and r.status_code == 404:
            return None
        if r.status_code >= 300:
            try:
                msg = r.json().get("error", {}).get("message")
            except ValueError:
                msg = None
            raise Failure(f"{method} {url.split('?')[0]}: HTTP {r.status_code}: {msg or r.text[:300]}")
        try:
            return r.json()
        except ValueError:
            return {}

    def _wait(self, op: Optional[dict], what: str) -> None:
        deadline = time.time() + 1800
        while op and not op.get("done"):
            if time.time() > deadline:
                raise Failure(f"{what}: the operation {op.get('name')} did not finish in 30 min")
            time.sleep(self.poll_interval_s)
            op = self._call("GET", f"{self._api()}/{op['name']}")
        if op and op.get("error"):
            raise Failure(f"{what}: {op['error'].get('message', op['error'])}")

    def _body(self, name: str, config: FunctionConfig, env: dict[str, str]) -> dict:
        if self.service == "cloud_run":
            return self.cloud_run_service_body(config, env)
        return self.gcf_function_body(name, config, env)

    def _apply(self, name: str, config: FunctionConfig, env: dict[str, str], create: bool) -> None:
        body = self._body(name, config, env)
        rid = gcp_name(name)
        if create:
            idp = "serviceId" if self.service == "cloud_run" else "functionId"
            url = f"{self._api()}/{self._parent()}/{'services' if self.service == 'cloud_run' else 'functions'}?{idp}={rid}"
            op = self._call("POST", url, body)
        else:
            op = self._call("PATCH", f"{self._api()}/{self._resource(name)}", body)
        self._wait(op, f"deploying {rid}")
        res = self._call("GET", f"{self._api()}/{self._resource(name)}") or {}
        uri = res.get("uri") if self.service == "cloud_run" else (res.get("serviceConfig") or {}).get("uri") or res.get("url")
        if not uri:
            raise Failure(f"{rid} has no URL after deployment")
        self._urls[name] = uri

    # ------------------------------------------------------------------ Provider
    def _preset_url(self, config: FunctionConfig) -> str:
        if isinstance(self.urls, str):
            return self.urls
        url = (self.urls or {}).get(str(config.memory_mb))
        if not url:
            raise Failure(f"provider.settings.urls has no URL for {config.memory_mb} MB (has: "
                          f"{', '.join(sorted(self.urls or {}))})")
        return url

    def deploy(self, name: str, config: FunctionConfig) -> None:
        if self.urls:
            self._urls[name] = self._preset_url(config)
            self._config[name] = config
            return
        env = {**self.env(), COLD_NONCE_VAR: secrets.token_hex(8)}
        existing = self._call("GET", f"{self._api()}/{self._resource(name)}", ok404=True)
        self._apply(name, config, env, create=existing is None)
        self._env[name], self._config[name] = env, config

    def update_configuration(self, name: str, config: FunctionConfig) -> None:
        if self._config.get(name) == config:
            return
        if self.urls:
            self._urls[name] = self._preset_url(config)
        else:
            self._apply(name, config, self._env.get(name) or self.env(), create=False)
        self._config[name] = config

    def force_cold(self, name: str) -> None:
        if self.urls:
            raise Failure("cannot force cold starts of URLs faascope did not deploy; use "
                          "design.cold: false, or let faascope deploy (image or source)")
        env = {**(self._env.get(name) or self.env()), COLD_NONCE_VAR: secrets.token_hex(8)}
        self._apply(name, self._config[name], env, create=False)  # a new revision: new instances
        self._env[name] = env

    def teardown(self, name: str) -> None:
        if not self.urls:
            op = self._call("DELETE", f"{self._api()}/{self._resource(name)}", ok404=True)
            self._wait(op, f"deleting {gcp_name(name)}")
        self._urls.pop(name, None)
        self._config.pop(name, None)

    def id_token(self, audience: str) -> str:
        hit = self._tokens.get(audience)
        if hit and time.monotonic() - hit[1] < TOKEN_TTL_S:
            return hit[0]
        if self._token_fetcher is not None:
            tok = self._token_fetcher(audience)
        elif os.environ.get(ID_TOKEN_ENV):
            tok = os.environ[ID_TOKEN_ENV]
        else:
            google = _google()
            req = google.auth.transport.requests.Request()
            try:
                tok = google.oauth2.id_token.fetch_id_token(req, audience)
            except Exception as exc:  # user credentials cannot mint ID tokens for an audience
                try:
                    creds, _ = google.auth.default()
                    creds.refresh(req)
                    tok = getattr(creds, "id_token", None)
                except Exception:
                    tok = None
                if not tok:
                    raise Failure(f"cannot get an ID token for {redact_url(audience)} "
                                  f"({type(exc).__name__}); use a service account, or export "
                                  f"{ID_TOKEN_ENV}=$(gcloud auth print-identity-token)") from None
        self._tokens[audience] = (tok, time.monotonic())
        return tok

    def invoke(self, name: str, payload: dict) -> InvokeResult:
        url = self._urls.get(name)
        if url is None:
            raise Failure(f"function {name} is not deployed")
        headers_fn = None
        if self.auth == "id_token":
            u = url.rstrip("/")
            headers_fn = lambda: {"Authorization": f"Bearer {self.id_token(u)}"}  # noqa: E731
        return self.invoker.post(url, json.dumps(payload).encode(), headers_fn=headers_fn)

    def close(self) -> None:
        self.invoker.close()
