"""Schema drift: a cluster's live CRDs against the fingerprints committed in schemas/.

For the API groups schemas/<cluster>/index.json knows, a CRD installed on one side only, serving
other versions, or whose fingerprint (auditor.schemas.fetch.crd_fingerprint: what decides
validation) changed, is a finding: the Kueue upgrade nobody committed.
"""

from __future__ import annotations

from auditor import rules
from auditor.k8s.objects import CRD_API, Json
from auditor.model import Finding
from auditor.schemas.catalog import INDEX_FILE, SchemaCatalog
from auditor.schemas.fetch import crd_fingerprint

_RULES = rules.of(__name__)
SCHEMA_DRIFT = _RULES["schema-drift"]


def drift(cluster: str, catalog: SchemaCatalog, crds: list[Json]) -> list[Finding]:
    """Live CRDs that differ from schemas/ (the Kueue upgrade nobody committed)."""
    index = catalog.index.get("kinds") or {}
    recorded = {e["crd"]: e for e in index.values() if e.get("crd")}
    groups = {e.get("group") for e in recorded.values()}
    where = catalog.where(INDEX_FILE)
    live = {c["metadata"]["name"]: c for c in crds if (c.get("spec") or {}).get("group") in groups}
    findings = []
    for name in sorted(set(recorded) | set(live)):
        entry, crd = recorded.get(name), live.get(name)
        served = sorted(v["name"] for v in (crd or {}).get("spec", {}).get("versions", [])
                        if v.get("served"))  # fmt: skip
        if crd is None:
            problem = "is in schemas/ but not installed on the cluster"
        elif entry is None:
            problem = "is installed on the cluster but not in schemas/"
        elif sorted(entry.get("served") or []) != served:
            problem = f"serves {served} live but {sorted(entry.get('served') or [])} in schemas/"
        elif entry.get("hash") != crd_fingerprint(crd):
            problem = "differs live from the schema fetched into schemas/ (fingerprint changed)"
        else:
            continue
        findings.append(
            Finding(
                SCHEMA_DRIFT,
                f"CRD {name} {problem}; run `kueue-gitops schemas fetch` and review the "
                "change, or put the cluster back",
                cluster=cluster,
                api_version=CRD_API,
                kind="CustomResourceDefinition",
                name=name,
                file=where,
                change="modified" if entry and crd else "missing" if entry else "unmanaged",
                desired=entry.get("hash") if entry else None,
                live=crd_fingerprint(crd) if crd else None,
            )
        )
    return findings
