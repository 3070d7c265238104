"""Asking the resident validate of a repository (auditor/lsp/resident.py), and starting one.

One resident per repository (by its real path) listens on a Unix socket in the user cache
directory: `resident/<key>.sock`, the folder 0700, the socket 0600, and each side checks that
the other is a process of the same user (SO_PEERCRED) before it reads a byte. The client sends
one JSON line (the protocol, the tool's identity, the repository); the resident answers one
JSON line (its identity, pid, start time; `ok`, or `why` not), then, when ok, the pickled
report and notes. A pickle is only read from a peer of the same user and the same identity
(the stat of every source file of the package: an edited checkout or another install is
another tool), so nothing it holds comes from someone who could not already run
code as the user.

Asking never answers wrongly: no socket is "none runs" (a cold run, silently); a socket
nobody listens on, a resident that does not answer within the deadline, one of another
identity, or one that could not compute the report is a note, and the run is cold.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import time
import typing as t
from dataclasses import dataclass
from pathlib import Path

from auditor import cache

if t.TYPE_CHECKING:
    from auditor.model import Report

PROTOCOL = 1
IDLE_SECONDS = 15 * 60  # a resident nobody asked for this long exits
DEADLINE_ENV = "KUEUE_GITOPS_RESIDENT_DEADLINE"
DEADLINE = 30.0  # seconds for an answer (an edit of a profile loads everything again)
START_DEADLINE = 300.0  # seconds for a new resident's first load of the repository
MAX_REQUEST = 64 * 1024
_SOURCE = Path(__file__).resolve().parents[1]  # the auditor package
_UCRED = struct.Struct("3i")  # pid, uid, gid


class Refused(Exception):
    """Why a resident's answer is not used (said as a note; the run is cold). `outdated`: the
    pid of a resident of another version, which `--resident` replaces."""

    def __init__(self, message: str, outdated: int | None = None) -> None:
        super().__init__(message)
        self.outdated = outdated


@dataclass
class Answer:
    report: Report
    notes: list[tuple[str, bool]]  # (text, minor), as a cold run says them
    pid: int
    started: float  # the resident's start, time.time()


def folder() -> Path:
    return cache.area("resident")


def socket_path(root: Path) -> Path:
    key = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:16]
    return folder() / f"{key}.sock"


def identity(source: Path = _SOURCE) -> str:
    """The protocol, the Python and the stat (size, mtime, inode) of every source file of the
    package, rules files too: cheap enough for every run, and another for any edit of the tool
    or any install of it (a reinstall writes new files)."""
    digest = hashlib.sha256(f"{PROTOCOL}\0{sys.version}\0{source}".encode())
    for here, dirs, files in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json", ".yaml")):
                info = os.stat(os.path.join(here, name))
                stamp = f"{here}/{name}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ino}\0"
                digest.update(stamp.encode())
    return digest.hexdigest()


@contextlib.contextmanager
def address(path: Path) -> t.Iterator[str]:
    """A name for `path` short enough for a socket address (108 bytes): through the folder's
    descriptor (/proc/self/fd/N/name) when the cache directory's path is long."""
    if len(os.fsencode(path)) < 100:
        yield str(path)
        return
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def peer(sock: socket.socket) -> tuple[int, int]:
    """The pid and uid of the process at the other end of `sock`."""
    pid, uid, _gid = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return pid, uid


def answer(root: Path, *, start_one: bool) -> Answer | None:
    """The report of the resident of `root`, started first with `start_one` when none runs
    (or one of another version, stopped); None: none runs. Raises Refused (a note)."""
    if not hasattr(socket, "SO_PEERCRED"):  # no way to know who is at the other end
        if start_one:
            raise Refused("the resident validate needs Linux (SO_PEERCRED)")
        return None
    try:
        found = ask(root)
    except Refused as exc:
        if not (start_one and exc.outdated):
            raise
        stop(exc.outdated)
        found = None
    if found is None and start_one:
        start(root)
        found = ask(root)
    return found


def ask(root: Path, deadline: float | None = None) -> Answer | None:
    """The resident's report of `root`; None when none runs. Raises Refused (a note)."""
    path = socket_path(root)
    if not path.exists():
        return None
    if deadline is None:
        deadline = float(os.environ.get(DEADLINE_ENV) or DEADLINE)
    ends = time.monotonic() + deadline
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        pid = _connect(sock, path, deadline)
        request = {"protocol": PROTOCOL, "identity": identity(), "root": os.path.realpath(root)}
        data = _exchange(sock, json.dumps(request).encode() + b"\n", ends)
    head, _, body = data.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:
        raise Refused(f"the resident (pid {pid}) spoke another protocol") from None
    if header.get("identity") != request["identity"]:
        raise Refused(f"the resident (pid {pid}) is another version of kueue-gitops", pid)
    if not header.get("ok"):
        raise Refused(f"the resident (pid {pid}) did not answer: {header.get('why')}")
    report, notes = pickle.loads(body)  # a peer of this user and this very tool: see above
    return Answer(report, notes, pid, float(header["started"]))


def _connect(sock: socket.socket, path: Path, deadline: float) -> int:
    """Connect to `path`; the pid of the process of this user at the other end."""
    sock.settimeout(deadline)
    try:
        with address(path) as name:
            sock.connect(name)
    except TimeoutError:
        raise Refused("the resident did not answer within its deadline") from None
    except OSError as exc:
        why = exc.strerror or exc
        removed = "; removed" if _remove_stale(path) else ""
        raise Refused(f"nobody answers on {path} ({why}): a stale socket{removed}") from None
    pid, uid = peer(sock)
    if uid != os.getuid():
        raise Refused(f"{path} is served by another user's process (uid {uid})")
    return pid


def _remove_stale(path: Path) -> bool:
    """Remove the socket `path` when no resident holds its lock (one that is starting does)."""
    try:
        with open(path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            path.unlink(missing_ok=True)
            return True
    except OSError:  # held (BlockingIOError), or not ours to touch
        return False


def stop(pid: int, deadline: float = 30.0) -> None:
    """Stop the resident `pid` (SIGTERM) and wait, at most `deadline` seconds, until it has."""
    try:
        fd = os.pidfd_open(pid)
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        if not select.select([fd], [], [], deadline)[0]:
            raise Refused(f"the resident (pid {pid}) of another version did not stop")
    finally:
        os.close(fd)


def _exchange(sock: socket.socket, request: bytes, ends: float) -> bytes:
    """Send `request`, read the answer to its end, all before `ends` (time.monotonic())."""
    chunks: list[bytes] = []
    try:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        while True:
            left = ends - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
            chunk = sock.recv(1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    except TimeoutError:
        raise Refused("the resident did not answer within its deadline") from None
    except OSError as exc:
        raise Refused(f"the resident's answer broke off ({exc.strerror or exc})") from None


def start(root: Path, deadline: float = START_DEADLINE, idle: float = IDLE_SECONDS) -> int:
    """Start a resident for `root` (none answers for it), and wait until it listens; its pid.
    It is nobody's child (its first process forks it and exits), in a session of its own.
    Raises Refused when it could not start (the reason it gave)."""
    log = folder() / f"{socket_path(root).stem}.log"
    make_folder()
    read_end, write_end = os.pipe()
    argv = [sys.executable, "-m", "auditor.lsp.resident", os.path.realpath(root)]
    argv += ["--idle", str(idle), "--ready-fd", str(write_end)]
    with open(log, "wb") as err:
        subprocess.run(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            pass_fds=(write_end,), start_new_session=True, cwd="/", check=False,
            timeout=deadline,
        )  # fmt: skip
    os.close(write_end)
    try:  # the resident writes one line when it listens; end of file: it exited
        ready, _, _ = select.select([read_end], [], [], deadline)
        said = os.read(read_end, 4096).decode() if ready else ""
    finally:
        os.close(read_end)
    if said.startswith("ready "):
        return int(said.split()[1])
    why = f"it did not start within {deadline:g} s" if not ready else "no reason given"
    reason = log.read_text(errors="replace").strip().splitlines()[-1:] or [why]
    raise Refused(f"the resident could not start: {reason[0]}")


def make_folder() -> Path:
    """The sockets' folder, 0700 and the user's own (else Refused: not ours to trust)."""
    here = folder()
    here.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = here.stat()
    if info.st_uid != os.getuid():
        raise Refused(f"{here} belongs to another user")
    if info.st_mode & 0o077:
        here.chmod(0o700)
    return here
