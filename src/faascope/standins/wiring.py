"""A local campaign's stand-ins: started by ``faascope run`` for what its payloads need, wired
to the local platform and the functions, stopped when the campaign ends (docs/storage.md).

- **Which**: :func:`faascope.standins.needs.needs_of` over the cells' payloads.
- **Reuse**: servers ``faascope standins start`` left running for the same data directory
  (``<data dir>/standins.json``) are used as they are and left running; the others are started
  here (free ports, a temporary work directory) and stopped when the provider closes.
- **Ports**: every function the campaign creates carries the ``faascope:expose`` tag with the
  servers' ports (and the platform's own for ``transfer``), so any running platform reaches
  them without a restart; only the shared directory is platform-wide (``--shared-dir``).
- **Platform** (every local campaign, stand-ins or not, unless the spec gives an
  ``endpoint_url`` and needs none): the one running for the data directory when it fits (no
  shared directory needed, or it has one: that directory is then the stand-in), left running;
  none running: the usual one is started (with ``<data dir>/shared`` when needed) and stopped
  when the campaign ends, or when the last campaign that uses it ends
  (:mod:`faascope.providers.leftovers`), unless ``keep_platform`` (``run --keep-platform``);
  running without a shared directory when one is needed: a dedicated platform for this
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
  in force (calibration table and version, role, reason, endpoints) or none; a ``platform``
  event (:data:`~faascope.store.schema.PLATFORM_EVENT`) at the start (endpoint, data
  directory, pid, how: started by this run, running already, dedicated or given) and at the
  end (stopped, left running, in use by another run, kept), both also said on the console.
- **Left behind**: what the campaign starts is written down as it starts it
  (:class:`faascope.providers.leftovers.RunRecord`); a run killed outright leaves a record
  whose process is gone, and the next local run with the data directory (or ``faascope
  cleanup --provider local``) stops what it names before anything else.
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
from faascope.providers import leftovers, local_platform
from faascope.providers.base import Provider, make_provider
from faascope.providers.local import LocalProvider
from faascope.providers.packaging import needs_s3_upload
from faascope.standins import capacity, shaping
from faascope.store.schema import HOST_CAPACITY_EVENT, PLATFORM_EVENT, STANDINS_EVENT
from faascope.standins.needs import Needs, needs_of

#: the Lambda Runtime API's port inside every sandbox (docs/platform.md): the platform's own API
#: is mapped to another inside port when it listens on this one
RUNTIME_API_PORT = 9001
#: servers (processes with a port), as opposed to the shared directory
SERVER_KINDS = ("s3", "redis", "dynamodb", "sink")

EventSink = Callable[[str, dict], None]
Say = Callable[[str], None]


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
    #: the platform's profile for functions that name none
    default_profile: str = "lambda"
    #: profile -> (function environment, exposed ports) of the campaign's profiles
    by_profile: dict[str, tuple[dict[str, str], str]] = field(default_factory=dict)
    #: profile -> the shaping in force (shaping.describe) or None
    shaping: dict[str, Optional[dict]] = field(default_factory=dict)
    #: the S3 stand-in packages over the direct-upload limit go through (LocalProvider.code_s3)
    code_s3: Optional[dict] = None
    #: what this run started, written down as it goes (None once released)
    record: Optional[leftovers.RunRecord] = None
    #: keep a platform this run started (``run --keep-platform``)
    keep_platform: bool = False
    #: what was stopped of runs found dead at the start (leftovers.reap)
    reaped: list = field(default_factory=list)
    event: Optional[EventSink] = None
    say: Optional[Say] = None

    def stop(self) -> None:
        """Stop what was started for the campaign; leave what already ran (a platform a run
        started stops with the last run that uses it, unless kept)."""
        try:
            self.owned.stop()
        finally:
            if self.record is not None:
                record, self.record = self.record, None
                self.tell_end(record.release())

    def note_owned(self, owned: Optional[standins.StandIns] = None) -> None:
        """Write down the processes, mounts and directories the campaign owns now."""
        st = owned if owned is not None else self.owned
        if self.record is not None:
            self.record.note(st.processes(), st.mounts, st.owned_dirs)

    def tell_start(self) -> None:
        """Say and record which platform serves the campaign."""
        p = self.platform
        for r in self.reaped:
            self._say(f"stopped what an earlier run (pid {r['run_pid']}, gone) left behind: "
                      + (", ".join(r["stopped"]) or "no process") +
                      (f"; its platform: {r['platform']['action']}" if r["platform"].get("data_dir") else ""))
        self._event({"phase": "start", **p, "left_behind_by_dead_runs": self.reaped})
        self._say(f"platform: {p['endpoint']} ({platform_phrase(p)})")

    def tell_end(self, outcome: dict) -> None:
        p = self.platform
        if not p:
            return
        self._event({"phase": "end", "endpoint": p.get("endpoint"), "data_dir": p.get("data_dir"),
                     "how": p.get("how"), **{k: v for k, v in outcome.items() if k in ("action", "by")}})
        where = f"{p.get('endpoint')} (data dir {p.get('data_dir')})"
        action = outcome.get("action")
        if action == "stopped":
            self._say(f"stopped the local platform {where}")
        elif action == "in use":
            self._say(f"left the local platform {where} running: run(s) with pid "
                      f"{', '.join(str(x) for x in outcome.get('by', []))} still use it, and the "
                      "last of them stops it")
        elif action == "left" and p.get("kept"):
            self._say(f"kept the local platform {where} running (--keep-platform); stop it with: "
                      f"faascope platform stop --data-dir {p.get('data_dir')}")
        elif action == "left":
            self._say(f"left the local platform {where} running, as it was before the campaign")

    def _say(self, msg: str) -> None:
        if self.say is not None:
            self.say(msg)

    def _event(self, detail: dict) -> None:
        if self.event is not None:
            try:
                self.event(PLATFORM_EVENT, detail)
            except Exception:  # an unwritable results file must not keep a platform running
                pass

    def event_detail(self) -> dict:
        servers = [d | {"started": d["kind"] not in self.reused} for d in self.used.describe()]
        return {"servers": servers, "platform": self.platform, "expose": self.expose,
                "default_profile": self.default_profile, "shaping": dict(self.shaping),
                "expose_by_profile": {p: e for p, (_, e) in self.by_profile.items()},
                "code_via_s3": None if self.code_s3 is None else
                {"endpoint": self.code_s3["endpoint"], "bucket": self.code_s3["bucket"]}}


def platform_phrase(p: dict) -> str:
    """Whose the platform is and what becomes of it, for the console."""
    where = f"data dir {p.get('data_dir')}, pid {p.get('pid')}"
    how = p.get("how")
    if how == "given":
        return "provider.settings.endpoint_url; not faascope's to start or stop"
    if how in ("started", "dedicated"):
        what = "started by this run" + (" for this campaign alone" if how == "dedicated" else "")
        return f"{what}, {where}; " + ("kept running at the end (--keep-platform)" if p.get("kept")
                                       else "stopped when the campaign ends (--keep-platform keeps it)")
    if p.get("owner") == "run":
        return (f"already running, started by another run, {where}; " +
                ("kept (--keep-platform)" if p.get("kept")
                 else "the last run that uses it stops it"))
    return f"already running, {where}; left running"


def open_provider(kind: str, settings: Any, payloads: Iterable[Mapping],
                  event: Optional[EventSink] = None,
                  profiles: Iterable[Optional[str]] = (None,),
                  image_sizes: Iterable[Optional[int]] = (),
                  keep_platform: bool = False, say: Optional[Say] = None) -> Provider:
    """The campaign's provider: for a local campaign, a :class:`LocalProvider` on the platform
    :func:`provide` chooses (started here when none runs, and then stopped when the provider
    closes unless ``keep_platform``), wired to the stand-ins its payloads need (they stop when
    it closes); else ``make_provider``. ``profiles`` are the sandbox profiles of the campaign's
    functions (None: the platform's default), for which stand-ins are shaped; ``image_sizes``
    their packages' sizes: one that may be over Lambda's direct-upload limit brings the S3
    stand-in, which the package is deployed through
    (:func:`faascope.providers.packaging.needs_s3_upload`). ``say``: where the platform that
    serves the campaign is named, at the start and the end."""
    if not PROVIDER_KINDS[kind].local:  # stand-ins serve the local platform only
        return make_provider(kind, settings)
    n = needs_of(payloads)
    if any(needs_s3_upload(s) for s in image_sizes):
        n.code_s3 = True
        n.kinds.add("s3")
    if not n and settings.endpoint_url:
        return make_provider(kind, settings)  # the user's platform, used as given
    wired = provide(n, data_dir=settings.data_dir, endpoint_url=settings.endpoint_url, profiles=profiles,
                    keep_platform=keep_platform, event=event, say=say)
    try:
        provider = LocalProvider(
            endpoint_url=wired.endpoint, max_attempts=settings.max_attempts,
            read_timeout_s=settings.read_timeout_s, connect_timeout_s=settings.connect_timeout_s,
            keep_alive_s=getattr(settings, "keep_alive_s", None), function_env=wired.env,
            expose=wired.expose, on_close=wired.stop, default_profile=wired.default_profile,
            by_profile=wired.by_profile if n else None, code_s3=wired.code_s3,
            details={"platform": wired.platform["how"],
                     "standins": sorted(wired.used.servers)} if n else {})
        wired.tell_start()
        if event is not None and n:
            event(STANDINS_EVENT, wired.event_detail())
            # what the host can deliver per stand-in and device (a few seconds; local only:
            # a cloud's storage is not this machine's)
            event(HOST_CAPACITY_EVENT, capacity.probe(wired.used, n.kinds))
    except BaseException:
        wired.stop()
        raise
    return provider


def provide(n: Needs, data_dir: Optional[str | Path] = None,
            endpoint_url: Optional[str] = None, profiles: Iterable[Optional[str]] = (None,),
            keep_platform: bool = False, event: Optional[EventSink] = None,
            say: Optional[Say] = None) -> Wired:
    """Stop what runs that are gone left behind, start (or reuse) the stand-ins ``n`` names,
    choose the platform and shape the stand-ins for the profiles' functions, writing down what
    is started as it is; the caller stops the result (:meth:`Wired.stop`)."""
    data_dir = Path(data_dir or local_platform.default_data_dir())
    profiles = list(dict.fromkeys(profiles)) or [None]
    reaped = leftovers.reap(data_dir)
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
    wired = Wired(endpoint="", used=used, owned=standins.StandIns(), reused=reused, platform={},
                  record=leftovers.RunRecord.create(data_dir), keep_platform=keep_platform,
                  reaped=reaped, event=event, say=say)
    try:
        if missing:
            wired.owned = standins.start(missing, data_dir=data_dir, tables=tuple(sorted(n.tables)),
                                         memory=memory, on_change=wired.note_owned)
        used.servers.update(wired.owned.servers)
        _ensure_containers(used, n)
        _choose_platform(wired, n, data_dir, endpoint_url)
        if n.code_s3:
            s3 = used.servers["s3"]
            wired.code_s3 = {"endpoint": s3.endpoint,
                             **{k: s3.extra.get(k) for k in ("bucket", "region", "access_key", "secret_key")}}
        wired.default_profile = wired.platform.get("profile") or "lambda"
        resolved = list(dict.fromkeys(p or wired.default_profile for p in profiles))
        _shape(wired, resolved, saved)
        wired.note_owned()
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
        w.platform = {"data_dir": "", "pid": h.get("pid"), "owner": "user", "kept": False}
    else:
        # under the runs' lock: a run that ends meanwhile sees this one among the platform's users
        with leftovers.locked(data_dir):
            h, how = _choose_local(w, want_shared, want_s3, data_dir)
    w.platform = {"endpoint": w.endpoint, "how": how, "isolation": h.get("isolation", ""),
                  "profile": h.get("profile", ""),
                  "host_network": bool(h.get("host_network", False)),
                  "shared_dir": h.get("shared_dir") or "", **w.platform}
    if want_shared:
        shared = h["shared_dir"]
        w.used.servers["shared"] = standins.Server("shared", None, None, shared, shared,
                                                   extra={"name": "directory", "version": ""})
        w.reused.add("shared")  # a directory is never removed: it belongs to the platform


def _choose_local(w: Wired, want_shared: bool, want_s3: Optional[str], data_dir: Path) -> tuple[dict, str]:
    """The local platform of data_dir when it fits, else one started here (the usual one, or a
    dedicated one beside a running platform that does not fit); written in the run's record.
    Its health and how it was chosen; w.platform gets its data directory, pid and owner."""
    default_shared = data_dir / "shared"
    state = local_platform.running(data_dir)
    by_run = not w.keep_platform   # a kept platform is the user's from the start
    if state is not None and (not want_shared or state["health"].get("shared_dir")) and \
            (not want_s3 or state["health"].get("s3_endpoint") == want_s3):
        h, how, pdir = state["health"], "running", data_dir
        owner = "run" if state.get("started_by_run") else "user"
        if owner == "run" and w.keep_platform:
            local_platform.disown(data_dir)
    elif state is None:
        # the usual platform, with a shared directory that persists with it (as an EFS file
        # system would) when one is needed
        if want_shared:
            standins.make_shared(default_shared, data_dir)
        state = local_platform.start(profile="lambda", data_dir=data_dir,
                                     shared_dir=default_shared if want_shared else None,
                                     s3=_s3_source(w), by_run=by_run)
        h, how, pdir, owner = local_platform.health(state["endpoint"]) or {}, "started", data_dir, "this run"
    else:
        if want_shared:
            standins.make_shared(default_shared, data_dir)
        pdir = Path(tempfile.mkdtemp(prefix="campaign-platform-", dir=data_dir))
        if w.record is not None:  # the directory is the run's until its platform runs
            w.record.doc["dirs"].append(str(pdir))
            w.record.write()
        try:
            state = local_platform.start(profile="lambda", data_dir=pdir, port=0,
                                         shared_dir=default_shared if want_shared else None,
                                         s3=_s3_source(w), by_run=by_run)
        except BaseException:
            shutil.rmtree(pdir, ignore_errors=True)
            raise
        if w.record is not None:
            w.record.doc["dirs"].remove(str(pdir))
        h, how, owner = local_platform.health(state["endpoint"]) or {}, "dedicated", "this run"
    w.endpoint = state["endpoint"]
    if w.record is not None:
        w.record.use_platform(pdir, w.endpoint, state["pid"], how,
                              remove_dir=how == "dedicated" and not w.keep_platform)
    w.platform = {"data_dir": str(pdir), "pid": state["pid"], "owner": owner,
                  "kept": w.keep_platform and owner != "user"}
    return h, how


def _s3_source(w: Wired) -> Optional[dict]:
    """The S3 stand-in a platform started here reads Code.S3Bucket/S3Key packages from, when the
    campaign has one that outlives the platform's start (a platform started here and kept, or
    still used by another run, outlives a stand-in owned by this campaign, which stops before
    it: S3 code then fails with the S3 endpoint's connection error; a reused one keeps
    serving)."""
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
            w.note_owned()
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
