"""Install CustomResourceDefinitions into a sandbox and wait until they are served."""

from __future__ import annotations

import time
import typing as t
from pathlib import Path

import yaml

from auditor.errors import ClusterAccessError
from auditor.k8s import conditions
from auditor.k8s.objects import CRD_API
from auditor.sandbox import services

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

# libyaml when present: Argo CD's ApplicationSet CRD alone is 1.4 MB of YAML.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_crds(paths: list[Path]) -> list[dict[str, t.Any]]:
    crds = []
    for path in paths:
        for doc in yaml.load_all(path.read_text(), Loader=_LOADER):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                # No Kueue webhook runs yet, so a conversion stanza pointing at its service
                # would make every request in a non-storage version fail. Kueue's bases/ ship
                # without it; drop it anyway. (sandbox/kueue.py adds it when Kueue runs.)
                doc.get("spec", {}).pop("conversion", None)
                crds.append(doc)
    return crds


def install(cluster: KubeCluster, crds: list[dict[str, t.Any]], *, timeout: float = 60.0) -> None:
    """Apply `crds` and wait until the API server has established every one."""
    for crd in crds:
        cluster.apply(crd, manager="kueue-gitops-sandbox")
    wanted = {c["metadata"]["name"] for c in crds}

    def established() -> bool:
        return wanted <= {
            c["metadata"]["name"]
            for c in cluster.list(CRD_API, "CustomResourceDefinition")
            if conditions.is_true(c, "Established")
        }

    deadline = time.monotonic() + timeout
    services.wait_until(f"CRDs {', '.join(sorted(wanted))} established", deadline, established, [])
    # Established is not yet served: discovery of a new group version lags the condition a
    # little, and a client that asks in between is told the kind does not exist.
    paths = {
        f"/apis/{crd['spec']['group']}/{version['name']}": crd["spec"]["names"]["plural"]
        for crd in crds
        for version in crd["spec"].get("versions") or []
        if version.get("served", True)
    }

    def discovered() -> bool:
        for path, plural in paths.items():
            try:
                listed = cluster.request("GET", path, what=f"discovery of {path}")
            except ClusterAccessError:
                return False
            if plural not in {r.get("name") for r in listed.get("resources") or []}:
                return False
        return True

    services.wait_until(f"CRDs {', '.join(sorted(wanted))} in discovery", deadline, discovered, [])
