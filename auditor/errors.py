"""Our own error hierarchy, so the CLI maps failures to exit codes without knowing their source.

ConfigError is the user's to fix (exit 2); ClusterAccessError means a cluster could not be read
or written (exit 3), and its subclasses (auditor/live/apierrors.py) say what happened: callers
catch those, never a status code or a message. Low-level exceptions are chained as the cause.
"""

from __future__ import annotations

import contextlib
import typing as t

# An unexpected exception carries, as a note, what was being processed when it passed.
WHILE = "while "


class AuditorError(Exception):
    """Base class of every error kueue-gitops raises on purpose."""

    exit_code = 3


class ConfigError(AuditorError):
    """A profile, flag or repository layout is wrong; the user must fix it."""

    exit_code = 2


class ManifestError(AuditorError):
    """A manifest file cannot be turned into objects (reported as a finding where possible).

    Raised, it is the user's to fix (exit 2): exit 1 is only ever a report with findings.
    """

    exit_code = 2

    def __init__(self, message: str, *, file: str, line: int | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.line = line


class ClusterAccessError(AuditorError):
    """A cluster could not be reached, or refused a request; what happened is its class
    (auditor/live/apierrors.py: not found, forbidden, throttled, unreachable, ...)."""

    exit_code = 3

    def __init__(
        self, message: str, *, cluster: str | None = None, action: str | None = None
    ) -> None:
        super().__init__(message)
        self.cluster = cluster
        self.action = action  # what was being done ("LIST ClusterQueue"), when known


class SandboxError(AuditorError):
    """The local control plane could not be built, started or stopped."""

    exit_code = 3


class GitHubError(AuditorError):
    """GitHub refused or could not be reached: the report was not delivered."""

    exit_code = 3


@contextlib.contextmanager
def processing(what: str) -> t.Iterator[None]:
    """Name what the code inside was doing (`reading F`, `comparing cluster C`) on any
    unexpected exception that passes, so the one-line message of a crash can say where.

    The innermost name is the one kept; our own errors say where themselves.
    """
    try:
        yield
    except AuditorError:
        raise
    except Exception as exc:
        if where(exc) is None:
            exc.add_note(WHILE + what)
        raise


def where(exc: BaseException) -> str | None:
    """What `processing` recorded for `exc` ("reading F"), if anything."""
    for note in getattr(exc, "__notes__", ()):
        if isinstance(note, str) and note.startswith(WHILE):
            return note[len(WHILE) :]
    return None


def internal_error(exc: BaseException) -> str:
    """One line for a bug: what failed, where, and how to get the traceback."""
    place = where(exc)
    text = str(exc).splitlines()[0] if str(exc) else ""
    return (
        f"internal error{f' while {place}' if place else ''}: {type(exc).__name__}"
        f"{f': {text[:200]}' if text else ''} (a bug in kueue-gitops; -v shows the traceback)"
    )
