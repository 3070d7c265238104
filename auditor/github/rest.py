"""GitHubApi over GitHub's REST API (https://api.github.com, or GITHUB_API_URL) with urllib."""

from __future__ import annotations

import json
import typing as t
import urllib.error
import urllib.parse
import urllib.request

from auditor.errors import ConfigError, GitHubError
from auditor.github.api import Comment, Issue

DEFAULT_API_URL = "https://api.github.com"


class RestGitHub:
    """One repository's issues, comments and pull requests, with a token."""

    def __init__(self, repository: str, token: str, api_url: str = DEFAULT_API_URL) -> None:
        self.base = f"{api_url.rstrip('/')}/repos/{repository}"
        self.owner = repository.split("/")[0]
        self.token = token

    @classmethod
    def from_env(cls, env: t.Mapping[str, str | None]) -> RestGitHub:
        """From the variables a workflow step has (GITHUB_TOKEN passed in by the step)."""
        missing = [k for k in ("GITHUB_REPOSITORY", "GITHUB_TOKEN") if not env.get(k)]
        if missing:
            raise ConfigError(f"{' and '.join(missing)} must be set (the workflow provides them)")
        return cls(
            str(env["GITHUB_REPOSITORY"]),
            str(env["GITHUB_TOKEN"]),
            env.get("GITHUB_API_URL") or DEFAULT_API_URL,
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
            return json.loads(data) if data else None
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:300].decode(errors="replace")
            raise GitHubError(f"GitHub {method} {path}: HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise GitHubError(f"GitHub {method} {path}: {exc}") from exc
        except ValueError as exc:  # a proxy's HTML page instead of JSON
            raise GitHubError(f"GitHub {method} {path}: not a JSON answer ({exc})") from exc

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
