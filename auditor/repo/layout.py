"""The repository's shape: clusters/<cluster>/ and tenants/<tenant>/<cluster>/, with profiles.

This is the one place that knows which manifest is synced to which cluster.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from auditor.errors import ConfigError, processing
from auditor.model import Finding, Resource
from auditor.repo import manifests, suppressions
from auditor.repo.profiles import (
    PROFILE_FILE,
    ClusterProfile,
    TenantProfile,
    cluster_profile,
    tenant_profile,
)
from auditor.repo.tree import (
    FileTooLarge,
    NotAFile,
    SymlinkLoop,
    SymlinkOutside,
    Tree,
    WorkTree,
)

CLUSTERS = "clusters"
TENANTS = "tenants"


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` that holds a clusters/ folder."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / CLUSTERS).is_dir():
            return folder
    raise ConfigError(
        f"no kueue-gitops repository (a folder with clusters/) at or above {start}; "
        "run inside one or pass --repo DIR"
    )


@dataclass
class Loaded:
    """Every object of the repository, placed on its cluster, and what could not be loaded."""

    resources: list[Resource] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def for_cluster(self, cluster: str) -> list[Resource]:
        return [r for r in self.resources if r.cluster == cluster]


class Repository:
    def __init__(self, tree: Tree, label: str = ".") -> None:
        self.tree = tree
        self.label = label  # shown to people: a path or a git revision
        self._clusters: dict[str, ClusterProfile] | None = None
        self._tenants: dict[str, TenantProfile] | None = None

    @classmethod
    def open(cls, repo: Path | None = None) -> Repository:
        root = find_root(repo or Path.cwd())
        return cls(WorkTree(root), str(root))

    @property
    def root(self) -> Path | None:
        return self.tree.root if isinstance(self.tree, WorkTree) else None

    # -- profiles -----------------------------------------------------------------------------

    def _profile(self, folder: str) -> Resource:
        path = posixpath.join(folder, PROFILE_FILE)
        try:
            data = self.tree.read(path)
        except (OSError, KeyError) as exc:
            raise ConfigError(f"{path}: cannot read the profile ({exc})") from exc
        found, problems = manifests.load_bytes(data, path)
        if problems:
            p = problems[0]
            raise ConfigError(f"{p.file}:{p.line}: {p.message}")
        if len(found) != 1:
            raise ConfigError(f"{path}: a profile file holds exactly one document")
        return found[0]

    @property
    def clusters(self) -> dict[str, ClusterProfile]:
        if self._clusters is None:
            self._clusters = {
                name: cluster_profile(self._profile(f"{CLUSTERS}/{name}"), name)
                for name in self.tree.subfolders(CLUSTERS)
            }
        return self._clusters

    @property
    def tenants(self) -> dict[str, TenantProfile]:
        if self._tenants is None:
            self._tenants = {
                name: tenant_profile(self._profile(f"{TENANTS}/{name}"), name)
                for name in self.tree.subfolders(TENANTS)
            }
        return self._tenants

    def cluster(self, name: str) -> ClusterProfile:
        try:
            return self.clusters[name]
        except KeyError:
            known = ", ".join(sorted(self.clusters)) or "none"
            raise ConfigError(f"no cluster {name!r} in {CLUSTERS}/ (known: {known})") from None

    # -- manifests ----------------------------------------------------------------------------

    def load(self, clusters: list[str] | None = None) -> Loaded:
        """Load the manifests of `clusters` (all when None), each placed on its cluster."""
        wanted = clusters or sorted(self.clusters)
        for name in wanted:
            self.cluster(name)
        out = Loaded()
        for name in wanted:
            self._load_folder(out, f"{CLUSTERS}/{name}", cluster=name, tenant=None)
        for tenant in sorted(self.tenants):
            base = f"{TENANTS}/{tenant}"
            files = self.tree.files(base)  # one walk of the tenant folder, then split by cluster
            for sub in self.tree.subfolders(base):
                if sub not in self.clusters:
                    out.findings.append(
                        Finding(
                            rule="unknown-cluster-folder",
                            category="layout",
                            file=f"{base}/{sub}",
                            line=None,
                            message=f"{base}/{sub}/ names no cluster in {CLUSTERS}/; "
                            "its manifests are synced nowhere",
                        )
                    )
                elif sub in wanted:
                    inside = f"{base}/{sub}/"
                    self._load_folder(
                        out,
                        f"{base}/{sub}",
                        cluster=sub,
                        tenant=tenant,
                        files=[p for p in files if p.startswith(inside)],
                    )
            for path in files:
                if posixpath.dirname(path) == base and posixpath.basename(path) != PROFILE_FILE:
                    out.findings.append(
                        Finding(
                            rule="stray-manifest",
                            category="layout",
                            file=path,
                            line=1,
                            message="a manifest directly in a tenant folder is synced nowhere; "
                            "move it into the folder of the cluster it is for",
                        )
                    )
        _flag_duplicates(out)
        return out

    def _load_folder(
        self,
        out: Loaded,
        folder: str,
        *,
        cluster: str,
        tenant: str | None,
        files: list[str] | None = None,
    ) -> None:
        paths = self.tree.files(folder) if files is None else files
        rendered = _rendered_folders(paths)
        for marker in rendered.values():
            out.findings.append(_rendered(marker, cluster))
        for path in paths:
            if path == f"{folder}/{PROFILE_FILE}" or _inside(path, rendered):
                continue
            try:
                data = self.tree.read(path)
            except OSError as exc:
                out.findings.append(_refused(path, exc, cluster))
                continue
            with processing(f"reading {path}"):
                found, problems = manifests.load_bytes(data, path)
            for problem in problems:
                problem.cluster = cluster
            out.findings.extend(problems)
            for resource in found:
                resource.cluster, resource.tenant = cluster, tenant
                out.resources.append(resource)
                out.findings += suppressions.annotated(resource)[1]


# A folder holding one of these is rendered (kustomize, Helm) by Argo CD before it is synced.
RENDER_MARKERS = ("kustomization.yaml", "kustomization.yml", "Kustomization", "Chart.yaml")


def _rendered_folders(paths: list[str]) -> dict[str, str]:
    """The folders among `paths` that kustomize or Helm builds, each with its marker file."""
    out: dict[str, str] = {}
    for path in paths:
        if posixpath.basename(path) in RENDER_MARKERS:
            out.setdefault(posixpath.dirname(path), path)
    return out


def _inside(path: str, folders: dict[str, str]) -> bool:
    return any(path.startswith(f"{folder}/") for folder in folders)


def _rendered(marker: str, cluster: str) -> Finding:
    tool = "Helm" if marker.endswith("Chart.yaml") else "kustomize"
    return Finding(
        rule="rendered-folder-unsupported",
        category="layout",
        cluster=cluster,
        file=marker,
        line=1,
        message=f"kustomize/helm folders are not supported yet: {posixpath.dirname(marker)}/ is "
        f"built by {tool} ({posixpath.basename(marker)}), so none of its files is checked; "
        "commit the rendered manifests instead",
    )


def _refused(path: str, exc: OSError, cluster: str) -> Finding:
    """What the tree refused to read (or could not), as the finding that says so."""
    rule = (
        "symlink-outside" if isinstance(exc, SymlinkOutside)
        else "symlink-loop" if isinstance(exc, SymlinkLoop)
        else "special-file" if isinstance(exc, NotAFile)
        else "file-too-large" if isinstance(exc, FileTooLarge)
        else "unreadable-file"
    )  # fmt: skip
    refused = rule != "unreadable-file"
    message = f"{exc}; not read" if refused else f"cannot read the file: {exc}"
    return Finding(
        rule=rule,
        category="input",
        cluster=cluster,
        file=path,
        line=1,
        message=message,
    )


def _flag_duplicates(out: Loaded) -> None:
    seen: dict[tuple[str | None, object], Resource] = {}
    keep: list[Resource] = []
    for resource in out.resources:
        ident = (resource.cluster, resource.key)
        first = seen.get(ident)
        if first is None:
            seen[ident] = resource
            keep.append(resource)
            continue
        out.findings.append(
            Finding.about(
                resource,
                "duplicate-object",
                category="input",
                cluster=resource.cluster,
                message=f"{resource.key} is defined twice for cluster {resource.cluster} (first at "
                f"{first.file}:{first.line}); Argo CD would fight itself over it",
            )
        )
    out.resources = keep
