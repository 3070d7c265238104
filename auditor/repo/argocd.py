"""What the repository's Argo CD ApplicationSets (argocd/) do to the folders they sync.

Only what the policy checks ask: which ApplicationSet's git directory generator makes the
Application of a folder (`path` globs as Go's path.Match reads them: `*` stops at `/`; an
`exclude: true` entry removes matches), and whether that Application prunes (its template's
`syncPolicy.automated.prune`). Sync options written on an object (`argocd.argoproj.io/
sync-options`) are read here too.
"""

from __future__ import annotations

import posixpath
import re
import typing as t
from dataclasses import dataclass

from auditor.model import Resource
from auditor.repo import manifests

if t.TYPE_CHECKING:
    from auditor.repo.layout import Repository

FOLDER = "argocd"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"


@dataclass(frozen=True)
class AppSet:
    name: str
    file: str
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    prunes: bool

    def makes(self, folder: str) -> bool:
        """Whether this ApplicationSet makes an Application that syncs `folder`."""
        return any(_match(folder, p) for p in self.include) and not any(
            _match(folder, p) for p in self.exclude
        )


def _match(path: str, pattern: str) -> bool:
    """Go's path.Match for the patterns generators use: `*` and `?` never cross `/`."""
    regex = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, path) is not None


def _dict(value: t.Any) -> dict[str, t.Any]:
    return value if isinstance(value, dict) else {}


def app_sets(repo: Repository) -> list[AppSet]:
    """The ApplicationSets of argocd/ with a git directory generator (none when no argocd/)."""
    out: list[AppSet] = []
    try:
        files = [f for f in repo.tree.files(FOLDER) if f.endswith((".yaml", ".yml"))]
    except OSError:
        return out
    for path in files:
        try:
            found, _ = manifests.load_bytes(repo.tree.read(path), path)
        except OSError:
            continue  # an unreadable file syncs nothing we could judge
        for doc in (r for r in found if r.kind == "ApplicationSet"):
            include, exclude = _directories(doc)
            sync = _dict(_dict(_dict(doc.body.get("spec")).get("template")).get("spec"))
            automated = _dict(_dict(sync.get("syncPolicy")).get("automated"))
            out.append(AppSet(doc.name, path, include, exclude, automated.get("prune") is True))
    return out


def _directories(doc: Resource) -> tuple[tuple[str, ...], tuple[str, ...]]:
    include: list[str] = []
    exclude: list[str] = []
    generators = _dict(doc.body.get("spec")).get("generators")
    for generator in generators if isinstance(generators, list) else []:
        directories = _dict(_dict(generator).get("git")).get("directories")
        for entry in directories if isinstance(directories, list) else []:
            path = _dict(entry).get("path")
            if isinstance(path, str):
                (exclude if _dict(entry).get("exclude") is True else include).append(path)
    return tuple(include), tuple(exclude)


def syncing(app_sets: list[AppSet], file: str) -> list[AppSet]:
    """The ApplicationSets whose Applications sync the folder a file is in."""
    folder = posixpath.dirname(file)
    return [a for a in app_sets if a.makes(folder)]


def sync_options(resource: Resource) -> dict[str, str]:
    """The object's own sync options, `Prune=false,Delete=false` as {Prune: false, ...}."""
    annotations = _dict(_dict(resource.body.get("metadata")).get("annotations"))
    raw = annotations.get(SYNC_OPTIONS)
    pairs = (p.partition("=") for p in str(raw or "").split(","))
    return {k.strip(): v.strip() for k, _, v in pairs if k.strip()}


def documents(repo: Repository) -> list[Resource]:
    """Every object of argocd/ (ApplicationSets and AppProjects), in file order."""
    found: list[Resource] = []
    for path in sorted(f for f in repo.tree.files(FOLDER) if f.endswith((".yaml", ".yml"))):
        loaded, _ = manifests.load_bytes(repo.tree.read(path), path)
        found.extend(loaded)
    return found


def repo_urls(objects: t.Iterable[Resource]) -> set[str]:
    """The repository URLs the ApplicationSets' git generators read (the committed one)."""
    urls: set[str] = set()
    for doc in (o for o in objects if o.kind == "ApplicationSet"):
        generators = _dict(doc.body.get("spec")).get("generators")
        for generator in generators if isinstance(generators, list) else []:
            url = _dict(_dict(generator).get("git")).get("repoURL")
            if isinstance(url, str):
                urls.add(url)
    return urls


def retarget(objects: t.Iterable[Resource], url: str) -> list[dict[str, t.Any]]:
    """The argocd/ objects pointed at the repository at `url` (a fork, a mirror, a local
    clone): each field naming the committed URL names `url` instead (the generators'
    repoURL, the templates' sources, the projects' sourceRepos); nothing else changes."""
    objects = list(objects)
    committed = repo_urls(objects)

    def swap(node: t.Any, key: str | None = None) -> t.Any:
        if isinstance(node, dict):
            return {k: swap(v, k) for k, v in node.items()}
        if isinstance(node, list):
            return [swap(v, key) for v in node]
        if key in ("repoURL", "sourceRepos") and node in committed:
            return url
        return node

    return [swap(o.body) for o in objects]
