"""A local campaign's stand-ins: started by ``faascope run`` for what its payloads need, wired
to the local platform and the functions, stopped when the campaign ends (docs/storage.md).

- **Which**: :func:`faascope.standins.needs.needs_of` over the cells' payloads.
- **Reuse**: servers ``faascope standins start`` left running for the same data directory
  (``<data dir>/standins.json``) are used as they are and left running; the others are started
  here (free ports, a temporary work directory) and stopped when the provider closes.
- **Ports**: every function the campaign creates carries the ``faascope:expose`` tag with the
  servers' ports (and the platform's own for ``transfer``), so any running platform reaches
  them without a restart; only the shared directory is platform-wide (``--shared-dir``).
- **Platform**: the one running for the data directory when it fits (no shared directory
  needed, or it has one: that directory is then the stand-in); none running: the usual one is
  started (with ``<data dir>/shared`` when needed) and left running as ``faascope run`` always
  did; running without a shared directory when one is needed: a dedicated platform for this
  campaign (own data directory and port), stopped and removed at the end, so that a platform
  other campaigns may be using is never restarted under them. Likewise when a package is over
  Lambda's direct-upload limit (``image_sizes``): the S3 stand-in is started for it and the
  platform must read code from that very server (its health's ``s3_endpoint``), else a
  dedicated one does. An ``endpoint_url`` in the spec is used as given (a Failure if it mounts
  no shared directory and one is needed, or reads code from another S3 server when one is).
- **Functions**: endpoints in the environment (``FAASCOPE_*``, ``AWS_ENDPOINT_URL_DYNAMODB``,
  ``AWS_ENDPOINT_URL_LAMBDA``), which the agent's workloads read when the request does not say,
  so specs name no endpoints. The stand-ins' made-up keys are what the local platform sets as
  every function's ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY`` (its stand-in for the
  execution role; Lambda reserves those variables, so a function's configuration cannot).
- **Shaping** (:mod:`faascope.standins.shaping`): a function of a cloud-like profile (its
  ``profile``, else the platform's default) talks to S3 and DynamoDB through a
  ``faascope-shaper`` for its profile (calibrated latency, S3's prefix rate limits), started
  here unless ``faascope standins start --shape`` left one running; ``unlimited`` functions talk
  to the servers themselves. Each profile's functions get their own endpoints and exposed ports.
  A campaign with a shaped profile keeps a started S3 server's objects in memory.
- **Record**: a ``standins`` campaign event with each server's kind, name, version, endpoint
  and whether it was started for the campaign, the platform used, and per profile the shaping
  in force (calibration table and version, role, reason, endpoints) or none.
"""
from __future__ import annotations

import shutil
import tempfile
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional

from faascope import standins
from faascope.errors import Failure
from faascope.provider_kinds import PROVIDER_KINDS
from faascope.providers import local_platform
from faascope.providers.base import Provider, make_provider
from faascope.providers.local import LocalProvider
from faascope.providers.packaging import needs_s3_upload
from faascope.standins import capacity, shaping
from faascope.store.schema import HOST_CAPACITY_EVENT
from faascope.standins.needs import Needs, needs_of

#: the Lambda Runtime API's port inside every sandbox (docs/platform.md): the platform's own API
#: is mapped to another inside port when it listens on this one
RUNTIME_API_PORT = 9001
#: servers (processes with a port), as opposed to the shared directory
SERVER_KINDS = ("s3", "redis", "dynamodb", "sink")

EventSink = Callable[[str, dict], None]


@dataclass
class Wired:
    """The stand-ins and the platform one local campaign uses, and what it owns of them."""
    endpoint: str
    used: standins.StandIns
    owned: standins.StandIns
    reused: set[str]
    platform: dict
    env: dict[str, str] = field(default_factory=dict)
    expose: str = ""
    dedicated_dir: Optional[Path] = None
    #: the platform's profile for functions that name none
    default_profile: str = "lambda"
    #: profile -> (function environment, exposed ports) of the campaign's profiles
    by_profile: dict[str, tuple[dict[str, str], str]] = field(default_factory=dict)
    #: profile -> the shaping in force (shaping.describe) or None
    shaping: dict[str, Optional[dict]] = field(default_factory=dict)
    #: the S3 stand-in packages over the direct-upload limit go through (LocalProvider.code_s3)
    code_s3: Optional[dict] = None

    def stop(self) -> None:
        """Stop what was started for the campaign; leave what already ran."""
        try:
            self.owned.stop()
        finally:
            if self.dedicated_dir is not None:
                local_platform.stop(self.dedicated_dir)
                shutil.rmtree(self.dedicated_dir, ignore_errors=True)
                self.dedicated_dir = None

    def event_detail(self) -> dict:
        servers = [d | {"started": d["kind"] not in self.reused} for d in self.used.describe()]
        return {"servers": servers, "platform": self.platform, "expose": self.expose,
                "default_profile": self.default_profile, "shaping": dict(self.shaping),
                "expose_by_profile": {p: e for p, (_, e) in self.by_profile.items()},
                "code_via_s3": None if self.code_s3 is None else
                {"endpoint": self.code_s3["endpoint"], "bucket": self.code_s3["bucket"]}}


def open_provider(kind: str, settings: Any, payloads: Iterable[Mapping],
                  event: Optional[EventSink] = None,
                  profiles: Iterable[Optional[str]] = (None,),
                  image_sizes: Iterable[Optional[int]] = ()) -> Provider:
    """The campaign's provider: for a local campaign whose payloads need stand-ins, a
    :class:`LocalProvider` wired to them (they stop when it closes); else ``make_provider``.
    ``profiles`` are the sandbox profiles of the campaign's functions (None: the platform's
    default), for which stand-ins are shaped; ``image_sizes`` their packages' sizes: one that
    may be over Lambda's direct-upload limit brings the S3 stand-in, which the package is
    deployed through (:func:`faascope.providers.packaging.needs_s3_upload`)."""
    if not PROVIDER_KINDS[kind].local:  # stand-ins serve the local platform only
        return make_provider(kind, settings)
    n = needs_of(payloads)
    if any(needs_s3_upload(s) for s in image_sizes):
        n.code_s3 = True
        n.kinds.add("s3")
    if not n:
        return make_provider(kind, settings)
    wired = provide(n, data_dir=settings.data_dir, endpoint_url=settings.endpoint_url, profiles=profiles)
    try:
        provider = LocalProvider(
            endpoint_url=wired.endpoint, max_attempts=settings.max_attempts,
            read_timeout_s=settings.read_timeout_s, connect_timeout_s=settings.connect_timeout_s,
            keep_alive_s=getattr(settings, "keep_alive_s", None), function_env=wired.env,
            expose=wired.expose, on_close=wired.stop, default_profile=wired.default_profile,
            by_profile=wired.by_profile, code_s3=wired.code_s3,
            details={"platform": wired.platform["how"],
                     "standins": sorted(wired.used.servers)})
        if event is not None:
            event("standins", wired.event_detail())
            # what the host can deliver per stand-in and device (a few seconds; local only:
            # a cloud's storage is not this machine's)
            event(HOST_CAPACITY_EVENT, capacity.probe(wired.used, n.kinds))
    except BaseException:
        wired.stop()
        raise
    return provider


def provide(n: Needs, data_dir: Optional[str | Path] = None,
            endpoint_url: Optional[str] = None, profiles: Iterable[Optional[str]] = (None,)) -> Wired:
    """Start (or reuse) the stand-ins ``n`` names, choose the platform and shape the stand-ins
    for the profiles' functions; the caller stops the result (:meth:`Wired.stop`)."""
    data_dir = Path(data_dir or local_platform.default_data_dir())
    profiles = list(dict.fromkeys(profiles)) or [None]
    saved = standins.load(data_dir)
    used, reused = standins.StandIns(), set()
    for k in SERVER_KINDS:
        if k in n.kinds and saved is not None and k in saved.servers and standins.alive(saved.servers[k]):
            used.servers[k] = saved.servers[k]
            reused.add(k)
    missing = [k for k in SERVER_KINDS if k in n.kinds and k not in used.servers]
    # objects in memory when any function may be shaped (None: the platform's default profile,
    # lambda unless a running platform says otherwise)
    memory = any(p is None or shaping.shaping_for(p, field="function.profile") is not None for p in profiles)
    owned = standins.start(missing, data_dir=data_dir, tables=tuple(sorted(n.tables)), memory=memory) \
        if missing else standins.StandIns()
    wired = Wired(endpoint="", used=used, owned=owned, reused=reused, platform={})
    try:
        used.servers.update(owned.servers)
        _ensure_containers(used, n)
        _choose_platform(wired, n, data_dir, endpoint_url)
        if n.code_s3:
            s3 = used.servers["s3"]
            wired.code_s3 = {"endpoint": s3.endpoint,
                             **{k: s3.extra.get(k) for k in ("bucket", "region", "access_key", "secret_key")}}
        wired.default_profile = wired.platform.get("profile") or "lambda"
        resolved = list(dict.fromkeys(p or wired.default_profile for p in profiles))
        _shape(wired, resolved, saved)
        _wire_functions(wired, n, resolved)
    except BaseException:
        wired.stop()
        raise
    return wired


def _ensure_containers(st: standins.StandIns, n: Needs) -> None:
    """The buckets and tables payloads name, on reused servers as on new ones."""
    if "s3" in st.servers:
        e = st.servers["s3"].extra
        for b in sorted(n.buckets):
            standins.ensure_bucket(st.servers["s3"].endpoint, b, e["access_key"], e["secret_key"], e["region"])
    if "dynamodb" in st.servers:
        d = st.servers["dynamodb"]
        for t in sorted(n.tables):
            standins.ensure_table(d.endpoint, t, d.extra.get("region", standins.DEFAULT_REGION))


def _choose_platform(w: Wired, n: Needs, data_dir: Path, endpoint_url: Optional[str]) -> None:
    want_shared = "shared" in n.kinds
    default_shared = data_dir / "shared"
    # packages through S3: the platform must read code from this campaign's S3 stand-in
    want_s3 = w.used.servers["s3"].endpoint if n.code_s3 else None
    if endpoint_url:
        local_platform.require_platform(endpoint_url)  # exit 2 with how to start one
        h = local_platform.health(endpoint_url)
        if h is None:
            raise Failure(f"the local platform at {endpoint_url} (provider.settings.endpoint_url) "
                          "does not answer")
        if want_shared and not h.get("shared_dir"):
            raise Failure(f"the platform at {endpoint_url} mounts no shared directory, which the "
                          "sharedfs workload needs: restart it with --shared-dir DIR, or leave "
                          "endpoint_url out and faascope runs one")
        if want_s3 and h.get("s3_endpoint") != want_s3:
            raise Failure(f"the platform at {endpoint_url} reads code from "
                          f"{h.get('s3_endpoint') or 'no S3 server'}, not from the S3 stand-in at "
                          f"{want_s3} that packages over Lambda's direct-upload limit are deployed "
                          "through: start both with `faascope standins start --s3` then "
                          "`faascope platform start`, or leave endpoint_url out and faascope runs one")
        w.endpoint, how = endpoint_url, "given"
    else:
        state = local_platform.running(data_dir)
        if state is not None and (not want_shared or state["health"].get("shared_dir")) and \
                (not want_s3 or state["health"].get("s3_endpoint") == want_s3):
            h, how = state["health"], "running"
        elif state is None:
            # the platform `faascope run` starts anyway, left running as always; a shared
            # directory that persists with it (as an EFS file system would)
            if want_shared:
                standins.make_shared(default_shared, data_dir)
            state = local_platform.start(profile="lambda", data_dir=data_dir,
                                         shared_dir=default_shared if want_shared else None,
                                         s3=_s3_source(w))
            h, how = local_platform.health(state["endpoint"]) or {}, "started"
        else:
            if want_shared:
                standins.make_shared(default_shared, data_dir)
            w.dedicated_dir = Path(tempfile.mkdtemp(prefix="campaign-platform-", dir=data_dir))
            state = local_platform.start(profile="lambda", data_dir=w.dedicated_dir, port=0,
                                         shared_dir=default_shared if want_shared else None,
                                         s3=_s3_source(w))
            h, how = local_platform.health(state["endpoint"]) or {}, "dedicated"
        w.endpoint = state["endpoint"]
    w.platform = {"endpoint": w.endpoint, "how": how, "isolation": h.get("isolation", ""),
                  "profile": h.get("profile", ""),
                  "host_network": bool(h.get("host_network", False)),
                  "shared_dir": h.get("shared_dir") or ""}
    if want_shared:
        shared = h["shared_dir"]
        w.used.servers["shared"] = standins.Server("shared", None, None, shared, shared,
                                                   extra={"name": "directory", "version": ""})
        w.reused.add("shared")  # a directory is never removed: it belongs to the platform


def _s3_source(w: Wired) -> Optional[dict]:
    """The S3 stand-in a platform started here reads Code.S3Bucket/S3Key packages from, when the
    campaign has one that outlives the platform's start (a platform started here is left
    running: a stand-in owned by this campaign stops before it, and S3 code then fails with the
    S3 endpoint's connection error; a reused one keeps serving)."""
    s = w.used.servers.get("s3")
    if s is None:
        return None
    return {"endpoint": s.endpoint, **{k: s.extra.get(k) for k in ("region", "access_key", "secret_key")}}


def _shape(w: Wired, profiles: list[str], saved: Optional[standins.StandIns]) -> None:
    """A shaper for every shaped profile in front of the campaign's S3 and DynamoDB servers:
    the one `faascope standins start --shape` left running in front of the same servers, else
    one started here (stopped with the campaign)."""
    for p in profiles:
        sh = shaping.shaping_for(p, field="function.profile")
        kinds = [k for k in shaping.SHAPED_KINDS if k in w.used.servers]
        if sh is None or not kinds:
            w.shaping[p] = None
            continue
        have = (saved.shaped.get(p, {}) if saved is not None else {})
        if all(k in have and have[k].extra.get("backend") == w.used.servers[k].endpoint
               and isinstance(have[k].extra.get("shaping"), dict) and standins.alive(have[k])
               for k in kinds):
            w.used.shaped[p] = {k: have[k] for k in kinds}
            started = False
        else:
            work = Path(tempfile.mkdtemp(prefix=f"faascope-shaper-{p}-"))
            w.owned.owned_dirs.append(str(work))
            fronted = standins.StandIns(servers={k: w.used.servers[k] for k in kinds})
            w.owned.shaped[p] = standins.start_shaper(fronted, p, work)
            w.used.shaped[p] = w.owned.shaped[p]
            started = True
        w.shaping[p] = {**w.used.shaped[p][kinds[0]].extra["shaping"], "started": started,
                        "s3_store": w.used.servers["s3"].extra.get("store", "") if "s3" in w.used.servers else ""}


def _wire_functions(w: Wired, n: Needs, profiles: list[str]) -> None:
    """The functions' environment and the ports their sandboxes reach, per profile; the
    platform default's are the provider's defaults."""
    for p in dict.fromkeys([w.default_profile, *profiles]):
        w.by_profile[p] = _wire_profile(w, n, p)
    w.env, w.expose = w.by_profile[w.default_profile]


def _wire_profile(w: Wired, n: Needs, profile: str) -> tuple[dict[str, str], str]:
    env = dict(w.used.function_env(profile))
    ports = [str(s.port) for s in w.used.servers_for(profile).values() if s.port]
    if "shared" in w.used.servers and w.platform["isolation"] != "namespaces":
        # without namespaces nothing is mounted at /mnt/shared: functions use the host path
        env["FAASCOPE_SHARED_DIR"] = w.used.servers["shared"].endpoint
    if n.lambda_api:
        port = urllib.parse.urlsplit(w.endpoint).port or 80
        if w.platform["host_network"]:
            env["AWS_ENDPOINT_URL_LAMBDA"] = w.endpoint
        else:
            inside = port
            if port == RUNTIME_API_PORT:
                inside = RUNTIME_API_PORT + 1
                while str(inside) in ports:
                    inside += 1
            ports.append(f"{inside}:{port}" if inside != port else str(port))
            env["AWS_ENDPOINT_URL_LAMBDA"] = f"http://127.0.0.1:{inside}"
    return env, ",".join(ports)
