"""The data every stage shares: repo objects, findings, and the report with its exit code."""

from __future__ import annotations

import datetime
import functools
import typing as t
from dataclasses import KW_ONLY, dataclass, field

from auditor.k8s.objects import ResourceKey, group_of
from auditor.rules import Rule
from auditor.rules import Severity as Severity  # re-exported: reporters and tests use it here


@dataclass
class Resource:
    """One object from a manifest file, remembering where it was written."""

    body: dict[str, t.Any]
    file: str
    line: int
    lines: dict[tuple[str | int, ...], int] = field(default_factory=dict)
    cluster: str | None = None  # the cluster folder it is synced to
    tenant: str | None = None  # the tenant folder it lives in, if any
    # Computes `lines` when first needed (the loader defers them: most objects never need one).
    line_source: t.Callable[[], dict[tuple[str | int, ...], int]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def api_version(self) -> str:
        return str(self.body.get("apiVersion", ""))

    @property
    def kind(self) -> str:
        return str(self.body.get("kind", ""))

    @property
    def name(self) -> str:
        return str(self._metadata.get("name", ""))

    @property
    def namespace(self) -> str | None:
        ns = self._metadata.get("namespace")
        return str(ns) if ns else None

    @property
    def _metadata(self) -> dict[str, t.Any]:
        meta = self.body.get("metadata")
        return meta if isinstance(meta, dict) else {}  # the loader reports any other shape

    @functools.cached_property
    def key(self) -> ResourceKey:
        """Its identity; computed once (checks ask for it thousands of times per run), since
        nothing changes an object's apiVersion, kind, namespace or name once it is loaded."""
        return ResourceKey(group_of(self.api_version), self.kind, self.namespace, self.name)

    def line_of(self, path: t.Sequence[str | int]) -> int:
        """The line of the deepest part of `path` that exists in the file."""
        if self.line_source is not None:
            self.lines, self.line_source = self.line_source(), None
        for end in range(len(path), 0, -1):
            found = self.lines.get(tuple(path[:end]))
            if found is not None:
                return found
        return self.line


@dataclass(frozen=True)
class Suppression:
    """A finding accepted on purpose: why, until when, and where that was written."""

    reason: str
    expires: datetime.date  # the last day it holds
    source: str  # file:line of the annotation or profile entry

    def to_json(self) -> dict[str, str]:
        return {"reason": self.reason, "expires": self.expires.isoformat(), "source": self.source}


@dataclass
class Finding:
    """One thing a person should look at.

    Code raises a Rule (declared beside it, auditor.rules), never a rule ID: the finding's
    severity and category are the rule's, so they cannot disagree with its documentation.
    """

    rule: Rule
    message: str
    _: KW_ONLY
    cluster: str | None = None
    api_version: str | None = None
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    file: str | None = None
    line: int | None = None
    path: str | None = None
    change: str | None = None
    desired: t.Any = None
    live: t.Any = None
    extra: dict[str, t.Any] = field(default_factory=dict)
    suppressed: Suppression | None = None  # accepted on purpose: shown, never counted

    @property
    def severity(self) -> Severity:
        return self.rule.severity

    @property
    def category(self) -> str:
        return self.rule.category

    @classmethod
    def about(
        cls,
        resource: Resource,
        rule: Rule,
        message: str,
        *,
        path: t.Sequence[str | int] = (),
        **kw: t.Any,
    ) -> Finding:
        """A finding located at `resource` (and at `path` inside it, for the line)."""
        return cls(
            rule,
            message,
            api_version=resource.api_version or None,
            kind=resource.kind or None,
            namespace=resource.namespace,
            name=resource.name or None,
            file=resource.file,
            line=resource.line_of(path) if path else resource.line,
            path=format_path(path) if path else None,
            **kw,
        )

    def to_json(self) -> dict[str, t.Any]:
        out: dict[str, t.Any] = {
            "rule": self.rule.id,
            "severity": str(self.severity),
            "category": self.category,
            "cluster": self.cluster,
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "file": self.file,
            "line": self.line,
            "path": self.path,
            "message": self.message,
        }
        if self.change is not None:
            out.update(change=self.change, desired=self.desired, live=self.live)
        out.update(self.extra)
        if self.suppressed is not None:
            out["suppressed"] = self.suppressed.to_json()
        return out


def format_path(path: t.Sequence[str | int]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out and part.startswith("["):
            out += part
        else:
            out += f".{part}" if out else part
    return out


ClusterStatus = t.Literal["ok", "incomplete"]


@dataclass
class ClusterResult:
    name: str
    status: ClusterStatus = "ok"
    errors: list[str] = field(default_factory=list)
    throttled: float = 0.0  # seconds its API server made us wait (429, Retry-After)


class Section(t.Protocol):
    """What a command reports beside its findings: a plan's changes, verify's checks, a
    cluster's snapshot. Its keys join the JSON report's (report.schema.json names them); the
    text and markdown reporters show it through the command's view (auditor/report/views.py)."""

    def to_json(self) -> dict[str, t.Any]: ...


@dataclass
class Report:
    """Everything one command found; the single place that decides the exit code."""

    command: str
    findings: list[Finding] = field(default_factory=list)
    clusters: list[ClusterResult] = field(default_factory=list)
    strict: bool = False
    section: Section | None = None

    @property
    def incomplete(self) -> bool:
        return any(c.status == "incomplete" for c in self.clusters)

    @property
    def status(self) -> str:
        if self.incomplete:
            return "incomplete"
        return "findings" if self.counted() else "clean"

    def counted(self) -> list[Finding]:
        """Findings that fail the run: errors, and warnings too under --strict; never one that
        is suppressed (until its suppression expires)."""
        return [
            f
            for f in self.findings
            if (f.severity is Severity.ERROR or self.strict) and f.suppressed is None
        ]

    @property
    def exit_code(self) -> int:
        """0 clean; 1 findings; 3 could not complete (never reported as clean). 2 is the CLI's."""
        if self.incomplete:
            return 3
        return 1 if self.counted() else 0

    def to_json(self) -> dict[str, t.Any]:
        out: dict[str, t.Any] = {
            "schemaVersion": 1,
            "command": self.command,
            "status": self.status,
            "clusters": [
                {
                    "name": c.name,
                    "status": c.status,
                    "errors": c.errors,
                    **({"throttledSeconds": c.throttled} if c.throttled else {}),
                }
                for c in self.clusters
            ],
            "findings": [f.to_json() for f in self.findings],
        }
        if self.section is not None:
            extra = self.section.to_json()
            if set(extra) & set(out):
                raise ValueError(f"a section may not replace {sorted(set(extra) & set(out))}")
            out.update(extra)
        return out
