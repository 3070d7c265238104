"""What the repository's Argo CD ApplicationSets (argocd/, or wherever a repository without
that folder keeps them) do to the folders they sync.

Only what the policy checks ask: which ApplicationSet's git directory generator makes the
Application of a folder (`path` globs as Go's path.Match reads them: `*` stops at `/`; an
`exclude: true` entry removes matches), whether that Application prunes (its template's
`syncPolicy.automated.prune`) and heals, and whether it leaves Kueue the fields Kueue writes: the
quota of a manager ClusterQueue under MultiKueue quota automation (auditor/kueue/multikueue.py),
ignored by an `ignoreDifferences` entry trusting Kueue's field manager, with
`RespectIgnoreDifferences=true` so a sync does not put the repository's placeholder back.
`with_kueue_ignores` writes those entries (`kueue-gitops generate argocd`). Sync options written
on an object (`argocd.argoproj.io/sync-options`) are read here too.
"""

from __future__ import annotations

import posixpath
import re
import typing as t
from dataclasses import dataclass

from auditor.kueue import KUEUE_GROUP, multikueue, release
from auditor.model import Resource
from auditor.repo import boundaries, manifests
from auditor.repo.root import CLUSTERS

if t.TYPE_CHECKING:
    from auditor.repo.layout import Repository

FOLDER = "argocd"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
RESPECT = "RespectIgnoreDifferences=true"


@dataclass(frozen=True)
class AppSet:
    name: str
    file: str
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    prunes: bool
    heals: bool = False  # syncPolicy.automated.selfHeal
    ignores: tuple[dict[str, t.Any], ...] = ()  # the template's ignoreDifferences
    options: tuple[str, ...] = ()  # the template's syncPolicy.syncOptions

    def leaves_kueue(self, queue: str) -> bool:
        """Whether its Applications leave Kueue the quota of manager ClusterQueue `queue`:
        an ignoreDifferences entry for it trusts Kueue's field manager (or ignores the path
        Kueue writes), and a sync respects it."""
        return RESPECT in self.options and any(
            e.get("group") == KUEUE_GROUP
            and e.get("kind") == "ClusterQueue"
            and e.get("name") in (None, queue)
            and (
                multikueue.FIELD_MANAGER in (e.get("managedFieldsManagers") or ())
                or multikueue.OWNED_JQ in (e.get("jqPathExpressions") or ())
            )
            for e in self.ignores
        )

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
    """The ApplicationSets with a git directory generator, of argocd/ or, in a repository
    of another layout than clusters/, wherever it keeps them (none when it has none)."""
    out: list[AppSet] = []
    if not repo.tree.is_dir(FOLDER) and repo.tree.is_dir(CLUSTERS):
        return out  # the clusters/ convention keeps them in argocd/: no reading the whole tree
    for doc in (r for r in documents(repo) if r.kind == "ApplicationSet"):
        include, exclude = _directories(doc)
        sync = _dict(_dict(_dict(doc.body.get("spec")).get("template")).get("spec"))
        policy = _dict(sync.get("syncPolicy"))
        automated = _dict(policy.get("automated"))
        ignores = sync.get("ignoreDifferences")
        options = policy.get("syncOptions")
        out.append(
            AppSet(
                doc.name,
                doc.file,
                include,
                exclude,
                automated.get("prune") is True,
                automated.get("selfHeal") is True,
                tuple(_dict(e) for e in ignores) if isinstance(ignores, list) else (),
                tuple(str(o) for o in options) if isinstance(options, list) else (),
            )
        )
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


def syncing(app_sets: list[AppSet], resource: Resource) -> list[AppSet]:
    """The ApplicationSets whose Applications sync the folder an object comes from: the one
    it was rendered from (kustomize, Helm), else the folder of its file."""
    folder = (resource.rendered_from or "").rstrip("/") or posixpath.dirname(resource.file)
    return [a for a in app_sets if a.makes(folder)]


def sync_options(resource: Resource) -> dict[str, str]:
    """The object's own sync options, `Prune=false,Delete=false` as {Prune: false, ...}."""
    annotations = _dict(_dict(resource.body.get("metadata")).get("annotations"))
    raw = annotations.get(SYNC_OPTIONS)
    pairs = (p.partition("=") for p in str(raw or "").split(","))
    return {k.strip(): v.strip() for k, _, v in pairs if k.strip()}


def documents(repo: Repository) -> list[Resource]:
    """Every object of argocd/ (ApplicationSets and AppProjects), in file order; without an
    argocd/ folder, the Argo CD objects wherever the repository keeps them (auditor/render)."""
    found: list[Resource] = []
    own = repo.tree.is_dir(FOLDER)
    for path in sorted(
        f for f in repo.tree.files(FOLDER if own else "") if f.endswith((".yaml", ".yml"))
    ):
        data = repo.tree.read(path)
        if not own and b"argoproj.io/" not in data:
            continue
        loaded, _ = manifests.load_bytes(data, path)
        found.extend(r for r in loaded if own or r.api_version.startswith("argoproj.io/"))
    return found


def repo_urls(objects: t.Iterable[Resource]) -> set[str]:
    """The repository URLs the ApplicationSets' git generators read (the committed one), and
    those the Applications take a folder from."""
    urls: set[str] = set()
    for doc in (o for o in objects if o.kind == "ApplicationSet"):
        generators = _dict(doc.body.get("spec")).get("generators")
        for generator in generators if isinstance(generators, list) else []:
            url = _dict(_dict(generator).get("git")).get("repoURL")
            if isinstance(url, str):
                urls.add(url)
    for doc in (o for o in objects if o.kind in ("Application", "ApplicationSet")):
        spec = _dict(doc.body.get("spec"))
        spec = _dict(_dict(spec.get("template")).get("spec")) if doc.kind != "Application" else spec
        many = spec.get("sources")
        listed: list[t.Any] = many if isinstance(many, list) else [spec.get("source")]
        for source in (_dict(s) for s in listed):  # a folder of this repository, not a chart's
            if isinstance(source.get("repoURL"), str) and "path" in source:
                urls.add(source["repoURL"])
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


def kueue_owned(repo: Repository) -> dict[str, dict[str, Resource]]:
    """By cluster, the manager ClusterQueues whose quota Kueue writes (MultiKueue quota
    automation on the cluster's Kueue release and Configuration), each as the repository has it."""
    loaded = repo.load()
    out: dict[str, dict[str, Resource]] = {}
    for name, profile in repo.clusters.items():
        resources = loaded.for_cluster(name)
        config = boundaries.configuration(boundaries.config_map(resources))
        known = release.nearest_release(profile.kueue_version)
        owned = multikueue.automated((r.body for r in resources), config, known)
        queues = {
            r.name: r
            for r in resources
            if r.kind == "ClusterQueue" and r.key.group == KUEUE_GROUP and r.name in owned
        }
        if queues:
            out[name] = queues
    return out


def ignore_entry(queue: str) -> dict[str, t.Any]:
    """The ignoreDifferences entry that leaves Kueue the quota of manager ClusterQueue `queue`:
    what Kueue's field manager wrote (scoped by name, so a queue of that name elsewhere that
    Kueue does not automate is still compared in full)."""
    return {
        "group": KUEUE_GROUP,
        "kind": "ClusterQueue",
        "name": queue,
        "managedFieldsManagers": [multikueue.FIELD_MANAGER],
    }


def with_kueue_ignores(
    objects: list[dict[str, t.Any]], sets: list[AppSet], owned: t.Mapping[str, t.Iterable[Resource]]
) -> list[dict[str, t.Any]]:
    """The argocd/ objects with, in each ApplicationSet's template, the ignoreDifferences entry
    of every Kueue-owned manager ClusterQueue in a folder it syncs (and RespectIgnoreDifferences
    among its sync options); an entry already there is kept once."""
    by_name = {a.name: a for a in sets}
    out = []
    for obj in objects:
        appset = by_name.get(str(_dict(obj.get("metadata")).get("name")))
        queues = sorted(
            {
                r.name
                for cluster, resources in owned.items()
                for r in resources
                if appset is not None and appset.makes(f"clusters/{cluster}")
            }
        )
        if obj.get("kind") != "ApplicationSet" or not queues:
            out.append(obj)
            continue
        spec = obj.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})
        ignores = spec.setdefault("ignoreDifferences", [])
        for queue in queues:
            if ignore_entry(queue) not in ignores:
                ignores.append(ignore_entry(queue))
        options = spec.setdefault("syncPolicy", {}).setdefault("syncOptions", [])
        if RESPECT not in options:
            options.append(RESPECT)
        out.append(obj)
    return out


def for_url(repo: Repository, url: str) -> list[dict[str, t.Any]]:
    """argocd/'s objects as `kueue-gitops generate argocd` prints them: pointed at `url`, each
    ApplicationSet leaving Kueue the quota Kueue writes in the folders it syncs."""
    owned = {c: list(q.values()) for c, q in kueue_owned(repo).items()}
    return with_kueue_ignores(retarget(documents(repo), url), app_sets(repo), owned)
