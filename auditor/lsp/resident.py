"""The resident validate: the language server's session (auditor/validate/session.py) kept in
a background process for one repository, answering `validate` (auditor/lsp/ask.py) for
editors' save hooks, pre-commit and repeated CI steps.

    python -m auditor.lsp.resident ROOT [--idle SECONDS]

Before each answer it hands the session the files of the working tree (.git aside) that
changed, appeared or went away since the last (auditor/lsp/watch.py: told by inotify, else by
walking the tree); the session computes again what depends on them. A new day (suppressions
expire), many changed files, or a failed answer loads everything again. The files are looked at
before the session reads them, so a write in between is seen next time.

It exits after `--idle` seconds without a question (15 minutes by default), when the
repository's folder is gone, and on SIGTERM; one lock file per repository (holding its pid)
keeps a second from starting beside it.
"""

from __future__ import annotations

import argparse
import datetime
import fcntl
import gc
import json
import os
import pickle
import select
import signal
import socket
import sys
import time
import typing as t
from pathlib import Path

from auditor.errors import AuditorError
from auditor.lsp import ask, watch
from auditor.model import ClusterResult, Report
from auditor.validate import engine
from auditor.validate.session import SCHEMAS, Session

TICK = 2.0  # seconds between looks at whether the repository is still there
RELOAD_ABOVE = 200  # more changed files than this: load everything again


class Resident:
    """The session of one repository, brought up to date before each answer."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = watch.Files(str(root))
        self.session: Session | None = None

    def warm(self) -> None:
        """Load the repository now (a failure is said when asked: the repository may be
        mended by then)."""
        try:
            self.answer()
        except Exception as exc:
            print(f"the first load failed: {exc}", file=sys.stderr)

    def answer(self) -> tuple[Report, list[tuple[str, bool]]]:
        """validate's report of the working tree as it is now, and its notes."""
        changed = self.files.look()
        session, loaded = self.session, True
        try:  # everything again for a new day too: suppressions may have expired
            if session is None:
                session = Session(self.root, self.root / SCHEMAS)
            elif session.today != datetime.date.today() or len(changed) > RELOAD_ABOVE:
                session.reload()
            else:
                before = session.clusters
                for path in sorted(changed):
                    session.changed(path)
                loaded = session.clusters is not before  # the session loaded everything
        except BaseException:
            self.session = None  # half brought up to date: load everything next time
            raise
        self.session = session
        if loaded:  # what stays loaded is not walked by the collector again (as lsp does); the
            gc.unfreeze()  # session it replaced is, once, to free its cycles
            gc.collect()
            gc.freeze()
        return report_of(session)


def report_of(session: Session) -> tuple[Report, list[tuple[str, bool]]]:
    """The report and notes a cold `validate` of every cluster makes of the same files."""
    report = Report("validate")
    notes: list[tuple[str, bool]] = []
    for name, state in session.clusters.items():
        catalog = state.validator.catalog
        report.clusters.append(ClusterResult(name, schemas=catalog.source.to_json()))
        verdicts = [v for f in state.files.values() for v in f.verdicts.values()]
        skipped = {s for v in verdicts for s in v.skipped}
        unsupported = {u for v in verdicts for u in v.unsupported}
        notes += engine.cluster_notes(name, catalog, skipped, unsupported)
    report.findings = list(session.findings)
    return report, notes


class Server:
    """The socket, the questions, the idle clock."""

    def __init__(self, root: Path, idle: float) -> None:
        self.root, self.idle = root, idle
        self.resident = Resident(root)
        self.identity = ask.identity()
        self.started = time.time()
        self.path = ask.socket_path(root)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)

    def listen(self) -> None:
        self.path.unlink(missing_ok=True)  # a stale socket: the lock says nobody serves it
        old = os.umask(0o177)
        try:
            with ask.address(self.path) as name:
                self.sock.bind(name)
        finally:
            os.umask(old)
        self.sock.listen(16)

    def serve(self) -> str:
        """Answer until idle or the repository is gone; why it stopped."""
        last = time.monotonic()
        while True:
            left = self.idle - (time.monotonic() - last)
            if left <= 0:
                return f"idle for {self.idle:g} s"
            if not self.root.is_dir():
                return f"{self.root} is gone"
            ready, _, _ = select.select([self.sock], [], [], min(left, TICK))
            if ready:
                conn, _ = self.sock.accept()
                with conn:
                    self.handle(conn)
                last = time.monotonic()

    def handle(self, conn: socket.socket) -> None:
        conn.settimeout(10.0)
        try:
            _pid, uid = ask.peer(conn)
            if uid != os.getuid():
                return  # another user's process: not a word
            request = _read_request(conn)
            conn.sendall(self.reply(request))
        except (OSError, ValueError) as exc:  # the client went away or spoke nonsense
            print(f"a question not answered: {exc}", file=sys.stderr)

    def reply(self, request: dict[str, t.Any]) -> bytes:
        header: dict[str, t.Any] = {"identity": self.identity, "pid": os.getpid()}
        header["started"] = self.started
        body = b""
        if request.get("identity") != self.identity or request.get("protocol") != ask.PROTOCOL:
            header.update(ok=False, why="another version of kueue-gitops asked")
        elif request.get("root") != str(self.root):
            header.update(ok=False, why=f"it serves {self.root}")
        else:
            try:
                body = pickle.dumps(self.resident.answer(), pickle.HIGHEST_PROTOCOL)
                header.update(ok=True)
            except AuditorError as exc:  # a profile that does not parse, say: as cold says
                header.update(ok=False, why=str(exc))
            except Exception as exc:  # a bug: the cold run says it properly (exit 3)
                header.update(ok=False, why=f"internal error ({type(exc).__name__}: {exc})")
        return json.dumps(header).encode() + b"\n" + body

    def close(self) -> None:
        self.resident.files.close()
        self.sock.close()
        self.path.unlink(missing_ok=True)


def _read_request(conn: socket.socket) -> dict[str, t.Any]:
    data = b""
    while not data.endswith(b"\n") and len(data) < ask.MAX_REQUEST:
        chunk = conn.recv(ask.MAX_REQUEST)
        if not chunk:
            break
        data += chunk
    request = json.loads(data)
    if not isinstance(request, dict):
        raise ValueError("a request is a JSON object")
    return request


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m auditor.lsp.resident")
    parser.add_argument("root", type=Path)
    parser.add_argument("--idle", type=float, default=ask.IDLE_SECONDS)
    parser.add_argument("--ready-fd", type=int, help="write 'ready' here once listening")
    args = parser.parse_args(argv)
    if args.ready_fd is not None and os.fork():
        os._exit(0)  # started by `ask.start`: its child returns at once, the resident lives on
    root = Path(os.path.realpath(args.root))
    ask.make_folder()
    with open(ask.socket_path(root).with_suffix(".lock"), "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another resident serves this repository
            _ready(args.ready_fd)
            return 0
        lock.truncate(0)
        lock.write(f"{os.getpid()}\n")
        lock.flush()
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        gc.set_threshold(200_000, 30, 30)  # long-lived objects, next to no cycles: as validate
        server = Server(root, args.idle)
        try:
            server.resident.warm()
            server.listen()
            _ready(args.ready_fd)
            why = server.serve()
        finally:
            server.close()
        print(f"kueue-gitops resident for {root}: stopped, {why}", file=sys.stderr)
    return 0


def _ready(fd: int | None) -> None:
    if fd is not None:
        os.write(fd, f"ready {os.getpid()}\n".encode())
        os.close(fd)


if __name__ == "__main__":
    sys.exit(main())
