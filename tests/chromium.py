"""Open a page in Debian's headless Chromium and report what a person would see: the console's
errors, every request that left the page, what the page's own expression evaluates to, and a
screenshot. A small DevTools-protocol client over websocket-client (already a dependency of the
Kubernetes client); scripts/system-packages.sh installs chromium."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

import websocket

CHROMIUM = shutil.which("chromium") or shutil.which("google-chrome") or "/usr/bin/chromium"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-port=0",
    "--window-size=1400,1000",
)
DEADLINE = 60.0  # seconds for the browser to start and the page to load


@dataclass
class Visit:
    errors: list[str] = field(default_factory=list)  # console errors, exceptions, log errors
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    value: t.Any = None  # the evaluated expression's result
    screenshot: bytes = b""


class _Session:
    def __init__(self, url: str) -> None:
        self.ws = websocket.create_connection(url, timeout=DEADLINE, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict[str, t.Any]] = []

    def call(self, method: str, session: str | None = None, **params: t.Any) -> dict[str, t.Any]:
        self.next_id += 1
        message: dict[str, t.Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return t.cast(dict[str, t.Any], reply.get("result", {}))
            self.events.append(reply)
        raise TimeoutError(f"no answer to {method} within {DEADLINE:.0f} s")

    def wait_for(self, method: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while not any(e.get("method") == method for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {method} within {DEADLINE:.0f} s")
            self.events.append(json.loads(self.ws.recv()))


def visit(page: Path, expression: str) -> Visit:
    """Load `page` (a file) in a fresh headless Chromium, evaluate `expression` once it has
    loaded (its value returned by value), and take a full-page screenshot."""
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its helpers in its group, so all stop before the profile goes
        )
        try:
            return _drive(Path(profile) / "DevToolsActivePort", page, expression)
        finally:
            _stop_group(proc)


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill Chromium and every helper it started, and wait until none still runs: the browser
    alone exiting is not enough — a helper still writing into the profile made its removal
    fail ("Directory not empty"). The profile is thrown away, so nothing needs a graceful exit."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=DEADLINE)
    deadline = time.monotonic() + DEADLINE
    while _running_in_group(proc.pid):
        if time.monotonic() > deadline:
            raise TimeoutError(f"Chromium's helpers outlived SIGKILL by {DEADLINE:.0f} s")
        time.sleep(0.02)


def _running_in_group(pgid: int) -> bool:
    """A process of the group is not yet dead (a zombie writes nothing: init reaps it later)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            # pid (comm) state ppid pgrp ...: comm may hold spaces, so read after its ")"
            state, _ppid, group = stat.read_text().rpartition(")")[2].split()[:3]
            if int(group) == pgid and state not in ("Z", "X"):
                return True
    return False


def _drive(port_file: Path, page: Path, expression: str) -> Visit:
    deadline = time.monotonic() + DEADLINE
    while not (port_file.exists() and len(port_file.read_text().splitlines()) >= 2):
        if time.monotonic() > deadline:
            raise TimeoutError(f"Chromium wrote no {port_file.name} within {DEADLINE:.0f} s")
        time.sleep(0.05)
    port, path = port_file.read_text().splitlines()[:2]
    browser = _Session(f"ws://127.0.0.1:{port}{path}")
    try:
        target = browser.call("Target.createTarget", url="about:blank")["targetId"]
        session = browser.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.call(f"{domain}.enable", session)
        browser.events.clear()
        browser.call("Page.navigate", session, url=page.resolve().as_uri())
        browser.wait_for("Page.loadEventFired")
        result = browser.call(
            "Runtime.evaluate", session, expression=expression, returnByValue=True
        )
        shot = browser.call(
            "Page.captureScreenshot", session, format="png", captureBeyondViewport=True
        )
        seen = Visit(value=result["result"].get("value"), screenshot=base64.b64decode(shot["data"]))
        if "exceptionDetails" in result:
            seen.errors.append(f"the test's expression: {result['exceptionDetails']}")
        for e in browser.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                seen.errors.append(json.dumps(params.get("args")))
            elif method == "Runtime.exceptionThrown":
                seen.errors.append(json.dumps(params.get("exceptionDetails")))
            elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
                seen.errors.append(params["entry"].get("text", ""))
            elif method == "Network.requestWillBeSent":
                seen.requests.append(params["request"]["url"])
        return seen
    finally:
        browser.ws.close()
