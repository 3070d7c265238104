"""The repository's shape: clusters/<cluster>/ and tenants/<tenant>/<cluster>/, with profiles.

This is the one place that knows which manifest is synced to which cluster.
"""

from __future__ import annotations

import posixpath
import typing as t
from dataclasses import dataclass, field, replace
from pathlib import Path

from auditor import rules
from auditor.errors import ConfigError, processing
from auditor.k8s.objects import CLUSTER_SCOPED_KINDS
from auditor.model import Finding, Resource
from auditor.render import folder as render_folder
from auditor.render.source import Source
from auditor.repo import manifests, sources, suppressions
from auditor.repo.profiles import (
    PROFILE_FILE,
    ClusterProfile,
    TenantProfile,
    cluster_profile,
    tenant_profile,
)
from auditor.repo.root import CLUSTERS, find_root
from auditor.repo.tree import (
    FileTooLarge,
    NotAFile,
    SymlinkLoop,
    SymlinkOutside,
    Tree,
    WorkTree,
)

_RULES = rules.of(__name__)
DUPLICATE_OBJECT = _RULES["duplicate-object"]
FILE_TOO_LARGE = _RULES["file-too-large"]
RENDERED_FOLDER_UNSUPPORTED = _RULES["rendered-folder-unsupported"]
SPECIAL_FILE = _RULES["special-file"]
STRAY_MANIFEST = _RULES["stray-manifest"]
SYMLINK_LOOP = _RULES["symlink-loop"]
SYMLINK_OUTSIDE = _RULES["symlink-outside"]
UNKNOWN_CLUSTER_FOLDER = _RULES["unknown-cluster-folder"]
UNREADABLE_FILE = _RULES["unreadable-file"]

TENANTS = "tenants"
# clusters/<cluster>/unowned/<namespace>.yaml: a namespace no tenant has yet (import could not
# place it); validate names each until it moves into a tenant's folder.
UNOWNED = "unowned"
TENANT_PROFILES = "_tenant-profiles"  # their cache pack's name: no cluster folder starts with _


@dataclass(frozen=True)
class Placed:
    """A manifest file, and the cluster (and tenant folder) it is synced to."""

    path: str
    cluster: str
    tenant: str | None
    source: Source | None = None  # a folder Argo CD renders: `path` is its marker file
    namespace: str | None = None  # the Application's destination namespace (a directory's)


@dataclass
class Loaded:
    """Every object of the repository, placed on its cluster, and what could not be loaded."""

    resources: list[Resource] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    reads: frozenset[str] = frozenset()  # a rendered folder's: the files its render reached

    def for_cluster(self, cluster: str) -> list[Resource]:
        return [r for r in self.resources if r.cluster == cluster]


class Repository:
    def __init__(self, tree: Tree, label: str = ".") -> None:
        self.tree = tree
        self.label = label  # shown to people: a path or a git revision
        self._clusters: dict[str, ClusterProfile] | None = None
        self._tenants: dict[str, TenantProfile] | None = None
        self.tenants_fingerprint: str | None = None  # known when the cache layer read them
        self._root_file: sources.RootFile | bool | None = False  # False: not read yet

    @classmethod
    def open(cls, repo: Path | None = None) -> Repository:
        root = find_root(repo or Path.cwd())
        return cls(WorkTree(root), str(root))

    @property
    def root(self) -> Path | None:
        return self.tree.root if isinstance(self.tree, WorkTree) else None

    # -- profiles -----------------------------------------------------------------------------

    @property
    def root_file(self) -> sources.RootFile | None:
        """kueue-gitops.yaml at the root (where the profiles are, what syncs where), if any."""
        if self._root_file is False:
            self._root_file = sources.root_file(self.tree)
        return t.cast("sources.RootFile | None", self._root_file)

    def _profile(self, folder: str, data: bytes | None = None, path: str = "") -> Resource:
        path = path or posixpath.join(folder, PROFILE_FILE)
        if data is None:
            data = self.profile_bytes(path)
        found, problems = manifests.load_bytes(data, path)
        if problems:
            p = problems[0]
            raise ConfigError(f"{p.file}:{p.line}: {p.message}")
        if len(found) != 1:
            raise ConfigError(f"{path}: a profile file holds exactly one document")
        return found[0]

    @property
    def clusters(self) -> dict[str, ClusterProfile]:
        listed = self.root_file.clusters if self.root_file else {}
        if self._clusters is None and listed:
            self._clusters = {
                name: cluster_profile(self._profile("", path=path), name)
                for name, path in listed.items()
            }
        if self._clusters is None:
            self._clusters = {
                name: cluster_profile(self._profile(f"{CLUSTERS}/{name}"), name)
                for name in self.tree.subfolders(CLUSTERS)
            }
        return self._clusters

    def profile_bytes(self, path: str) -> bytes:
        try:
            return self.tree.read(path)
        except (OSError, KeyError) as exc:
            raise ConfigError(f"{path}: cannot read the profile ({exc})") from exc

    @property
    def tenants(self) -> dict[str, TenantProfile]:
        if self._tenants is None:
            names = self.tenant_names()
            self._tenants = dict(zip(names, self.tenant_profiles(names), strict=True))
        return self._tenants

    def tenant_profiles(self, names: list[str]) -> list[TenantProfile]:
        """The profiles of the tenants `names`, in that order."""
        with manifests.quiet():
            return [self.tenant(name) for name in names]

    def tenant_names(self) -> list[str]:
        if self.root_file and self.root_file.tenants:
            return sorted(self.root_file.tenants)
        return self.tree.subfolders(TENANTS)

    def tenant_file(self, name: str) -> str:
        """Where a tenant's profile is: tenants/<name>/profile.yaml, or as the root file says."""
        listed = self.root_file.tenants if self.root_file else {}
        return listed.get(name) or f"{TENANTS}/{name}/{PROFILE_FILE}"

    def tenant(self, name: str, data: bytes | None = None) -> TenantProfile:
        """A tenant's profile, from its file's bytes (`data`, or read from the tree)."""
        return tenant_profile(self._profile("", data, self.tenant_file(name)), name)

    def use_tenants(self, tenants: dict[str, TenantProfile], fingerprint: str | None) -> None:
        """The tenants' profiles, as a layer around the repository found them (the cache, or
        processes sharing the reading), and the SHA-256 of their files' names and bytes (None:
        not known)."""
        self._tenants, self.tenants_fingerprint = tenants, fingerprint

    def forget(self) -> None:
        """Read the profiles again when next asked for (one of them was edited)."""
        self._clusters = self._tenants = None
        self.tenants_fingerprint = None

    def cluster(self, name: str) -> ClusterProfile:
        try:
            return self.clusters[name]
        except KeyError:
            known = ", ".join(sorted(self.clusters)) or "none"
            raise ConfigError(f"no cluster {name!r} in {CLUSTERS}/ (known: {known})") from None

    # -- manifests ----------------------------------------------------------------------------

    def plan(self, clusters: list[str]) -> tuple[list[Placed], list[Finding]]:
        """Which manifest files `clusters` get, in the order they are loaded, and what the
        layout itself says is wrong (folders of no cluster, stray and rendered manifests)."""
        mapped = sources.mapped(self.tree, self.root_file, self.clusters)
        if mapped is not None:
            return self._plan_sources(*mapped, clusters)
        placed: list[Placed] = []
        findings: list[Finding] = []
        for name in clusters:
            self._plan_folder(placed, findings, f"{CLUSTERS}/{name}", cluster=name, tenant=None)
        for tenant in self.tenant_names():  # their folders: the profiles need not be read
            base = f"{TENANTS}/{tenant}"
            files = self.tree.files(base)  # one walk of the tenant folder, then split by cluster
            for sub in self.tree.subfolders(base):
                if sub not in self.clusters:
                    findings.append(
                        Finding(
                            UNKNOWN_CLUSTER_FOLDER,
                            f"{base}/{sub}/ names no cluster in {CLUSTERS}/; "
                            "its manifests are synced nowhere",
                            file=f"{base}/{sub}",
                        )
                    )
                elif sub in clusters:
                    inside = f"{base}/{sub}/"
                    self._plan_folder(
                        placed,
                        findings,
                        f"{base}/{sub}",
                        cluster=sub,
                        tenant=tenant,
                        files=[p for p in files if p.startswith(inside)],
                    )
            for path in files:
                head, _, name = path.rpartition("/")  # posixpath's, without its calls
                if head == base and name != PROFILE_FILE:
                    findings.append(
                        Finding(
                            STRAY_MANIFEST,
                            "a manifest directly in a tenant folder is synced nowhere; "
                            "move it into the folder of the cluster it is for",
                            file=path,
                            line=1,
                        )
                    )
        return placed, findings

    def _plan_sources(
        self, found: list[Source], problems: list[Finding], clusters: list[str]
    ) -> tuple[list[Placed], list[Finding]]:
        """The files (and rendered folders) the Applications sync to `clusters`."""
        placed: list[Placed] = []
        for source in found:
            if source.cluster not in clusters:
                continue
            rendered, files = sources.files_of(self.tree, source)
            if rendered is not None:
                placed.append(Placed(rendered, source.cluster, source.tenant, source))
            placed += [
                Placed(p, source.cluster, source.tenant, namespace=source.namespace) for p in files
            ]
        return placed, list(problems)

    def _plan_folder(
        self,
        placed: list[Placed],
        findings: list[Finding],
        folder: str,
        *,
        cluster: str,
        tenant: str | None,
        files: list[str] | None = None,
    ) -> None:
        paths = self.tree.files(folder) if files is None else files
        rendered = _rendered_folders(paths)
        root = rendered.pop(folder, None)
        if root is not None:  # Argo CD renders the folder it syncs: all of it, rendered
            source = Source(folder, cluster, tenant=tenant, app=root)
            placed.append(Placed(root, cluster, tenant, source))
            return
        for marker in rendered.values():
            findings.append(_rendered(marker, cluster))
        for path in paths:
            if path != f"{folder}/{PROFILE_FILE}" and not _inside(path, rendered):
                placed.append(Placed(path, cluster, tenant))

    def load(self, clusters: list[str] | None = None) -> Loaded:
        """Load the manifests of `clusters` (all when None), each placed on its cluster, with
        what the layout says is wrong (the cache's layer around it: repo/cached.py)."""
        wanted = clusters or sorted(self.clusters)
        for name in wanted:
            self.cluster(name)
        placed, layout = self.plan(wanted)
        out = self.load_placed(placed)
        out.findings = layout + out.findings
        return out

    def load_placed(self, placed: t.Iterable[Placed]) -> Loaded:
        """The objects of the files `plan` placed, and what is wrong in them (second
        definitions of one object on one cluster too); every finding names its cluster."""
        return gathered(self.load_file(where) for where in placed)

    def load_file(self, where: Placed) -> Loaded:
        """One manifest file's objects, placed on its cluster, and what is wrong in it (for
        a rendered folder, its objects as Argo CD renders them: auditor/render/)."""
        if where.source is not None:
            made = render_folder.build(self.tree, self.synced(where.source))
            return Loaded(made.resources, made.findings, made.reads)
        data = self.read(where)
        return data if isinstance(data, Loaded) else parse(where, data)

    def synced(self, source: Source) -> Source:
        """`source` as its cluster's Argo CD renders it: the release its profile names (and
        whether only that release's renderers may render it)."""
        profile = self.clusters.get(source.cluster)
        if profile is None:
            return source
        return replace(
            source, argocd=profile.argocd_version, exact_renderers=profile.exact_renderers
        )

    def read(self, where: Placed) -> bytes | Loaded:
        """A manifest file's bytes, or (as a Loaded) the finding that it cannot be read."""
        try:
            return self.tree.read(where.path)
        except OSError as exc:
            return Loaded(findings=[_refused(where.path, exc, where.cluster)])

    def text(self, path: str) -> str:
        """A file's text, read again (for the field lines of a file served from the cache)."""
        return manifests.decode(self.tree.read(path))


def parse(where: Placed, data: bytes) -> Loaded:
    """A manifest file's objects from its bytes, placed on its cluster: the pure loader."""
    with processing(f"reading {where.path}"):
        found, problems = manifests.load_bytes(data, where.path)
    return placed(where, found, problems)


def gathered(files: t.Iterable[Loaded]) -> Loaded:
    """Files' objects and findings in one, and a finding for each second definition."""
    out = Loaded()
    with manifests.quiet():
        for loaded in files:
            out.resources += loaded.resources
            out.findings += loaded.findings
    out.resources, duplicates = flag_duplicates(out.resources)
    out.findings += duplicates
    return out


# A folder holding one of these is rendered (kustomize, Helm) by Argo CD before it is synced.
RENDER_MARKERS = ("kustomization.yaml", "kustomization.yml", "Kustomization", "Chart.yaml")


def _rendered_folders(paths: list[str]) -> dict[str, str]:
    """The folders among `paths` that kustomize or Helm builds, each with its marker file."""
    out: dict[str, str] = {}
    for path in paths:
        if path.rpartition("/")[2] in RENDER_MARKERS:  # the basename
            out.setdefault(posixpath.dirname(path), path)
    return out


def _inside(path: str, folders: dict[str, str]) -> bool:
    return any(path.startswith(f"{folder}/") for folder in folders)


def _rendered(marker: str, cluster: str) -> Finding:
    tool = "Helm" if marker.endswith("Chart.yaml") else "kustomize"
    return Finding(
        RENDERED_FOLDER_UNSUPPORTED,
        f"{posixpath.dirname(marker)}/ is built by {tool} ({posixpath.basename(marker)}) but "
        f"sits inside a folder Argo CD syncs as plain manifests, which it does not render; "
        "none of its files is checked: sync it as an Application's path of its own",
        cluster=cluster,
        file=marker,
        line=1,
    )


def _refused(path: str, exc: OSError, cluster: str) -> Finding:
    """What the tree refused to read (or could not), as the finding that says so."""
    rule = (
        SYMLINK_OUTSIDE if isinstance(exc, SymlinkOutside)
        else SYMLINK_LOOP if isinstance(exc, SymlinkLoop)
        else SPECIAL_FILE if isinstance(exc, NotAFile)
        else FILE_TOO_LARGE if isinstance(exc, FileTooLarge)
        else UNREADABLE_FILE
    )  # fmt: skip
    message = f"cannot read the file: {exc}" if rule is UNREADABLE_FILE else f"{exc}; not read"
    return Finding(rule, message, cluster=cluster, file=path, line=1)


def placed(where: Placed, found: list[Resource], problems: list[Finding]) -> Loaded:
    """A file's objects and loading problems, stamped with the cluster (and tenant) it syncs
    to; the suppression annotations it cannot use are among the problems."""
    out = Loaded(findings=problems)
    for problem in problems:
        problem.cluster = where.cluster
    for resource in found:
        resource.cluster, resource.tenant = where.cluster, where.tenant
        if where.namespace and not resource.namespace and resource.kind not in CLUSTER_SCOPED_KINDS:
            # Argo CD puts a namespaced object that names none in the destination namespace
            resource.body["metadata"]["namespace"] = where.namespace
            resource.__dict__.pop("key", None)  # its identity, if asked already, changed
        out.resources.append(resource)
        out.findings += suppressions.annotated(resource)[1]
    return out


def flag_duplicates(resources: list[Resource]) -> tuple[list[Resource], list[Finding]]:
    """The objects without the second (and later) definitions of one object on one cluster,
    and a finding for each of those."""
    seen: dict[tuple[str | None, object], Resource] = {}
    keep: list[Resource] = []
    findings: list[Finding] = []
    for resource in resources:
        ident = (resource.cluster, resource.key)
        first = seen.get(ident)
        if first is None:
            seen[ident] = resource
            keep.append(resource)
            continue
        findings.append(duplicate(resource, first))
    return keep, findings


def duplicate(resource: Resource, first: Resource) -> Finding:
    """The finding on `resource`, a second definition of `first` on its cluster."""
    return Finding.about(
        resource,
        DUPLICATE_OBJECT,
        f"{resource.key} is defined twice for cluster {resource.cluster} (first at "
        f"{first.file}:{first.line}); Argo CD would fight itself over it",
        cluster=resource.cluster,
    )
