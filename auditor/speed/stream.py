"""Work fed as it arrives, in a process of its own: a state built once (`prepare`), then each
message taken into it as it is put (`take`), then its result (`finish`).

For a pipeline whose input comes slowly from threads doing I/O (drift's LISTs): what the
messages are compared with is prepared in a forked child while this process starts its reads,
and each message is worked on there as soon as it is put, so this process's interpreter is left
to the readers and the work after the last message is that message's alone.

- `early`: what the prepared state tells the caller before any message (drift's read plan);
- `ahead`: in a child, while no message waits, a step of the work the coming ones will need
  (drift: the repository's objects normalized before their kind's LIST ends);
- the fork goes through the parallel seam's guard (auditor/speed/parallel.py: a second core,
  no other thread); a child drains its pipe in a thread of its own, so a reader never waits on
  the work;
- the fallback: without a child, or when the child fails in any way (an error, a result that
  does not pickle, a crash), all is done again in this process from the messages kept (by
  reference), so an error surfaces exactly as without the fork.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import pickle
import queue
import signal
import struct
import sys
import threading
import typing as t

from auditor.speed import parallel

S = t.TypeVar("S")  # the prepared state
M = t.TypeVar("M")  # a message
E = t.TypeVar("E")  # what the state tells early
R = t.TypeVar("R")  # the result

_HEAD = struct.Struct("!Q")  # each frame's length
PIPE_SIZE = 1 << 20  # Linux's most for anyone: a LIST of 2,000 objects is ~0.9 MiB pickled


class Work(t.Generic[S, M, E, R]):
    """What a stream does: its four steps, each in whichever process does the work."""

    def prepare(self) -> S:
        raise NotImplementedError

    def early(self, state: S) -> E:
        raise NotImplementedError

    def take(self, state: S, message: M) -> None:
        raise NotImplementedError

    def ahead(self, state: S) -> bool:
        """One short step of work the messages still to come will need, done while none
        waits (in a child only); False when there is none left. It must change no result."""
        return False

    def finish(self, state: S) -> R:
        raise NotImplementedError


class Stream(t.Generic[S, M, E, R]):
    """`work` fed message by message; in a forked child when `fork` and the guard allow."""

    def __init__(self, work: Work[S, M, E, R], *, fork: bool) -> None:
        self._work, self._lock = work, threading.Lock()
        self._kept: list[M] = []
        self._state: S | None = None  # this process's, when it does the work
        self._early: tuple[E] | None = None
        self._child: _Child | None = _Child.start(work) if fork and _forkable() else None

    @property
    def forked(self) -> bool:
        return self._child is not None

    def early(self) -> E:
        """What the prepared state tells the caller; the child's, else prepared here."""
        with self._lock:
            if self._early is None:
                got = self._child.early() if self._child else None
                if got is None:
                    self._here()
                    got = (self._work.early(t.cast(S, self._state)),)
                self._early = got
            return self._early[0]

    def put(self, message: M) -> None:
        """Hand one message on (from any thread); worked on as it comes."""
        with self._lock:
            self._kept.append(message)
            if self._state is not None:
                self._work.take(self._state, message)
            elif self._child is not None:
                self._child.send(message)

    def result(self) -> R:
        """The work's result: the child's, else all done here (errors and all)."""
        with self._lock:
            if self._child is not None:
                got = self._child.result()
                self._child = None
                if got is not None:
                    return t.cast(R, got[0])
            if self._state is None:
                self._here()
            return self._work.finish(t.cast(S, self._state))

    def close(self) -> None:
        """End a child not collected (this process failed meanwhile)."""
        if self._child is not None:
            self._child.kill()
            self._child = None

    def _here(self) -> None:
        """Do the work in this process, from the messages kept so far."""
        if self._child is not None:
            self._child.kill()
            self._child = None
        self._state = self._work.prepare()
        for message in self._kept:
            self._work.take(self._state, message)


def _forkable() -> bool:
    return parallel.processes(None, 2) > 1


class _Child:
    """The forked child doing the work, and the two pipes to it."""

    def __init__(self, pid: int, to_child: int, from_child: int) -> None:
        self.pid, self.to_child, self.from_child = pid, to_child, from_child
        self.dead = False
        self._early: tuple[t.Any] | None = None
        self._told = False  # whether its early answer was read
        self._frames: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None

    @classmethod
    def start(cls, work: Work[t.Any, t.Any, t.Any, t.Any]) -> _Child:
        down_read, down_write = os.pipe()
        up_read, up_write = os.pipe()
        sys.stdout.flush()  # what is buffered would be written twice, once by each process
        sys.stderr.flush()
        with contextlib.suppress(AttributeError, OSError):  # Linux: a frame in one write
            fcntl.fcntl(down_write, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        pid = os.fork()
        if pid == 0:
            os.close(down_write)
            os.close(up_read)
            _serve(work, down_read, up_write)  # never returns
        os.close(down_read)
        os.close(up_write)
        return cls(pid, down_write, up_read)

    def early(self) -> tuple[t.Any] | None:
        if not self._told:
            self._early, self._told = self._receive(), True
        return self._early

    def send(self, message: t.Any) -> None:
        """Hand one message to the writer: the caller (a reader) never waits for the child."""
        if self.dead:
            return
        try:
            data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
        except Exception:  # the message does not pickle
            self.dead = True
            return
        if self._writer is None:  # started after the fork: the child has no copy of it
            self._writer = threading.Thread(target=self._write_all, daemon=True)
            self._writer.start()
        self._frames.put(data)

    def _write_all(self) -> None:
        """Each frame to the child in turn, until the end (None) or the child is gone."""
        while (data := self._frames.get()) is not None:
            try:
                _write(self.to_child, data)
            except OSError:
                self.dead = True
                return

    def result(self) -> tuple[t.Any] | None:
        if self._writer is not None:
            self._frames.put(None)
            self._writer.join()  # every frame written (or the child gone)
        with contextlib.suppress(OSError):
            os.close(self.to_child)  # the end of the messages
        self.early()  # sent first, asked for or not
        got = self._receive()
        with contextlib.suppress(OSError):
            os.close(self.from_child)
        _, status = os.waitpid(self.pid, 0)
        return got if status == 0 else None

    def _receive(self) -> tuple[t.Any] | None:
        """The child's next answer, (value,); None when it failed."""
        if self.dead:
            return None
        data = _read(self.from_child)
        try:
            got = pickle.loads(data) if data else None  # our own child's bytes
        except Exception:
            got = None
        if not isinstance(got, tuple) or len(got) != 1:
            self.dead = True
            return None
        return got

    def kill(self) -> None:
        """The child killed, then the writer ended (a write under way fails once the child is
        gone), then the pipes closed: never a descriptor closed under a write."""
        self._frames.put(None)
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(self.pid, 0)
        if self._writer is not None:
            self._writer.join()
        for end in (self.to_child, self.from_child):
            with contextlib.suppress(OSError):
                os.close(end)


def _serve(work: Work[t.Any, t.Any, t.Any, t.Any], down: int, up: int) -> t.NoReturn:
    """The child: prepare, tell the early answer, take each message, send the result, leave
    without running the parent's exit code. Any failure: it says nothing more and exits 1."""
    code = 1
    with contextlib.suppress(BaseException):
        gc.disable()  # short-lived: its garbage goes with it
        frames: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        threading.Thread(target=_drain, args=(down, frames), daemon=True).start()
        state = work.prepare()
        _write(up, pickle.dumps((work.early(state),), pickle.HIGHEST_PROTOCOL))
        while (frame := _next(frames, work, state)) is not None:
            work.take(state, pickle.loads(frame))
        _write(up, pickle.dumps((work.finish(state),), pickle.HIGHEST_PROTOCOL))
        code = 0
    os._exit(code)


def _next(
    frames: queue.SimpleQueue[bytes | None], work: Work[t.Any, t.Any, t.Any, t.Any], state: t.Any
) -> bytes | None:
    """The next frame; while none waits, the work's steps ahead, one at a time (a frame
    arriving waits for one step at most)."""
    while True:
        try:
            return frames.get_nowait()
        except queue.Empty:
            if not work.ahead(state):
                return frames.get()


def _drain(down: int, frames: queue.SimpleQueue[bytes | None]) -> None:
    """In the child: each frame off the pipe as it comes (the writer never waits on the
    work); None at its end."""
    with contextlib.suppress(BaseException):
        while data := _read(down):
            frames.put(data)
    frames.put(None)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(_HEAD.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _read(fd: int) -> bytes:
    """One frame, b"" at the pipe's end (or a frame cut short)."""
    head = _exactly(fd, _HEAD.size)
    return _exactly(fd, _HEAD.unpack(head)[0]) if head else b""


def _exactly(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return b""
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
