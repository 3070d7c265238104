"""The schemas a cluster is judged by: its committed schemas/ folder, else the package's set.

Layout (written by `kueue-gitops schemas fetch`, readable by kubeconform's -schema-location):
    schemas/<cluster>/index.json
    schemas/<cluster>/<group or "core">/<kind>_<version>.json   (all lower-case)

kubeconform names the core group after the version ("v1"), hence the `if` in its template:
    schemas/<cluster>/{{if eq .Group .ResourceAPIVersion}}core{{else}}{{.Group}}{{end}}/
        {{.ResourceKind}}_{{.ResourceAPIVersion}}.json   (one line)

The package carries the same files for every Kueue release it supports, each served by the
pinned Kubernetes with that release's CRDs, so a repository validates before anything is fetched
or built. They are written by `kueue-gitops sandbox kueue-api --write` (auditor/schemas/fetch.py,
`write_packaged`), never by hand: packaged/<release>.json holds the release's index.json and,
per schema file, the SHA-256 of its text, stored once in packaged/files/<sha256>.json however
many releases share it. `find` is the one place that decides which source a cluster's schemas
come from: committed schemas/<cluster>/ win, so `schemas fetch --cluster C` still matches one
live cluster exactly.
"""

from __future__ import annotations

import functools
import hashlib
import json
import typing as t
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from auditor.errors import ConfigError
from auditor.kueue import release

if t.TYPE_CHECKING:
    from auditor.repo.tree import Tree

Schema = dict[str, t.Any]
INDEX_FILE = "index.json"
KUBECONFORM_TEMPLATE = (
    "{root}/{cluster}/{{{{if eq .Group .ResourceAPIVersion}}}}core{{{{else}}}}{{{{.Group}}}}"
    "{{{{end}}}}/{{{{.ResourceKind}}}}_{{{{.ResourceAPIVersion}}}}.json"
)
PACKAGED = "packaged"  # auditor/schemas/packaged/: <release>.json and files/<sha256>.json
PACKAGED_FILES = "files"


def schema_file(group: str, kind: str, version: str) -> str:
    """A schema's path inside a cluster's folder, e.g. `core/namespace_v1.json`."""
    return f"{(group or 'core').lower()}/{kind.lower()}_{version.lower()}.json"


def schema_path(root: Path, cluster: str, group: str, kind: str, version: str) -> Path:
    return root / cluster / schema_file(group, kind, version)


@dataclass(frozen=True)
class Source:
    """Where a cluster's schemas come from: its committed `folder` (e.g. `schemas/gpu-prod`),
    or the package's set of Kueue release `kueue`, served by Kubernetes `kubernetes`."""

    folder: str | None = None
    kueue: str | None = None
    kubernetes: str | None = None

    def describe(self) -> str:
        if self.folder is not None:
            return f"{self.folder}/"
        return f"the package's schemas of Kueue {self.kueue} on Kubernetes {self.kubernetes}"

    def to_json(self) -> dict[str, str]:
        """The JSON report's `clusters[].schemas`."""
        if self.folder is not None:
            return {"source": "repository", "folder": self.folder}
        return {"source": "package", "kueue": str(self.kueue), "kubernetes": str(self.kubernetes)}


class SchemaCatalog:
    """The schemas of one cluster, loaded lazily and cached: from the schemas folder `root` on
    disk, or, given a `tree` (a git revision), from `root` relative to the tree."""

    def __init__(self, root: Path, cluster: str, tree: Tree | None = None) -> None:
        self.root = root
        self.cluster = cluster
        self.tree = tree

    def _text(self, name: str) -> str | None:
        """The text of file `name` of the cluster's folder (`index.json`, `core/...`)."""
        path = self.root / self.cluster / name
        if self.tree is None:
            return path.read_text() if path.is_file() else None
        try:
            return self.tree.read(path.as_posix()).decode()
        except OSError:  # not at that revision (FileNotFoundError), or a link out of it
            return None

    @property
    def folder(self) -> str:
        """The cluster's schema folder as people see it, e.g. `schemas/gpu-prod`."""
        return f"{self.root.name}/{self.cluster}"

    @property
    def source(self) -> Source:
        return Source(folder=self.folder)

    def where(self, name: str) -> str:
        """File `name` of these schemas as people find it, e.g. `schemas/gpu-prod/core/...`."""
        return f"{self.folder}/{name}"

    def fingerprint(self) -> str:
        """What validate's cache keys this cluster's verdicts by: every file's name and bytes."""
        from auditor.repo.cache import fingerprint  # the cache's own walk, read on use

        return fingerprint(self.root / self.cluster)

    @functools.cached_property
    def index(self) -> dict[str, t.Any]:
        text = self._text(INDEX_FILE)
        return t.cast(dict[str, t.Any], json.loads(text)) if text else {}

    def kind(self, group: str, kind: str) -> dict[str, t.Any] | None:
        """The index entry of a kind: served, storage and deprecated versions."""
        entry = (self.index.get("kinds") or {}).get(f"{group}/{kind}" if group else kind)
        return t.cast(dict[str, t.Any], entry) if entry else None

    @functools.lru_cache(maxsize=256)  # noqa: B019 - one catalog per cluster per run
    def schema(self, api_version: str, kind: str) -> Schema | None:
        group, _, version = api_version.rpartition("/")
        text = self._text(schema_file(group, kind, version))
        return t.cast(Schema, json.loads(text)) if text else None


class PackagedCatalog(SchemaCatalog):
    """The package's schemas of one Kueue release, for a cluster with none committed."""

    def __init__(self, cluster: str, manifest: dict[str, t.Any]) -> None:
        super().__init__(Path(PACKAGED), cluster)
        self.manifest = manifest

    @functools.cached_property
    def index(self) -> dict[str, t.Any]:
        return t.cast(dict[str, t.Any], self.manifest["index"])

    def _text(self, name: str) -> str | None:
        digest = self.manifest["files"].get(name)
        return _packaged_text(f"{PACKAGED_FILES}/{digest}.json") if digest else None

    @property
    def folder(self) -> str:
        return f"the package's Kueue {self.manifest['kueue']} schemas"

    @property
    def source(self) -> Source:
        return Source(kueue=self.manifest["kueue"], kubernetes=self.manifest["kubernetes"])

    def where(self, name: str) -> str:
        return f"{name} of {self.folder}"

    def fingerprint(self) -> str:
        """Its manifest names every file by content, so the manifest's hash covers them all."""
        canonical = json.dumps(self.manifest, sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()


def _packaged_text(name: str) -> str | None:
    found = resources.files("auditor.schemas").joinpath(PACKAGED, name)
    return found.read_text() if found.is_file() else None


def packaged_releases() -> list[str]:
    """The Kueue releases whose schemas the package carries."""
    folder = resources.files("auditor.schemas").joinpath(PACKAGED)
    if not folder.is_dir():
        return []
    names = [p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json")]
    return sorted(names, key=lambda n: release.semver(n) or (0, 0, 0))


@functools.cache
def _manifest(version: str) -> dict[str, t.Any] | None:
    text = _packaged_text(f"{version}.json") if version in packaged_releases() else None
    return t.cast(dict[str, t.Any], json.loads(text)) if text else None


def find(
    root: Path | None, cluster: str, kueue: str | None, tree: Tree | None = None
) -> SchemaCatalog | None:
    """The schemas cluster `cluster` (running Kueue release `kueue`) is judged by: its
    committed folder under `root` (an index.json there, in `tree` when given), else the
    package's set of its release; None when there is neither."""
    if root is not None:
        committed = SchemaCatalog(root, cluster, tree)
        if committed.index:
            return committed
    manifest = _manifest(kueue) if kueue else None
    return PackagedCatalog(cluster, manifest) if manifest else None


def require(
    root: Path | None, cluster: str, kueue: str | None, tree: Tree | None = None
) -> SchemaCatalog:
    """`find`, or a ConfigError (exit 2) saying how to get the cluster's schemas."""
    found = find(root, cluster, kueue, tree)
    if found is not None:
        return found
    carried = ", ".join(packaged_releases()) or "none"
    folder = f"{root.name}/{cluster}/" if root is not None else f"schemas/{cluster}/"
    why = (
        "its profile names no Kueue release (spec.kueue.version)"
        if not kueue
        else f"the package carries the schemas of Kueue {carried}, not {kueue}"
    )
    raise ConfigError(
        f"no schemas for cluster {cluster}: {folder} has none and {why}; run "
        f"`kueue-gitops schemas fetch --cluster {cluster}` (from the live cluster), or set "
        f"spec.kueue.version in its profile to a release the package carries"
    )
