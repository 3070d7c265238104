"""What the GitHub workflows do on GitHub: drift-report issues, the plan comment, schema PRs.

One issue per cluster, labelled: created when drift appears, updated while it lasts (a comment
only when the drift itself changes), closed when it is gone, reopened when it returns. An
incomplete run touches nothing and fails. The logic talks to GitHub through `GitHubApi`, our own
small boundary; `RestGitHub` implements it over the REST API with urllib.

Run by the workflows as `python -m auditor.github.issues COMMAND ...` (see `--help`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import typing as t
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from auditor.errors import AuditorError, ConfigError
from auditor.repo.layout import Repository

DRIFT_LABEL = "kueue-drift"
DRIFT_MARKER = "<!-- kueue-gitops-drift"
MAX_BODY = 60_000  # GitHub refuses issue and comment bodies over 65536 characters


def cluster_label(cluster: str) -> str:
    return f"cluster:{cluster}"


@dataclass
class Issue:
    number: int
    title: str
    body: str
    state: str  # open | closed
    labels: list[str] = field(default_factory=list)


@dataclass
class Comment:
    id: int
    body: str


class GitHubApi(t.Protocol):
    """The few GitHub calls the workflows need, for one repository."""

    def issues(self, label: str) -> list[Issue]: ...  # open and closed, pull requests left out

    def create_issue(self, title: str, body: str, labels: list[str]) -> Issue: ...

    def edit_issue(
        self, number: int, *, body: str | None = None, state: str | None = None
    ) -> None: ...

    def comments(self, number: int) -> list[Comment]: ...

    def comment(self, number: int, body: str) -> None: ...

    def edit_comment(self, comment_id: int, body: str) -> None: ...

    def open_pulls(self, head_branch: str) -> list[int]: ...

    def create_pull(self, title: str, body: str, head_branch: str, base: str) -> int: ...


class GitHubError(AuditorError):
    """GitHub refused or could not be reached (exit 3: the report was not delivered)."""


# -- drift issues ---------------------------------------------------------------------------


def _fingerprint(findings: list[dict[str, t.Any]]) -> str:
    keys = ("rule", "kind", "namespace", "name", "path", "desired", "live", "message")
    rows = sorted(json.dumps([f.get(k) for k in keys], default=str) for f in findings)
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]


def _cell(value: t.Any) -> str:
    return ("" if value is None else str(value)).replace("|", "\\|").replace("\n", " ")


def issue_body(cluster: str, report: dict[str, t.Any], run_url: str | None) -> str:
    findings = report["findings"]
    lines = [
        f"{DRIFT_MARKER} cluster={cluster} fingerprint={_fingerprint(findings)} -->",
        f"The live cluster `{cluster}` differs from the repository in {len(findings)} place(s).",
        "Fix the repository or the cluster; this issue closes itself once they agree.",
        "",
        "| Severity | Category | Object | Field | Repository | Live | Where | Message |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for f in findings:
        ns = f"{f['namespace']}/" if f.get("namespace") else ""
        obj = f"{f.get('kind') or ''} {ns}{f.get('name') or ''}".strip()
        where = f"`{f['file']}:{f.get('line')}`" if f.get("file") else ""
        path = f"`{f['path']}`" if f.get("path") else ""
        row = [f.get("severity"), f.get("category"), obj, path]
        row += [f.get("desired"), f.get("live"), where, f.get("message")]
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    lines += ["", f"Last checked by {run_url or 'a scheduled run'}."]
    return _fit("\n".join(lines) + "\n")


def _fit(body: str) -> str:
    if len(body) <= MAX_BODY:
        return body
    cut = body.rfind("\n", 0, MAX_BODY - 200)
    return body[:cut] + "\n\n_(truncated: the full report is in the workflow run's artifacts)_\n"


@dataclass
class Outcome:
    action: str  # created | reopened | updated | closed | none | skipped | exists
    number: int | None = None
    exit_code: int = 0


def sync_drift_issue(
    api: GitHubApi, cluster: str, report: dict[str, t.Any], run_url: str | None = None
) -> Outcome:
    """Bring the cluster's drift issue in line with one drift report."""
    if report.get("status") == "incomplete":
        return Outcome("skipped", exit_code=3)  # unknown is never clean: leave the issue be
    mine = sorted(
        (i for i in api.issues(DRIFT_LABEL) if cluster_label(cluster) in i.labels),
        key=lambda i: i.number,
    )
    opened = [i for i in mine if i.state == "open"]
    findings = report["findings"]
    run = f" ([run]({run_url}))" if run_url else ""
    if not findings:
        for issue in opened:
            api.comment(issue.number, f"No drift on `{cluster}` any more{run}; closing.")
            api.edit_issue(issue.number, state="closed")
        return Outcome("closed", opened[0].number) if opened else Outcome("none")
    body = issue_body(cluster, report, run_url)
    if opened:
        issue = opened[0]
        if f"fingerprint={_fingerprint(findings)}" not in issue.body:
            api.comment(issue.number, f"The drift changed: {len(findings)} finding(s) now{run}.")
        api.edit_issue(issue.number, body=body)
        return Outcome("updated", issue.number)
    if mine:
        issue = mine[-1]
        api.edit_issue(issue.number, body=body, state="open")
        api.comment(issue.number, f"Drift is back: {len(findings)} finding(s){run}.")
        return Outcome("reopened", issue.number)
    created = api.create_issue(
        f"Drift on cluster {cluster}", body, [DRIFT_LABEL, cluster_label(cluster)]
    )
    return Outcome("created", created.number)


# -- the plan's pull-request comment and the schema-refresh pull request ---------------------


def upsert_comment(api: GitHubApi, number: int, body: str) -> Outcome:
    """One comment per marker (the body's first line), edited in place on every push."""
    marker = body.split("\n", 1)[0]
    if not marker.startswith("<!--"):
        raise ConfigError("the comment body must start with its hidden marker line (<!-- ... -->)")
    body = _fit(body)
    for existing in api.comments(number):
        if existing.body.split("\n", 1)[0] == marker:
            api.edit_comment(existing.id, body)
            return Outcome("updated", existing.id)
    api.comment(number, body)
    return Outcome("created")


def ensure_pull(api: GitHubApi, branch: str, base: str, title: str, body: str) -> Outcome:
    """Open a pull request from `branch` unless one is open already (its branch was pushed)."""
    existing = api.open_pulls(branch)
    if existing:
        return Outcome("exists", existing[0])
    return Outcome("created", api.create_pull(title, body, branch, base))


# -- GitHub's REST API ----------------------------------------------------------------------


class RestGitHub:
    """GitHubApi over https://api.github.com (or GITHUB_API_URL) with a token."""

    def __init__(self, repository: str, token: str, api_url: str = "https://api.github.com"):
        self.base = f"{api_url.rstrip('/')}/repos/{repository}"
        self.owner = repository.split("/")[0]
        self.token = token

    @classmethod
    def from_env(cls, env: t.Mapping[str, str]) -> RestGitHub:
        missing = [k for k in ("GITHUB_REPOSITORY", "GITHUB_TOKEN") if not env.get(k)]
        if missing:
            raise ConfigError(f"{' and '.join(missing)} must be set (the workflow provides them)")
        return cls(
            env["GITHUB_REPOSITORY"],
            env["GITHUB_TOKEN"],
            env.get("GITHUB_API_URL", "https://api.github.com"),
        )

    def _call(self, method: str, path: str, body: t.Any = None, **query: t.Any) -> t.Any:
        url = self.base + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        request = urllib.request.Request(
            url,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "kueue-gitops",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                data = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode(errors="replace")
            raise GitHubError(f"GitHub {method} {path}: HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise GitHubError(f"GitHub {method} {path}: {exc}") from exc
        return json.loads(data) if data else None

    def _pages(self, path: str, **query: t.Any) -> list[t.Any]:
        items: list[t.Any] = []
        page = 1
        while True:
            batch = self._call("GET", path, per_page=100, page=page, **query)
            items += batch
            if len(batch) < 100:
                return items
            page += 1

    def issues(self, label: str) -> list[Issue]:
        found = self._pages("/issues", labels=label, state="all")
        return [
            Issue(i["number"], i["title"], i.get("body") or "", i["state"], _names(i["labels"]))
            for i in found
            if "pull_request" not in i  # the issues endpoint lists pull requests too
        ]

    def create_issue(self, title: str, body: str, labels: list[str]) -> Issue:
        i = self._call("POST", "/issues", {"title": title, "body": body, "labels": labels})
        return Issue(i["number"], title, body, "open", labels)

    def edit_issue(self, number: int, *, body: str | None = None, state: str | None = None) -> None:
        change = {k: v for k, v in (("body", body), ("state", state)) if v is not None}
        self._call("PATCH", f"/issues/{number}", change)

    def comments(self, number: int) -> list[Comment]:
        return [
            Comment(c["id"], c.get("body") or "") for c in self._pages(f"/issues/{number}/comments")
        ]

    def comment(self, number: int, body: str) -> None:
        self._call("POST", f"/issues/{number}/comments", {"body": body})

    def edit_comment(self, comment_id: int, body: str) -> None:
        self._call("PATCH", f"/issues/comments/{comment_id}", {"body": body})

    def open_pulls(self, head_branch: str) -> list[int]:
        pulls = self._pages("/pulls", head=f"{self.owner}:{head_branch}", state="open")
        return [p["number"] for p in pulls]

    def create_pull(self, title: str, body: str, head_branch: str, base: str) -> int:
        created = self._call(
            "POST", "/pulls", {"title": title, "body": body, "head": head_branch, "base": base}
        )
        return int(created["number"])


def _names(labels: list[dict[str, t.Any]]) -> list[str]:
    return [str(label["name"]) for label in labels]


# -- the script -----------------------------------------------------------------------------


def _read_report(path: Path) -> dict[str, t.Any]:
    """A kueue-gitops JSON report, or a ConfigError: a missing report is never a clean one."""
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a kueue-gitops JSON report ({exc})") from exc
    if not isinstance(report, dict) or report.get("status") not in (
        "clean",
        "findings",
        "incomplete",
    ):
        raise ConfigError(f"{path}: not a kueue-gitops JSON report (no status)")
    return report


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m auditor.github.issues", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    drift = sub.add_parser("drift-issue", help="create, update or close a cluster's drift issue")
    drift.add_argument("--cluster", required=True)
    drift.add_argument("--report", required=True, type=Path, help="`drift -o json` output")
    drift.add_argument("--run-url", help="link to the workflow run")
    comment = sub.add_parser("pr-comment", help="create or update the pull request's comment")
    comment.add_argument("--pr", required=True, type=int)
    comment.add_argument("--body", required=True, type=Path, help="markdown; marker first")
    pull = sub.add_parser("ensure-pr", help="open a pull request from a pushed branch once")
    pull.add_argument("--branch", required=True)
    pull.add_argument("--base", required=True)
    pull.add_argument("--title", required=True)
    pull.add_argument("--body", default="")
    clusters = sub.add_parser("clusters", help="print the repo's clusters as a JSON list")
    clusters.add_argument("--repo", type=Path, default=Path.cwd())
    return parser


def main(
    argv: list[str] | None = None,
    *,
    api: GitHubApi | None = None,
    env: t.Mapping[str, str] = os.environ,
    out: t.TextIO = sys.stdout,
) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "clusters":
            out.write(json.dumps(sorted(Repository.open(args.repo).clusters)) + "\n")
            return 0
        github = api or RestGitHub.from_env(env)
        if args.command == "drift-issue":
            outcome = sync_drift_issue(
                github, args.cluster, _read_report(args.report), args.run_url
            )
            if outcome.exit_code == 3:
                out.write(f"{args.cluster}: the drift report is incomplete; issue left as is\n")
        elif args.command == "pr-comment":
            outcome = upsert_comment(github, args.pr, args.body.read_text())
        else:
            outcome = ensure_pull(github, args.branch, args.base, args.title, args.body)
    except (AuditorError, OSError) as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return exc.exit_code if isinstance(exc, AuditorError) else 2
    number = f" #{outcome.number}" if outcome.number else ""
    out.write(f"{args.command}: {outcome.action}{number}\n")
    return outcome.exit_code


if __name__ == "__main__":
    sys.exit(main())
