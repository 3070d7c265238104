"""A deadline over a whole HTTP answer, streaming included.

A socket timeout bounds one read, not an answer: a server (or a proxy) that sends its headers
and then a byte a second never trips it. So each request with a deadline is watched: the
connection that carries it registers its socket when it is made and when it waits for the
answer, and at the
deadline one watchdog thread shuts that socket down, which ends the read in progress at once
(the reader sees the connection closed and asks `cut` whether the deadline did it).

The connection classes are urllib3's, with that registration added; `bound(pool_manager)` puts
them in a client's pool manager.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import socket
import threading
import time
import typing as t

import urllib3
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from auditor.live.forking import WATCHDOG


class Watch:
    """One request's socket, and whether the deadline cut it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self.cut = False

    def carry(self, sock: socket.socket | None) -> None:
        """The socket the answer comes on; one already past its deadline is shut at once."""
        with self._lock:
            self._sock = sock
            if self.cut:
                _shut(sock)

    def fire(self) -> None:
        with self._lock:
            self.cut = True
            _shut(self._sock)


def _shut(sock: socket.socket | None) -> None:
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed: nothing is read from it anyway
            sock.shutdown(socket.SHUT_RDWR)


class _Watchdog:
    """One daemon thread that fires each watch at its time (a heap: no thread per request)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Nothing watched, no thread: how a forked child starts (its parent's thread and the
        lock it may have held at the fork are not the child's)."""
        self._due: list[tuple[float, int, Watch]] = []
        self._done: set[int] = set()
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def watch(self, at: float) -> tuple[int, Watch]:
        """A watch fired at monotonic time `at` unless released before."""
        watch, ident = Watch(), next(self._order)
        with self._wake:
            heapq.heappush(self._due, (at, ident, watch))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name=WATCHDOG, daemon=True)
                self._thread.start()
            self._wake.notify()
        return ident, watch

    def release(self, ident: int, watch: Watch) -> None:
        with self._wake:
            if not watch.cut:  # a fired watch has left the heap already
                self._done.add(ident)

    def _run(self) -> None:
        with self._wake:
            while True:
                while self._due and self._due[0][1] in self._done:
                    self._done.discard(heapq.heappop(self._due)[1])
                if not self._due:
                    self._wake.wait()
                    continue
                at, _, watch = self._due[0]
                now = time.monotonic()
                if now < at:
                    self._wake.wait(at - now)
                    continue
                heapq.heappop(self._due)
                watch.fire()


_WATCHDOG = _Watchdog()
os.register_at_fork(after_in_child=_WATCHDOG.reset)
_CURRENT = threading.local()  # the watch of the request this thread is making


@contextlib.contextmanager
def deadline(at: float | None) -> t.Iterator[Watch | None]:
    """Watch the requests this thread makes inside until `at` (monotonic; None: unwatched)."""
    if at is None:
        yield None
        return
    ident, watch = _WATCHDOG.watch(at)
    _CURRENT.watch = watch
    try:
        yield watch
    finally:
        _CURRENT.watch = None
        _WATCHDOG.release(ident, watch)


class _Registering:
    """A connection that hands its socket to the thread's watch: once connected (a TLS
    handshake can trickle too), and when it waits for an answer (a connection reused)."""

    sock: socket.socket | None

    def _new_conn(self) -> socket.socket:
        sock: socket.socket = super()._new_conn()  # type: ignore[misc]
        watch = getattr(_CURRENT, "watch", None)
        if watch is not None:
            watch.carry(sock)
        return sock

    def getresponse(self) -> t.Any:
        watch = getattr(_CURRENT, "watch", None)
        if watch is not None:
            watch.carry(self.sock)
        return super().getresponse()  # type: ignore[misc]


class _HTTPConnection(_Registering, urllib3.connection.HTTPConnection):
    pass


class _HTTPSConnection(_Registering, urllib3.connection.HTTPSConnection):
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


def bound(pool_manager: urllib3.PoolManager) -> None:
    """Make the pools `pool_manager` creates from now on use the watched connections (a proxy
    manager keeps its own: its requests are then bounded by their socket timeouts alone)."""
    if type(pool_manager) is urllib3.PoolManager:
        pool_manager.clear()
        pool_manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
