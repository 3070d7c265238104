"""Our own error hierarchy, so the CLI maps failures to exit codes without knowing their source.

ConfigError is the user's to fix (exit 2); ClusterAccessError means a cluster could not be read
or written (exit 3). Low-level exceptions are chained as the cause.
"""

from __future__ import annotations


class AuditorError(Exception):
    """Base class of every error kueue-gitops raises on purpose."""

    exit_code = 3


class ConfigError(AuditorError):
    """A profile, flag or repository layout is wrong; the user must fix it."""

    exit_code = 2


class ManifestError(AuditorError):
    """A manifest file cannot be turned into objects (reported as a finding where possible)."""

    exit_code = 1

    def __init__(self, message: str, *, file: str, line: int | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.line = line


class ClusterAccessError(AuditorError):
    """A cluster could not be reached, or refused a request."""

    exit_code = 3

    def __init__(
        self, message: str, *, cluster: str | None = None, kind: str | None = None
    ) -> None:
        super().__init__(message)
        self.cluster = cluster
        self.kind = kind


class SandboxError(AuditorError):
    """The local control plane could not be built, started or stopped."""

    exit_code = 3


class GitHubError(AuditorError):
    """GitHub refused or could not be reached: the report was not delivered."""

    exit_code = 3
