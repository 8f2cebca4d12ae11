"""A tiny Chrome DevTools Protocol client for tests: Debian's headless Chromium driven over
``--remote-debugging-pipe`` (JSON messages separated by NUL bytes on file descriptors 3 and 4),
so no websocket library, no browser download and no network port are needed.

    with Browser() as b:
        page = b.open("file:///…/report.html")   # waits for the load event
        page.evaluate("document.title")
        page.screenshot(path)
        page.console_errors                       # console.error, exceptions, error log entries
        page.requests                             # every URL the page asked for
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
         "--remote-debugging-pipe", "--enable-logging=stderr", "--v=0"]


class CDPError(RuntimeError):
    pass


class Browser:
    def __init__(self, timeout: float = 60.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="faascope-chromium-")
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # the child sees our pipes as fds 3 (its input) and 4 (its output); move them out of the way first
        hi_in = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
        hi_out = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
        os.close(to_chrome_r)
        os.close(from_chrome_w)

        def remap():  # runs in the child between fork and exec
            os.dup2(hi_in, 3)
            os.dup2(hi_out, 4)

        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.stderr,
                                     close_fds=False, preexec_fn=remap)
        os.close(hi_in)
        os.close(hi_out)
        os.set_blocking(self._r, False)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    # ------------------------------------------------------------------ protocol
    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            n = os.write(self._w, data)
            data = data[n:]
        want = self._id
        deadline = time.monotonic() + self.timeout
        while True:
            for m in self._read(deadline):
                if m.get("id") == want:
                    if "error" in m:
                        raise CDPError(f"{method}: {m['error']}")
                    return m.get("result", {})

    def _read(self, deadline: float) -> list[dict]:
        if time.monotonic() > deadline:
            raise CDPError("timed out waiting for Chromium")
        if self.proc.poll() is not None:
            raise CDPError(f"Chromium exited with {self.proc.returncode}: {self.log()[-2000:]}")
        ready, _, _ = select.select([self._r], [], [], 0.2)
        out = []
        if ready:
            try:
                chunk = os.read(self._r, 1 << 20)
            except BlockingIOError:
                chunk = b""
            self._buf += chunk
            while b"\0" in self._buf:
                raw, self._buf = self._buf.split(b"\0", 1)
                m = json.loads(raw)
                if "method" in m:
                    self.events.append(m)
                out.append(m)
        return out

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._read(end + self.timeout)

    def wait_event(self, method: str, session: str | None, seconds: float) -> dict:
        deadline = time.monotonic() + seconds
        seen = len(self.events)
        while True:
            for e in self.events[seen:]:
                if e["method"] == method and (session is None or e.get("sessionId") == session):
                    return e
            seen = len(self.events)
            self._read(deadline)

    def log(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    # ------------------------------------------------------------------ pages
    def open(self, url: str, width: int = 1400, height: int = 1000, load_timeout: float = 60.0) -> "Page":
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", {}, session)
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session)
        page.mark = len(self.events)
        self.send("Page.navigate", {"url": url}, session)
        self.wait_event("Page.loadEventFired", session, load_timeout)
        return page

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    self.send("Browser.close")
                except CDPError:
                    pass
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(10)
        finally:
            for fd in (self._r, self._w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Page:
    def __init__(self, browser: Browser, session: str):
        self.b = browser
        self.session = session
        self.mark = 0

    def _events(self) -> list[dict]:
        return [e for e in self.b.events[self.mark:] if e.get("sessionId") == self.session]

    def evaluate(self, expr: str, await_promise: bool = False):
        r = self.b.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                             "awaitPromise": await_promise}, self.session)
        if "exceptionDetails" in r:
            raise CDPError(f"{expr[:80]}: {r['exceptionDetails'].get('text')} "
                           f"{r['exceptionDetails'].get('exception', {}).get('description', '')}")
        return r["result"].get("value")

    def wait_for(self, expr: str, seconds: float = 30.0, interval: float = 0.25):
        deadline = time.monotonic() + seconds
        while True:
            v = self.evaluate(expr)
            if v:
                return v
            if time.monotonic() > deadline:
                raise CDPError(f"timed out waiting for {expr}")
            self.b.pump(interval)

    @property
    def console_errors(self) -> list[str]:
        out = []
        for e in self._events():
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console." + p["type"] + ": " + " ".join(str(a.get("value", a.get("description", "")))
                                                                   for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: " + str(d.get("exception", {}).get("description") or d.get("text")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: " + p["entry"].get("text", ""))
        return out

    @property
    def console_warnings(self) -> list[str]:
        return [" ".join(str(a.get("value", "")) for a in e["params"].get("args", []))
                for e in self._events() if e["method"] == "Runtime.consoleAPICalled"
                and e["params"].get("type") == "warning"]

    @property
    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self._events() if e["method"] == "Network.requestWillBeSent"]

    def screenshot(self, path: str | Path, *, full_page: bool = False, clip: dict | None = None) -> Path:
        params: dict = {"format": "png"}
        if full_page or clip:
            if clip is None:
                w, h = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
                clip = {"x": 0, "y": 0, "width": w, "height": h}
            params["clip"] = {**clip, "scale": clip.get("scale", 1)}
            params["captureBeyondViewport"] = True
        data = self.b.send("Page.captureScreenshot", params, self.session)["data"]
        path = Path(path)
        path.write_bytes(base64.b64decode(data))
        return path
