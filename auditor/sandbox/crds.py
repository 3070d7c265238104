"""Install CustomResourceDefinitions into a sandbox and wait until they are served."""

from __future__ import annotations

import time
import typing as t
from pathlib import Path

import yaml

from auditor.errors import SandboxError
from auditor.k8s.objects import CRD_API

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
    for crd in crds:
        cluster.apply(crd, manager="kueue-gitops-sandbox")
    wanted = {c["metadata"]["name"] for c in crds}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        established = {
            c["metadata"]["name"]
            for c in cluster.list(CRD_API, "CustomResourceDefinition")
            if any(
                cond.get("type") == "Established" and cond.get("status") == "True"
                for cond in (c.get("status") or {}).get("conditions") or []
            )
        }
        if wanted <= established:
            return
        time.sleep(0.2)
    raise SandboxError(
        f"CRDs not established within {timeout:.0f}s: {', '.join(sorted(wanted - established))}"
    )
