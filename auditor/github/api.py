"""Our own small boundary to GitHub: the few calls the workflows need, for one repository.

The logic (issues.py) talks to a `GitHubApi`; rest.py implements it over the REST API, and the
tests with an in-memory fake.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field


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
    """The calls on one repository's issues, comments and pull requests."""

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
