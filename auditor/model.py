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
    # A rendered object (kustomize, Helm: auditor/render/) was written in several files: each
    # field's (file, line) where a person edits it (a base, a patch, a values file), and the
    # folder it was rendered from, named where no field's source could be traced.
    sources: dict[tuple[str | int, ...], tuple[str, int]] = field(default_factory=dict)
    rendered_from: str | None = None

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

    def where(self, path: t.Sequence[str | int]) -> tuple[str, int, bool]:
        """The file and line of `path` (its deepest part that exists), and whether that is
        where it was written (False: only the rendered object's own place is known)."""
        for end in range(len(path), 0, -1):
            found = self.sources.get(tuple(path[:end]))
            if found is not None:
                return found[0], found[1], True
        if self.rendered_from is None:
            return self.file, self.line_of(path) if path else self.line, True
        return self.file, self.line, not path

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
    """A finding accepted on purpose: why, until when, and where that was written.

    Two things accept a finding, and reporters mark both the same way (shown, never counted):
    a suppression (an annotation or a profile entry, auditor/repo/suppressions.py), which
    expires, and an entry of the baseline given to the run (auditor/repo/baseline.py), which
    holds while the entry is in the file: its `expires` is None."""

    reason: str
    expires: datetime.date | None  # the last day it holds; None: a baseline entry
    source: str  # file:line of the annotation, profile entry or baseline entry

    @property
    def baselined(self) -> bool:
        return self.expires is None

    @property
    def label(self) -> str:
        """One word for what accepted it, as reporters put it before a severity."""
        return "baselined" if self.baselined else "suppressed"

    def describe(self) -> str:
        """How every reporter says it, e.g. `suppressed until 2027-03-31: the cohort grows`
        (a baseline entry's reason is always the same: `baselined` says it)."""
        if self.expires is None:
            return "baselined"
        return f"suppressed until {self.expires}: {self.reason}"

    def to_json(self) -> dict[str, str | None]:
        expires = None if self.expires is None else self.expires.isoformat()
        return {"reason": self.reason, "expires": expires, "source": self.source}


MEASURED = "measured"  # the extra key of Finding.measured


class Fingerprint(t.NamedTuple):
    """A finding's identity across runs (Finding.fingerprint); None where a part does not
    apply. `file` only for a finding about a file rather than an object (a YAML error)."""

    rule: str
    cluster: str | None
    group: str | None
    kind: str | None
    namespace: str | None
    name: str | None
    path: str | None
    file: str | None


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
        """A finding located at `resource` (and at `path` inside it, for the line); for a
        rendered object, at the file that wrote the field, else saying what it was rendered
        from."""
        file, line, traced = resource.where(path)
        if not traced:
            message = f"{message} (rendered from {resource.rendered_from})"
        return cls(
            rule,
            message,
            api_version=resource.api_version or None,
            kind=resource.kind or None,
            namespace=resource.namespace,
            name=resource.name or None,
            file=file,
            line=line,
            path=format_path(path) if path else None,
            **kw,
        )

    @property
    def measured(self) -> float | None:
        """How far past its limit the finding is (its `measured` extra key, in the unit of the
        value it judges), where the check measures one: a baseline records it and the fingerprint
        leaves it out, so the same finding grown worse is known and reported as new."""
        value = self.extra.get(MEASURED)
        return float(value) if isinstance(value, int | float) else None

    @property
    def fingerprint(self) -> Fingerprint:
        """What the finding is about, as a baseline records it: never its line or message (a
        reformatted file or a changed value keeps it), nor its file when it is about an object
        (an object moved to another file keeps it), nor the object's API version (a migrated
        object keeps it)."""
        about_object = self.kind is not None or self.name is not None
        return Fingerprint(
            self.rule.id,
            self.cluster,
            group_of(self.api_version) if self.api_version else None,
            self.kind,
            self.namespace,
            self.name,
            self.path,
            None if about_object else self.file,
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
    # Where the schemas that judged it came from (validate): catalog.Source.to_json().
    schemas: dict[str, str] | None = None
    throttled: float = 0.0  # seconds its API server made us wait (429, Retry-After)
    notes: list[str] = field(default_factory=list)  # what was not checked, said on stderr

    def to_json(self) -> dict[str, t.Any]:
        out: dict[str, t.Any] = {"name": self.name, "status": self.status, "errors": self.errors}
        if self.schemas is not None:
            out["schemas"] = self.schemas
        if self.throttled:
            out["throttledSeconds"] = self.throttled
        return out


class Section(t.Protocol):
    """What a command reports beside its findings: a plan's changes, verify's checks, a
    cluster's snapshot. Its keys join the JSON report's (report.schema.json names them); the
    text and markdown reporters show it through the command's view (auditor/report/views.py)."""

    def to_json(self) -> dict[str, t.Any]: ...


@dataclass(frozen=True)
class BaselineSummary:
    """What the run's baseline did (auditor/repo/baseline.py): how many findings it accepted
    (each marked on its finding), and how many of its entries matched nothing now (fixed, or
    changed past recognition): left in the file until it is written again, or, when this run
    wrote it, dropped."""

    file: str
    baselined: int
    absent: int
    written: bool = False
    # Text shows each baselined finding in full (-v), not one line of counts by rule; how the
    # run was asked to show it, so not in the JSON.
    listed: bool = False

    def to_json(self) -> dict[str, t.Any]:
        return {
            "file": self.file,
            "baselined": self.baselined,
            "absent": self.absent,
            "written": self.written,
        }

    def describe(self) -> str:
        """One line for the text and markdown reports."""
        one = self.absent == 1
        entries = f"{self.absent} entr{'y' if one else 'ies'}"
        if self.written:
            return f"baseline {self.file} written: {self.baselined} finding(s) recorded" + (
                f"; {entries} that matched nothing dropped" if self.absent else ""
            )
        return f"baseline {self.file}: {self.baselined} finding(s) baselined" + (
            f"; {entries} match{'es' if one else ''} nothing now (fixed? --write-baseline "
            f"drops {'it' if one else 'them'})"
            if self.absent
            else ""
        )


@dataclass
class Report:
    """Everything one command found; the single place that decides the exit code."""

    command: str
    findings: list[Finding] = field(default_factory=list)
    clusters: list[ClusterResult] = field(default_factory=list)
    strict: bool = False
    section: Section | None = None
    baseline: BaselineSummary | None = None  # when the run was given one (--baseline)

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
        is suppressed (until its suppression expires) or baselined."""
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
            "clusters": [c.to_json() for c in self.clusters],
            "findings": [f.to_json() for f in self.findings],
        }
        if self.baseline is not None:  # each finding says whether the baseline holds it
            for finding, doc in zip(self.findings, out["findings"], strict=True):
                known = finding.suppressed is not None and finding.suppressed.baselined
                doc["baselineState"] = "unchanged" if known else "new"
            out["baseline"] = self.baseline.to_json()
        if self.section is not None:
            extra = self.section.to_json()
            if set(extra) & set(out):
                raise ValueError(f"a section may not replace {sorted(set(extra) & set(out))}")
            out.update(extra)
        return out
