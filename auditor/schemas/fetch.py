"""`schemas fetch`: read a live cluster's CRDs and OpenAPI, write schemas/<cluster>/.

Every CRD version the cluster serves becomes one JSON Schema; the core kinds the repository uses
come from the cluster's /openapi/v3 documents. index.json records, per kind, the served, storage
and deprecated versions and, per CRD, a fingerprint that the drift audit compares with the live
CRD. Output is deterministic (sorted keys, fixed formatting), so an unchanged cluster leaves
`git diff` empty. The same read of a sandbox running a pinned Kueue release is what the
package carries for that release (`write_packaged`, by `sandbox kueue-api --write`).
"""

from __future__ import annotations

import hashlib
import json
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

from auditor.errors import ClusterAccessError
from auditor.k8s.objects import CRD_API, RBAC_GROUP, SCHEDULING_GROUP
from auditor.repo.outfile import write_whole
from auditor.schemas import convert
from auditor.schemas.catalog import INDEX_FILE, PACKAGED_FILES, Schema, schema_file, schema_path

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

ADMISSION_GROUP = "admissionregistration.k8s.io"  # the generated admission policies
# Core kinds the repository uses; a CRD's kinds are always fetched in full.
CORE_KINDS: tuple[tuple[str, str], ...] = (
    ("", "Namespace"),
    ("", "ConfigMap"),
    ("", "ServiceAccount"),
    (RBAC_GROUP, "Role"),
    (RBAC_GROUP, "RoleBinding"),
    (RBAC_GROUP, "ClusterRole"),
    (RBAC_GROUP, "ClusterRoleBinding"),
    (SCHEDULING_GROUP, "PriorityClass"),
    (ADMISSION_GROUP, "ValidatingAdmissionPolicy"),
    (ADMISSION_GROUP, "ValidatingAdmissionPolicyBinding"),
)
# What decides how an object of a CRD validates; conversion (CA bundles) and status do not.
_FINGERPRINTED = ("name", "served", "storage", "deprecated", "deprecationWarning", "schema")


def crd_fingerprint(crd: dict[str, t.Any]) -> str:
    """A content hash of what in a CRD decides validation: group, kind, scope, versions."""
    spec = crd.get("spec") or {}
    relevant = {
        "group": spec.get("group"),
        "kind": (spec.get("names") or {}).get("kind"),
        "scope": spec.get("scope"),
        "versions": sorted(
            ({k: v[k] for k in _FINGERPRINTED if k in v} for v in spec.get("versions") or []),
            key=lambda v: str(v.get("name")),
        ),
    }
    canonical = json.dumps(relevant, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


@dataclass
class Fetched:
    """The schemas of one cluster, keyed by (group, kind, version), and its index."""

    cluster: str
    schemas: dict[tuple[str, str, str], Schema] = field(default_factory=dict)
    kinds: dict[str, dict[str, t.Any]] = field(default_factory=dict)

    @property
    def index(self) -> dict[str, t.Any]:
        return {"cluster": self.cluster, "kinds": self.kinds}


def kind_key(group: str, kind: str) -> str:
    """How index.json names a kind: `group/Kind`, or just `Kind` in the core group."""
    return f"{group}/{kind}" if group else kind


def fetch(cluster: KubeCluster) -> Fetched:
    out = Fetched(cluster.name)
    object_meta = _add_core(out, cluster)
    for crd in cluster.list(CRD_API, "CustomResourceDefinition"):
        _add_crd(out, crd, object_meta)
    return out


def _add_crd(out: Fetched, crd: dict[str, t.Any], object_meta: Schema | None) -> None:
    spec = crd["spec"]
    group, kind = spec["group"], spec["names"]["kind"]
    served = [v for v in spec["versions"] if v.get("served")]
    for version in served:
        raw = (version.get("schema") or {}).get("openAPIV3Schema") or {"type": "object"}
        out.schemas[(group, kind, version["name"])] = convert.from_crd(raw, object_meta)
    out.kinds[kind_key(group, kind)] = {
        "group": group,
        "kind": kind,
        "scope": spec.get("scope"),
        "crd": crd["metadata"]["name"],
        "served": sorted(v["name"] for v in served),
        "storage": next((v["name"] for v in spec["versions"] if v.get("storage")), None),
        "deprecated": sorted(v["name"] for v in served if v.get("deprecated")),
        "hash": crd_fingerprint(crd),
    }


def _add_core(out: Fetched, cluster: KubeCluster) -> Schema | None:
    """Add the core kinds; return ObjectMeta's schema, which every object's metadata follows."""
    object_meta: Schema | None = None
    paths = (cluster.request("GET", "/openapi/v3", what="OpenAPI discovery") or {}).get("paths", {})
    wanted = {(g, k) for g, k in CORE_KINDS}
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(paths):
        group, version = _group_version(path)
        if version is None or not any(g == group for g, _ in wanted):
            continue
        doc = cluster.request("GET", f"/openapi/v3/{path}", what=f"OpenAPI of {path}")
        components = (doc.get("components") or {}).get("schemas") or {}
        if object_meta is None and convert.OBJECT_META in components:
            object_meta = convert.from_openapi(components, convert.OBJECT_META)
        for name, definition in components.items():
            for gvk in definition.get("x-kubernetes-group-version-kind") or []:
                key = (gvk.get("group", ""), gvk.get("kind", ""))
                if key in wanted and gvk.get("version") == version:
                    out.schemas[(group, key[1], version)] = convert.from_openapi(components, name)
                    found.setdefault(key, []).append(version)
    missing = wanted - set(found)
    if missing:
        names = ", ".join(sorted(kind_key(g, k) for g, k in missing))
        raise ClusterAccessError(
            f"cluster {cluster.name}: /openapi/v3 has no schema for {names}",
            cluster=cluster.name,
            action="GET /openapi/v3",
        )
    for (group, kind), versions in found.items():
        out.kinds[kind_key(group, kind)] = {
            "group": group,
            "kind": kind,
            "served": sorted(set(versions)),
            "deprecated": [],
        }
    return object_meta


def _group_version(path: str) -> tuple[str, str | None]:
    parts = path.split("/")
    if parts[0] == "api" and len(parts) == 2:
        return "", parts[1]
    if parts[0] == "apis" and len(parts) == 3:
        return parts[1], parts[2]
    return "", None


def dumps(data: t.Any) -> str:
    """The one JSON formatting of schemas/: sorted keys, two-space indent, final newline."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write(fetched: Fetched, root: Path) -> list[Path]:
    """Write schemas/<cluster>/, removing schema files the cluster no longer serves.

    Returns the files whose content changed. Unchanged files are not rewritten.
    """
    folder = root / fetched.cluster
    wanted: dict[Path, str] = {
        schema_path(root, fetched.cluster, g, k, v): dumps(s)
        for (g, k, v), s in fetched.schemas.items()
    }
    wanted[folder / INDEX_FILE] = dumps(fetched.index)
    changed = []
    if folder.is_dir():
        for stale in folder.rglob("*.json"):
            if stale not in wanted:
                stale.unlink()
                changed.append(stale)
    for path, text in sorted(wanted.items()):
        if path.is_file() and path.read_text() == text:
            continue
        write_whole(path, text, what="a schema")
        changed.append(path)
    return changed


def packaged(fetched: Fetched, kueue: str, kubernetes: str) -> tuple[str, dict[str, str]]:
    """The package's set of Kueue release `kueue` (catalog.PackagedCatalog reads it): its
    manifest's text, and each schema file's text by the SHA-256 that names it."""
    files: dict[str, str] = {}
    named: dict[str, str] = {}
    for (group, kind, version), schema in sorted(fetched.schemas.items()):
        text = dumps(schema)
        digest = hashlib.sha256(text.encode()).hexdigest()
        files[digest] = text
        named[schema_file(group, kind, version)] = digest
    manifest = {"kueue": kueue, "kubernetes": kubernetes, "index": {"kinds": fetched.kinds}}
    return dumps({**manifest, "files": named}), files


def write_packaged(fetched: Fetched, kueue: str, kubernetes: str, folder: Path) -> list[Path]:
    """Store release `kueue`'s set in `folder` (the package's `schemas/packaged/`), each file
    once however many releases share it, and drop the files no release names any more.

    Returns the files whose content changed. Unchanged files are not rewritten."""
    manifest, files = packaged(fetched, kueue, kubernetes)
    store = folder / PACKAGED_FILES
    store.mkdir(parents=True, exist_ok=True)
    changed = []
    for path, text in [
        (folder / f"{kueue}.json", manifest),
        *((store / f"{d}.json", s) for d, s in sorted(files.items())),
    ]:
        if not (path.is_file() and path.read_text() == text):
            write_whole(path, text, what="a packaged schema")
            changed.append(path)
    named = {
        digest
        for each in folder.glob("*.json")
        for digest in json.loads(each.read_text())["files"].values()
    }
    for stale in sorted(store.glob("*.json")):
        if stale.stem not in named:
            stale.unlink()
            changed.append(stale)
    return changed
