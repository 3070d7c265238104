"""What the GitHub workflows do on GitHub: drift-report issues, the plan comment, schema PRs.

One issue per cluster, labelled: created when drift appears, updated while it lasts (a comment
only when the drift itself changes), closed when it is gone, reopened when it returns. An
incomplete run touches nothing and fails. Run by the workflows as `kueue-gitops github ...`
(auditor/cli/github.py); GitHub is reached through `GitHubApi` only.
"""

from __future__ import annotations

import hashlib
import json
import typing as t
from dataclasses import dataclass

from auditor import rules
from auditor.errors import ConfigError
from auditor.github.api import GitHubApi
from auditor.model import ClusterResult, Finding, Report
from auditor.report.markdown import SPLIT, table_row

RULES = rules.of(__name__)
DRIFT_ISSUE_OPEN = RULES["drift-issue-open"]
DRIFT_LABEL = "kueue-drift"
DRIFT_MARKER = "<!-- kueue-gitops-drift"
MAX_BODY = 60_000  # GitHub refuses issue and comment bodies over 65536 characters


def cluster_label(cluster: str) -> str:
    return f"cluster:{cluster}"


@dataclass
class StepOutcome:
    """What a step did on GitHub: the section of its report (its exit status is the report's)."""

    action: str  # created | reopened | updated | closed | none | skipped | exists
    number: int | None = None

    def to_json(self) -> dict[str, t.Any]:
        return {"github": {"action": self.action, "number": self.number}}


# -- drift issues ---------------------------------------------------------------------------


def _fingerprint(findings: list[Finding]) -> str:
    """What the drift is, so an unchanged drift updates the issue without notifying anyone."""
    keys = [[f.rule.id, f.kind, f.namespace, f.name, f.path, f.desired, f.live, f.message]
            for f in findings]  # fmt: skip
    rows = sorted(json.dumps(k, default=str) for k in keys)
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]


def open_findings(report: Report) -> list[Finding]:
    """The drift an issue is about: a suppressed finding is accepted, not open."""
    return [f for f in report.findings if f.suppressed is None]


def issue_body(
    cluster: str, report: Report, run_url: str | None, owners: tuple[str, ...] = ()
) -> str:
    findings = open_findings(report)
    lines = [
        f"{DRIFT_MARKER} cluster={cluster} fingerprint={_fingerprint(findings)} -->",
        f"The live cluster `{cluster}` differs from the repository in {len(findings)} place(s).",
        "Fix the repository or the cluster; this issue closes itself once they agree.",
    ]
    if owners:
        lines.append(f"Cluster owners (its profile's `owners`): {' '.join(owners)}")
    lines += [
        "",
        "| Severity | Category | Object | Field | Repository | Live | Where | Message |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for f in findings:
        ns = f"{f.namespace}/" if f.namespace else ""
        obj = f"{f.kind or ''} {ns}{f.name or ''}".strip()
        where = f"`{f.file}:{f.line}`" if f.file else ""
        path = f"`{f.path}`" if f.path else ""
        row = [f.severity, f.category, obj, path, f.desired, f.live, where, f.message]
        lines.append(table_row(row))
    lines += ["", f"Last checked by {run_url or 'a scheduled run'}."]
    return _fit("\n".join(lines) + "\n")


def _fit(body: str, limit: int = MAX_BODY) -> str:
    if len(body) <= limit:
        return body
    cut = body.rfind("\n", 0, limit - 200)
    return body[:cut] + "\n\n_(truncated: the full report is in the workflow run's artifacts)_\n"


def sync_drift_issue(
    api: GitHubApi,
    cluster: str,
    report: Report,
    run_url: str | None = None,
    owners: tuple[str, ...] = (),
) -> StepOutcome:
    """Bring the cluster's drift issue in line with one drift report; `owners` (the cluster
    profile's teams or people) are mentioned whenever the drift appears or changes."""
    if report.incomplete:
        return StepOutcome("skipped")  # unknown is never clean: leave the issue be
    mine = sorted(
        (i for i in api.issues(DRIFT_LABEL) if cluster_label(cluster) in i.labels),
        key=lambda i: i.number,
    )
    opened = [i for i in mine if i.state == "open"]
    findings = open_findings(report)
    run = f" ([run]({run_url}))" if run_url else ""
    notify = f" {' '.join(owners)}" if owners else ""
    if not findings:
        for issue in opened:
            api.comment(issue.number, f"No drift on `{cluster}` any more{run}; closing.")
            api.edit_issue(issue.number, state="closed")
        return StepOutcome("closed", opened[0].number) if opened else StepOutcome("none")
    body = issue_body(cluster, report, run_url, owners)
    if opened:
        issue = opened[0]
        if f"fingerprint={_fingerprint(findings)}" not in issue.body:
            api.comment(
                issue.number, f"The drift changed: {len(findings)} finding(s) now{run}.{notify}"
            )
        api.edit_issue(issue.number, body=body)
        return StepOutcome("updated", issue.number)
    if mine:
        issue = mine[-1]
        api.edit_issue(issue.number, body=body, state="open")
        api.comment(issue.number, f"Drift is back: {len(findings)} finding(s){run}.{notify}")
        return StepOutcome("reopened", issue.number)
    created = api.create_issue(
        f"Drift on cluster {cluster}", body, [DRIFT_LABEL, cluster_label(cluster)]
    )
    return StepOutcome("created", created.number)


def drift_issue_report(cluster: str, drift: Report, outcome: StepOutcome) -> Report:
    """The step's own report: its cluster incomplete when the drift report was (exit 3: the
    issue was left as it was), a warning naming the issue while drift is open."""
    errors = [e for c in drift.clusters if c.status == "incomplete" for e in c.errors]
    result = ClusterResult(cluster)
    if outcome.action == "skipped":
        result = ClusterResult(cluster, "incomplete", ["the drift report is incomplete", *errors])
    found = []
    if outcome.action in ("created", "updated", "reopened"):
        found.append(
            Finding(
                DRIFT_ISSUE_OPEN,
                f"the drift on {cluster} ({len(open_findings(drift))} finding(s)) is tracked in "
                f"issue #{outcome.number} ({outcome.action})",
                cluster=cluster,
            )
        )
    return Report("github drift-issue", found, [result], section=outcome)


# -- the plan's pull-request comment and the schema-refresh pull request ---------------------


def part_marker(marker: str, part: int) -> str:
    """The hidden first line of a comment's `part` (1: the marker itself, as before a split)."""
    return marker if part == 1 else f"{marker.removesuffix('-->').rstrip()} part={part} -->"


def comment_parts(body: str, limit: int = MAX_BODY) -> list[str]:
    """The body as few comments as hold it, each at most `limit` characters, cut only where the
    body allows (SPLIT lines: before each cluster's section); each part starts with its own
    marker (part_marker), the later ones saying which part they are. A section too long for one
    comment alone is truncated, pointing at the run's artifacts."""
    if len(body) <= limit:
        return [body]
    marker, _, rest = body.partition("\n")
    pieces = rest.split(SPLIT + "\n")
    room = limit - len(part_marker(marker, 99)) - 100  # a later part's marker and its note
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + len(piece) <= room:
            chunks[-1] += piece
        else:
            chunks.append(piece)
    count = len(chunks)
    out = []
    for i, chunk in enumerate(chunks, start=1):
        note = "" if i == 1 else f"_(continued: part {i} of {count})_\n\n"
        out.append(_fit(f"{part_marker(marker, i)}\n{note}{chunk}", limit))
    return out


def upsert_comment(api: GitHubApi, number: int, body: str) -> StepOutcome:
    """One comment per marker (the body's first line), edited in place on every push; a body
    over GitHub's limit goes into as few comments as hold it (comment_parts), each edited in
    place by its own marker, and parts a longer body left behind are emptied."""
    marker = body.split("\n", 1)[0]
    if not marker.startswith("<!--"):
        raise ConfigError("the comment body must start with its hidden marker line (<!-- ... -->)")
    parts = comment_parts(body)
    existing = {c.body.split("\n", 1)[0]: c for c in api.comments(number)}
    first: StepOutcome | None = None
    for part in parts:
        found = existing.get(part.split("\n", 1)[0])
        if found is not None:
            api.edit_comment(found.id, part)
            outcome = StepOutcome("updated", found.id)
        else:
            api.comment(number, part)
            outcome = StepOutcome("created")
        first = first or outcome
    stale = len(parts) + 1
    while (left := existing.get(part_marker(marker, stale))) is not None:
        emptied = (
            f"{part_marker(marker, stale)}\n"
            f"_(Not needed any more: the report fits in {len(parts)} comment(s) above.)_\n"
        )
        if left.body != emptied:
            api.edit_comment(left.id, emptied)
        stale += 1
    assert first is not None  # a body has at least one part
    return first


def ensure_pull(api: GitHubApi, branch: str, base: str, title: str, body: str) -> StepOutcome:
    """Open a pull request from `branch` unless one is open already (its branch was pushed)."""
    existing = api.open_pulls(branch)
    if existing:
        return StepOutcome("exists", existing[0])
    return StepOutcome("created", api.create_pull(title, body, branch, base))
