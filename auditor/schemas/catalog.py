"""Read the committed schemas/ folder: one JSON Schema per cluster, group, kind and version.

Layout (written by `kueue-gitops schemas fetch`, readable by kubeconform's -schema-location):
    schemas/<cluster>/index.json
    schemas/<cluster>/<group or "core">/<kind>_<version>.json   (all lower-case)

kubeconform names the core group after the version ("v1"), hence the `if` in its template:
    schemas/<cluster>/{{if eq .Group .ResourceAPIVersion}}core{{else}}{{.Group}}{{end}}/
        {{.ResourceKind}}_{{.ResourceAPIVersion}}.json   (one line)
"""

from __future__ import annotations

import functools
import json
import typing as t
from pathlib import Path

if t.TYPE_CHECKING:
    from auditor.repo.tree import Tree

Schema = dict[str, t.Any]
INDEX_FILE = "index.json"
KUBECONFORM_TEMPLATE = (
    "{root}/{cluster}/{{{{if eq .Group .ResourceAPIVersion}}}}core{{{{else}}}}{{{{.Group}}}}"
    "{{{{end}}}}/{{{{.ResourceKind}}}}_{{{{.ResourceAPIVersion}}}}.json"
)


def schema_path(root: Path, cluster: str, group: str, kind: str, version: str) -> Path:
    return root / cluster / (group or "core").lower() / f"{kind.lower()}_{version.lower()}.json"


class SchemaCatalog:
    """The schemas of one cluster, loaded lazily and cached: from the schemas folder `root` on
    disk, or, given a `tree` (a git revision), from `root` relative to the tree."""

    def __init__(self, root: Path, cluster: str, tree: Tree | None = None) -> None:
        self.root = root
        self.cluster = cluster
        self.tree = tree

    def _read(self, path: Path) -> str | None:
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
    def index_path(self) -> Path:
        return self.root / self.cluster / INDEX_FILE

    @functools.cached_property
    def index(self) -> dict[str, t.Any]:
        text = self._read(self.index_path)
        return t.cast(dict[str, t.Any], json.loads(text)) if text else {}

    def kind(self, group: str, kind: str) -> dict[str, t.Any] | None:
        """The index entry of a kind: served, storage and deprecated versions."""
        entry = (self.index.get("kinds") or {}).get(f"{group}/{kind}" if group else kind)
        return t.cast(dict[str, t.Any], entry) if entry else None

    @functools.lru_cache(maxsize=256)  # noqa: B019 - one catalog per cluster per run
    def schema(self, api_version: str, kind: str) -> Schema | None:
        group, _, version = api_version.rpartition("/")
        text = self._read(schema_path(self.root, self.cluster, group, kind, version))
        return t.cast(Schema, json.loads(text)) if text else None
