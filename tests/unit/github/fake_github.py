"""A fake GitHub API, for the issue and workflow tests."""

from __future__ import annotations

import typing as t

from click.testing import Result

from auditor.cli.options import Context
from auditor.github.api import Comment, Issue
from tests.conftest import run_line
from tests.estate import ESTATE


class FakeGitHub:
    """An in-memory repository's issues, comments and pull requests; records every write."""

    def __init__(self) -> None:
        self.issues_by_number: dict[int, Issue] = {}
        self.comments_by_issue: dict[int, list[Comment]] = {}
        self.pulls: dict[int, tuple[str, str]] = {}  # number -> (branch, base)
        self.writes: list[str] = []
        self._next = 1

    def _number(self) -> int:
        self._next += 1
        return self._next - 1

    def issues(self, label: str) -> list[Issue]:
        return [i for i in self.issues_by_number.values() if label in i.labels]

    def create_issue(self, title: str, body: str, labels: list[str]) -> Issue:
        issue = Issue(self._number(), title, body, "open", list(labels))
        self.issues_by_number[issue.number] = issue
        self.writes.append(f"create #{issue.number}")
        return issue

    def edit_issue(self, number: int, *, body: str | None = None, state: str | None = None) -> None:
        issue = self.issues_by_number[number]
        issue.body = body if body is not None else issue.body
        issue.state = state or issue.state
        self.writes.append(f"edit #{number}" + (f" {state}" if state else ""))

    def comments(self, number: int) -> list[Comment]:
        return list(self.comments_by_issue.get(number, []))

    def comment(self, number: int, body: str) -> None:
        self.comments_by_issue.setdefault(number, []).append(Comment(self._number(), body))
        self.writes.append(f"comment #{number}")

    def edit_comment(self, comment_id: int, body: str) -> None:
        for comments in self.comments_by_issue.values():
            for c in comments:
                if c.id == comment_id:
                    c.body = body
        self.writes.append(f"edit comment {comment_id}")

    def open_pulls(self, head_branch: str) -> list[int]:
        return [n for n, (branch, _) in self.pulls.items() if branch == head_branch]

    def create_pull(self, title: str, body: str, head_branch: str, base: str) -> int:
        number = self._number()
        self.pulls[number] = (head_branch, base)
        self.writes.append(f"pull #{number}")
        return number


def github(api: FakeGitHub | None, *argv: str, **kw: t.Any) -> Result:
    """`kueue-gitops github ARGV...`, reaching GitHub through `api` (None: the REST API)."""
    obj = Context(github_api=(lambda: api) if api is not None else None)
    # As the workflow runs it, in a checkout of the repository (the frozen estate here).
    return run_line(["kueue-gitops", "--repo", str(ESTATE), "github", *argv], obj=obj, **kw)
