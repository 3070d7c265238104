"""The sandbox's service management, in one place: loopback ports, the processes a sandbox
starts, waiting for them to serve, the probes those waits use, and the one distribution service
the sandbox needs besides the pinned builds (Redis, for Argo CD).

A process is started detached in a session of its own, its output appended to its log file;
it is stopped by its process group (SIGTERM, then SIGKILL after a grace). Every wait has a
deadline and fails with what it waited for and the last lines of the log that says why: the
log of a process that exited meanwhile, or of the one that did not answer.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
import typing as t
import urllib.error
import urllib.request
from pathlib import Path

from auditor.errors import SandboxError

READY_TIMEOUT = 120.0  # seconds for a sandbox's processes to serve, on a busy 2-core machine
POLL = 0.25  # seconds between two looks at a process that is not ready yet
STOP_GRACE = 10.0  # seconds a stopped process has to exit before it is killed

# Children started by this process, kept so they are reaped (and not warned about) properly.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


# Ports handed out by this process. A port is chosen some moments before its process binds it,
# and the kernel, asked again meanwhile, may choose the same one (measured: 1,000 asks, 963
# distinct) — two of a sandbox's listeners on one port, and etcd dies "address already in use".
_HANDED_OUT: collections.deque[int] = collections.deque(maxlen=4096)


def free_port() -> int:
    """A loopback port nothing listens on now (the kernel's choice), and not one this process
    has handed out before."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.append(port)
            return port


class PortTaken(SandboxError):
    """A process found the port chosen for it taken — by another process, between our choice
    and its bind. Nothing is wrong with the sandbox: starting again on fresh ports cures it."""


PORT_ATTEMPTS = 3  # starts on fresh ports before a taken port is reported as the failure

P = t.ParamSpec("P")
R = t.TypeVar("R")


def again_on_taken_port(start: t.Callable[P, R]) -> t.Callable[P, R]:
    """`start` (which chooses its ports afresh on every call) run again when a port it chose
    was taken before its process bound it; the last attempt's failure is reported as is."""

    @functools.wraps(start)
    def started(*args: P.args, **kwargs: P.kwargs) -> R:
        for _ in range(PORT_ATTEMPTS - 1):
            try:
                return start(*args, **kwargs)
            except PortTaken as taken:
                say = kwargs.get("log")  # the start's progress callback, when it was given one
                if callable(say):
                    said = str(taken).split(";")[0]
                    say(f"{said}: a port it was given was taken; starting again on fresh ports")
        return start(*args, **kwargs)

    return started


# -- processes ---------------------------------------------------------------------------------


def spawn(argv: list[str], log: Path, env: t.Mapping[str, str] | None = None) -> int:
    """Start `argv` detached (a session of its own, so it outlives us and stops as a group),
    with `env` added to ours and its output appended to `log`; its pid."""
    out = open(log, "ab")  # noqa: SIM115 (the child keeps it open)
    proc = subprocess.Popen(
        argv,
        env={**os.environ, **env} if env else None,
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    out.close()
    _CHILDREN[proc.pid] = proc
    return proc.pid


def alive(pid: int) -> bool:
    child = _CHILDREN.get(pid)
    if child is not None:
        return child.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop(pid: int, grace: float = STOP_GRACE) -> bool:
    """Stop the process group of `pid`; whether it was running."""
    if not alive(pid):
        return False
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not alive(pid):
            _CHILDREN.pop(pid, None)
            return True
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    child = _CHILDREN.pop(pid, None)
    if child is not None:
        child.wait(timeout=grace)
    return True


def tail(log: Path, lines: int = 15) -> str:
    """The last lines of a process's log, to say why it failed."""
    if not log.exists():
        return "(no log)"
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


# -- waiting -----------------------------------------------------------------------------------


class Watched(t.NamedTuple):
    """A process a wait watches: its name, pid and log."""

    name: str
    pid: int
    log: Path


def wait_until(
    what: str,
    deadline: float,
    ready: t.Callable[[], bool],
    watched: t.Sequence[Watched],
    *,
    where: str = "",
) -> None:
    """Poll `ready` until it holds or `deadline` (monotonic) passes. Fails at once, with its
    log, when a watched process exits; at the deadline with the first watched one's log."""
    started = time.monotonic()
    prefix = f"{where}: " if where else ""
    while True:
        for w in watched:
            if not alive(w.pid):
                said = tail(w.log)
                taken = PortTaken if "address already in use" in said else SandboxError
                raise taken(
                    f"{prefix}{w.name} exited while starting; last lines of {w.log}:\n{said}"
                )
        if ready():
            return
        if time.monotonic() >= deadline:
            break
        time.sleep(POLL)
    said = f" (last lines of {watched[0].log}):\n{tail(watched[0].log)}" if watched else ""
    raise SandboxError(f"{prefix}{what} not ready within {max(0.0, deadline - started):.0f}s{said}")


# -- probes: is it serving? --------------------------------------------------------------------


def port_open(port: int) -> bool:
    """Something accepts connections on the loopback port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def http_ok(url: str, context: ssl.SSLContext | None = None) -> bool:
    """`url` answers 200 (a health, readiness or metrics endpoint)."""
    try:
        with urllib.request.urlopen(url, context=context, timeout=5) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ssl.SSLError):
        return False


def redis_ping(port: int) -> bool:
    """Redis on the loopback port answers PING."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


# -- distribution services ---------------------------------------------------------------------

REDIS_PACKAGES = (
    "Debian/Ubuntu: `sudo apt-get install redis-server`; Fedora: `sudo dnf install redis`"
)


def redis_server() -> str:
    """The distribution's `redis-server` (Argo CD keeps its cache in Redis). It is a system
    package, installed with the machine's other packages (`make test` and `make demo` do it
    through scripts/system-packages.sh), never by the tool itself."""
    found = shutil.which("redis-server")
    if found is None:
        raise SandboxError(
            "Argo CD needs Redis and `redis-server` is not on PATH: install the distribution's "
            f"package ({REDIS_PACKAGES}; `make test` does it when it may), then run this again"
        )
    return found
