"""Import into a repository whose folders are rendered: shown at their source, never written.

A team may move its folder to kustomize or Helm after the first import. Argo CD renders such a
folder (an Application's path, or one holding a kustomization or Chart.yaml: auditor/repo/
layout.py decides which, as validate does); plain files written into it would be read by
nothing, and would look like the truth. So import writes nothing there: it renders the folder
as Argo CD does (auditor/render/) and shows, object by object, how the cluster differs from
what the folder renders, each object at the file a person edits; when the folder cannot be
rendered here (no renderer, a failed render), it says so, and why.
"""

from __future__ import annotations

import difflib
import posixpath
import typing as t
from dataclasses import dataclass
from pathlib import Path

import yaml

from auditor.k8s.objects import Json
from auditor.onboard.keyorder import ordered
from auditor.render import folder as render_folder
from auditor.render.source import UNRENDERED, Source, marker, tool_of
from auditor.repo.layout import Repository
from auditor.repo.profiles import PROFILE_FILE
from auditor.repo.root import CLUSTERS


@dataclass
class Folder:
    """A rendered folder import would have written into."""

    path: str  # the folder Argo CD renders
    tool: str  # kustomize or helm
    diff: str = ""  # how the cluster differs from what it renders, a unified diff ("": none)
    why_not: str = ""  # why the difference cannot be shown ("": it is shown)


def split(root: Path, cluster: str, files: dict[str, str]) -> tuple[dict[str, str], list[Folder]]:
    """`files` without those a rendered folder of `cluster` holds, and each such folder with
    its difference from the cluster. Before the cluster's first import nothing is rendered."""
    if not (root / CLUSTERS / cluster / PROFILE_FILE).is_file():
        return files, []
    repository = Repository.open(root)
    placed, _ = repository.plan([cluster])
    keep, out = dict(files), []
    for source in (p.source for p in placed if p.source is not None):
        mine = {path: keep.pop(path) for path in list(keep) if inside(path, source.path)}
        if mine:
            out.append(compare(repository.tree, repository.synced(source), mine))
    return keep, out


def inside(path: str, folder: str) -> bool:
    """Whether a file import writes at `path` falls to the rendered `folder`: in it, or in a
    folder above it (an Application's path below the tenant's folder). Profiles never do:
    kueue-gitops reads them, Argo CD never syncs them."""
    if posixpath.basename(path) == PROFILE_FILE:
        return False
    parent = posixpath.dirname(path)
    return parent == folder or parent.startswith(f"{folder}/") or folder.startswith(f"{parent}/")


def compare(tree: t.Any, source: Source, written: dict[str, str]) -> Folder:
    """What `source` renders against what import would have written into it."""
    tool = tool_of(source, marker(tree.files(source.path, ("",)), source.path))
    made = render_folder.build(tree, source)
    stopped = [f for f in made.findings if f.rule.id in UNRENDERED]
    if stopped:
        return Folder(source.path, tool, why_not=stopped[0].message)
    rendered = {_key(r.body): (r.file or source.path, r.body) for r in made.resources}
    live = {_key(d): d for text in written.values() for d in yaml.safe_load_all(text) if d}
    parts = []
    for key in sorted(set(rendered) | set(live)):
        where, body = rendered.get(key, (source.path, None))
        if body != live.get(key):
            name = "/".join(k for k in key if k)
            parts.append(_diff(_text(body), _text(live.get(key)), f"{where} ({name})"))
    return Folder(source.path, tool, diff="".join(parts))


def _key(body: Json) -> tuple[str, str, str]:
    meta = body.get("metadata") or {}
    return str(body.get("kind", "")), str(meta.get("namespace") or ""), str(meta.get("name", ""))


def _text(body: Json | None) -> str:
    if body is None:
        return ""
    return yaml.safe_dump(ordered(body), sort_keys=False, width=100, allow_unicode=True)


def _diff(rendered: str, live: str, label: str) -> str:
    return "".join(
        difflib.unified_diff(
            rendered.splitlines(keepends=True),
            live.splitlines(keepends=True),
            f"{label}: what it renders",
            f"{label}: what the cluster has",
        )
    )
