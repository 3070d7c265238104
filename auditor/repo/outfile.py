"""Output files written whole: aside in the destination's folder, then moved into place.

Every file a command writes for the user (a trace, a timeline, a baseline, metrics, CODEOWNERS,
generated policies, a Workload snapshot, schemas) is written here, so a full disk, a quota or a
size limit never leaves a truncated file that looks complete: the previous file stays as it
was, nothing is left aside, and the failure is one OutputError (exit 3, "could not complete"),
never a traceback. A path that cannot be written at all (a file where its folder goes, no
permission) is the user's to fix: a ConfigError (exit 2). The new file keeps the old one's
permissions (a textfile collector running as another user still reads it), else the umask's.
A destination that is not a regular file (a pipe, a terminal, /dev/stdout) is written in place:
there is nothing to move over it, and a device is never replaced by a file. A report on stdout
(`to_stdout`) fails the same way.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
import typing as t
from pathlib import Path

from auditor.errors import AuditorError, ConfigError

# A destination the user named wrongly (exit 2, theirs to fix), not one that failed meanwhile.
_NAMED_WRONG = (
    errno.ENOTDIR,
    errno.EISDIR,
    errno.ENOENT,
    errno.EACCES,
    errno.EROFS,
    errno.ENAMETOOLONG,
)


class OutputError(AuditorError):
    """An output could not be written whole: a full or closed destination."""

    exit_code = 3


def write_whole(path: Path, data: str | bytes, *, what: str, exclusive: bool = False) -> None:
    """Write `data` (text as UTF-8) to `path` whole or not at all; `what` names it in the
    error ("the timeline"). `exclusive`: never replace a file; FileExistsError if one is there
    (the caller says why that matters)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if _special(path):
            _in_place(path, raw)
        else:
            target = Path(os.path.realpath(path))  # through a symlink, as a write would go
            target.parent.mkdir(parents=True, exist_ok=True)
            _aside_then_moved(target, raw, exclusive)
    except OSError as exc:
        if exclusive and isinstance(exc, FileExistsError):
            raise
        failed = ConfigError if exc.errno in _NAMED_WRONG else OutputError
        raise failed(f"{path}: cannot write {what}: {exc.strerror or exc}") from exc


def _special(path: Path) -> bool:
    """Not a regular file, or a name for one of the process's descriptors (`/dev/stdout` on a
    file the shell opened: replacing that file would leave the shell's descriptor on the old
    one, and the report written there lost)."""
    if str(path).startswith(("/dev/", "/proc/")):
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return False


def _in_place(path: Path, raw: bytes) -> None:
    # appended: `/dev/stdout` on a file is a new open of it, whose offset would be 0
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
    try:
        _write_all(fd, raw)
    finally:
        os.close(fd)


def _aside_then_moved(target: Path, raw: bytes, exclusive: bool) -> None:
    aside = target.with_name(f".{target.name}.{os.urandom(4).hex()}.partial")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        try:
            _write_all(fd, raw)
            os.fsync(fd)  # a full disk may answer only now (delayed allocation)
            with contextlib.suppress(FileNotFoundError):
                os.fchmod(fd, stat.S_IMODE(target.stat().st_mode))
        finally:
            os.close(fd)
        if exclusive:
            os.link(aside, target)  # FileExistsError when one is there: never replaced
        else:
            os.replace(aside, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(aside)


def _write_all(fd: int, raw: bytes) -> None:
    view = memoryview(raw)
    while view:
        view = view[os.write(fd, view) :]


def to_stdout(text: str, *, what: str) -> None:
    """Write `text` to stdout now (flushed); a full or closed stdout is OutputError."""
    stream = sys.stdout
    try:
        if stream is None:  # started with stdout closed (`>&-`), not through main
            raise OSError(errno.EBADF, "stdout is closed")
        stream.write(text)
        stream.flush()
    except OSError as exc:
        _drop(stream)
        raise OutputError(f"cannot write {what} to stdout: {exc.strerror or exc}") from exc


def flush_stdout() -> None:
    """What stdout still holds, written before the process ends (the interpreter's own last
    flush would fail with a traceback-like message and exit 120)."""
    to_stdout("", what="the output")


def _drop(stream: t.TextIO | None) -> None:
    """Point a failed stdout at /dev/null: what it still buffers cannot be written, and
    would fail again when the interpreter flushes it at exit."""
    with contextlib.suppress(Exception):
        fd = t.cast(t.TextIO, stream).fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)


class _Closed(io.TextIOBase):
    """stdout when the process started without one: writing to it fails as writing does."""

    def write(self, _text: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed")


def hold_closed_stdout() -> None:
    """Started with stdout closed (`>&-`): a report written is an error, and descriptor 1
    is taken by /dev/null, so no file opened later (nor a renderer's output) lands on it."""
    if sys.stdout is not None:
        return
    with contextlib.suppress(OSError):
        os.fstat(1)
        return
    null = os.open(os.devnull, os.O_WRONLY)
    if null != 1:
        os.dup2(null, 1)
        os.close(null)
    sys.stdout = _Closed()
