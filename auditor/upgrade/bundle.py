"""A Kueue release's CRD bundle: the CRDs (and webhook configurations) an upgrade installs.

A bundle is a folder or a file of YAML or JSON documents, e.g. a release's manifests.yaml or
config/components/ of its module; `kueue-gitops sandbox build` keeps one per pinned release.
Only Kueue's CRDs (group kueue.x-k8s.io) are read from it; other documents are ignored.
"""

from __future__ import annotations

import re
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from auditor.errors import ConfigError
from auditor.k8s.objects import KUEUE_GROUP, Json
from auditor.kueue import versions

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # CRDs are megabytes of YAML
_RELEASE = re.compile(r"v[0-9]+\.[0-9]+\.[0-9]+")


@dataclass
class Bundle:
    source: str
    version: str | None
    crds: dict[str, Json] = field(default_factory=dict)  # by CRD name, e.g. workloads.kueue...

    def served(self, crd: str) -> list[str]:
        spec = (self.crds.get(crd) or {}).get("spec") or {}
        return [v["name"] for v in spec.get("versions") or [] if v.get("served")]

    def deprecated(self, crd: str) -> list[str]:
        spec = (self.crds.get(crd) or {}).get("spec") or {}
        return [v["name"] for v in spec.get("versions") or [] if v.get("deprecated")]

    def storage(self, crd: str) -> str | None:
        spec = (self.crds.get(crd) or {}).get("spec") or {}
        return next((v["name"] for v in spec.get("versions") or [] if v.get("storage")), None)

    @property
    def storage_version(self) -> str | None:
        """Where the bundle stores ClusterQueues: the release's Kueue API generation."""
        return self.storage(f"clusterqueues.{KUEUE_GROUP}")


def read(path: Path, version: str | None = None) -> Bundle:
    """The Kueue CRDs in `path` (a file, or every .yaml/.yml/.json file under a folder)."""
    if not path.exists():
        raise ConfigError(f"--to {path}: no such file or folder")
    files = (
        [path]
        if path.is_file()
        else sorted(
            p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
        )
    )
    found = _RELEASE.findall(str(path))
    bundle = Bundle(str(path), version or (found[-1] if found else None))
    for file in files:
        try:
            docs = list(yaml.load_all(file.read_text(), Loader=_LOADER))
        except yaml.YAMLError as exc:
            raise ConfigError(f"{file}: not YAML: {exc}") from None
        for doc in docs:
            if _is_kueue_crd(doc):
                bundle.crds[doc["metadata"]["name"]] = doc
    if not bundle.crds:
        raise ConfigError(f"--to {path}: no CustomResourceDefinition of {KUEUE_GROUP} in it")
    return bundle


def _is_kueue_crd(doc: t.Any) -> bool:
    return (
        isinstance(doc, dict)
        and doc.get("kind") == "CustomResourceDefinition"
        and (doc.get("spec") or {}).get("group") == KUEUE_GROUP
    )


def direction(live_storage: str | None, bundle: Bundle, live_release: str | None) -> str:
    """upgrade, rollback or same: by the API generation each stores in, then by release."""
    target = bundle.storage_version
    if live_storage and target and live_storage != target:
        return (
            "rollback" if versions.priority(target) < versions.priority(live_storage) else "upgrade"
        )
    if live_release and bundle.version and live_release != bundle.version:
        older = _semver(bundle.version) < _semver(live_release)
        return "rollback" if older else "upgrade"
    return "same"


def _semver(release: str) -> tuple[int, ...]:
    return tuple(int(p) for p in release.lstrip("v").split("."))
