"""Which folders sync where, when the repository is not laid out as clusters/ and tenants/.

A small file at the root, `kueue-gitops.yaml`, says where the cluster and tenant profiles are
kept and may map folders to clusters itself (`sources:`); otherwise the mapping is taken from
the repository's Argo CD Applications and ApplicationSets (auditor/render/apps.py). A
repository with a clusters/ folder and no root file keeps today's convention (layout.py).

    apiVersion: kueue-gitops.io/v1alpha1
    kind: Layout
    clusters: {east: fleet/east.profile.yaml}        # cluster -> its profile
    tenants: {vision: teams/vision/profile.yaml}     # tenant -> its profile
    sources:                                         # optional: overrides Argo CD's mapping
      - {path: deploy/overlays/east, cluster: east, namespace: ""}
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import typing as t
from dataclasses import dataclass, field

import yaml

from auditor.errors import ConfigError
from auditor.model import Finding
from auditor.render import apps, locate
from auditor.render.source import Source, marker, tool_of
from auditor.repo import pyyaml_reader
from auditor.repo.root import ROOT_FILE
from auditor.repo.tree import Tree


@dataclass
class RootFile:
    clusters: dict[str, str] = field(default_factory=dict)  # name -> profile file
    tenants: dict[str, str] = field(default_factory=dict)
    sources: list[Source] | None = None


def root_file(tree: Tree) -> RootFile | None:
    """The root file, read; None when there is none. A malformed one is a usage error (2)."""
    try:
        data = tree.read(ROOT_FILE)
    except (OSError, KeyError):
        return None
    try:
        body = pyyaml_reader.load_one(data.decode("utf-8", "replace")) or {}  # within budget
    except yaml.YAMLError as exc:
        raise ConfigError(f"{ROOT_FILE}: not valid YAML ({exc})") from None
    if not isinstance(body, dict) or body.get("kind") != "Layout":
        raise ConfigError(f"{ROOT_FILE}: expected a mapping of kind Layout")
    out = RootFile(_names(body, "clusters"), _names(body, "tenants"))
    docs = locate.documents(data.decode("utf-8", "replace"), ROOT_FILE)
    lines = {p: n for p, n in (docs[0].lines if docs else {}).items() if len(p) > 2}
    if "sources" in body:
        out.sources = []
        for i, entry in enumerate(body.get("sources") or []):
            if not isinstance(entry, dict) or not entry.get("path") or not entry.get("cluster"):
                raise ConfigError(f"{ROOT_FILE}: sources[{i}] needs a path and a cluster")
            options = {k: v for k, v in entry.items() if k in ("kustomize", "helm", "directory")}
            out.sources.append(
                Source(
                    str(entry["path"]).strip("/"),
                    str(entry["cluster"]),
                    entry.get("namespace") or None,
                    json.dumps(options),
                    ROOT_FILE,
                    entry.get("tenant"),
                    lines=tuple((p[2:], n) for p, n in lines.items() if p[:2] == ("sources", i)),
                )
            )
    return out


def _names(body: dict[str, t.Any], key: str) -> dict[str, str]:
    value = body.get(key) or {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{ROOT_FILE}: {key} maps each name to its profile file")
    return {str(k): str(v) for k, v in value.items()}


def mapped(
    tree: Tree, root: RootFile | None, clusters: t.Collection[str]
) -> tuple[list[Source], list[Finding]] | None:
    """The root file's sources, else the Argo CD Applications' (when the root file exists or
    the repository has no clusters/ folder); None: the clusters/ and tenants/ convention."""
    if root is not None and root.sources is not None:
        return root.sources, []
    if root is None and tree.is_dir("clusters"):
        return None
    found = apps.sources(tree, clusters)
    if found is None:  # nothing would be checked: never a clean report for that
        raise ConfigError(
            f"{ROOT_FILE} lists no sources and the repository holds no Argo CD Application or "
            "ApplicationSet, so nothing says which folder syncs to which cluster: add "
            f"`sources:` to {ROOT_FILE}"
        )
    return found


def files_of(tree: Tree, source: Source) -> tuple[str | None, list[str]]:
    """A source's marker (None: a plain directory) and, for a directory, the manifests Argo CD
    syncs of it (`recurse`, `include`, `exclude` as its directory source reads them)."""
    every = tree.files(source.path, ("",))
    found = marker(every, source.path)
    if tool_of(source, found) != "directory":
        return found or f"{source.path}/", []
    options = source.options.get("directory") or {}
    recurse = bool(options.get("recurse"))
    include, exclude = str(options.get("include") or ""), str(options.get("exclude") or "")
    out = []
    for path in tree.files(source.path):
        rel = posixpath.relpath(path, source.path)
        if not recurse and "/" in rel:
            continue
        if (include and not _glob(rel, include)) or (exclude and _glob(rel, exclude)):
            continue
        out.append(path)
    return None, out


def _glob(path: str, pattern: str) -> bool:
    """Argo CD's include/exclude: a glob, `{a,b}` for several, on the path in the source."""
    inner = pattern[1:-1] if pattern.startswith("{") and pattern.endswith("}") else pattern
    return any(
        fnmatch.fnmatchcase(path, p) or fnmatch.fnmatchcase(posixpath.basename(path), p)
        for p in inner.split(",")
    )
