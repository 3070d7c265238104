"""The Argo CD release a cluster runs, read live: its repo-server's Deployment, found by its
label in any namespace (auditor/k8s/argocd.py says what in it names the release). Unknown, with
why, where none is found (Argo CD may run in another cluster, or as something else), the read
is refused or fails, or the repo-servers found run different releases: never guessed.
import records it in the cluster's profile; drift holds the profile to it."""

from __future__ import annotations

from dataclasses import dataclass

from auditor.errors import ClusterAccessError
from auditor.k8s import argocd
from auditor.live.kube import KubeCluster


@dataclass(frozen=True)
class Running:
    """The release read (None: unknown), and where it was read or why it is unknown."""

    version: str | None
    said: str


def running(cluster: KubeCluster) -> Running:
    """The Argo CD release `cluster` runs, as its repo-server's Deployment names it."""
    try:
        found = cluster.list("apps/v1", "Deployment", selector=argocd.SELECTOR)
    except ClusterAccessError as exc:
        return Running(None, f"Argo CD's repo-server Deployment could not be read: {exc}")
    if not found:
        return Running(
            None,
            f"no Deployment labelled {argocd.SELECTOR} runs there (Argo CD runs in another "
            "cluster, or in another shape)",
        )
    releases = {_named(d): argocd.release(d) for d in found}
    known = set(releases.values()) - {None}
    if len(known) == 1 and None not in releases.values():
        return Running(known.pop(), f"the image of {', '.join(sorted(releases))}")
    said = ", ".join(f"{d} runs {v or 'an image naming no release'}" for d, v in releases.items())
    return Running(None, f"which Argo CD release runs is not known: {said}")


def _named(deployment: dict[str, object]) -> str:
    meta = deployment.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return f"Deployment {meta.get('namespace')}/{meta.get('name')}"
