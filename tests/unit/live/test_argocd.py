"""The Argo CD release a cluster runs, read through the reader's interface (a fake of it):
known from one repo-server, else unknown with why, never guessed."""

from __future__ import annotations

import typing as t

from auditor.errors import ClusterAccessError
from auditor.live import argocd
from auditor.live.apierrors import Forbidden
from auditor.live.kube import KubeCluster


class Holding:
    """A cluster holding these Deployments (or refusing the LIST)."""

    name = "gpu-a"

    def __init__(self, *deployments: dict[str, t.Any], refuse: Exception | None = None) -> None:
        self.deployments, self.refuse = list(deployments), refuse
        self.asked: list[tuple[str, str, str]] = []

    def list(self, api: str, kind: str, selector: str = "") -> list[dict[str, t.Any]]:
        self.asked.append((api, kind, selector))
        if self.refuse is not None:
            raise self.refuse
        return self.deployments


def deployment(namespace: str, image: str) -> dict[str, t.Any]:
    pod = {"containers": [{"name": "argocd-repo-server", "image": image}]}
    meta = {"name": "argocd-repo-server", "namespace": namespace}
    return {"metadata": meta, "spec": {"template": {"spec": pod}}}


def running(cluster: Holding) -> argocd.Running:
    return argocd.running(t.cast(KubeCluster, cluster))


def test_one_repo_server_names_the_release_found_by_its_label_in_any_namespace() -> None:
    cluster = Holding(deployment("gitops", "quay.io/argoproj/argocd:v3.4.14"))
    assert running(cluster) == argocd.Running(
        "v3.4.14", "the image of Deployment gitops/argocd-repo-server"
    )
    assert cluster.asked == [("apps/v1", "Deployment", "app.kubernetes.io/name=argocd-repo-server")]


def test_what_cannot_be_known_is_said_never_guessed() -> None:
    none = running(Holding())
    assert none.version is None
    assert none.said.startswith("no Deployment labelled app.kubernetes.io/name=argocd-repo-server")
    refused = running(Holding(refuse=Forbidden("LIST Deployment forbidden (403)")))
    assert (
        refused.version is None and "could not be read: LIST Deployment forbidden" in refused.said
    )
    down = running(Holding(refuse=ClusterAccessError("cluster gpu-a is unreachable")))
    assert down.version is None and "unreachable" in down.said
    two = running(
        Holding(
            deployment("argocd", "quay.io/argoproj/argocd:v3.5.7"),
            deployment("argocd-next", "quay.io/argoproj/argocd:v3.6.2"),
        )
    )
    assert two == argocd.Running(
        None,
        "which Argo CD release runs is not known: Deployment argocd/argocd-repo-server runs "
        "v3.5.7, Deployment argocd-next/argocd-repo-server runs v3.6.2",
    )
    digest = running(Holding(deployment("argocd", "quay.io/argoproj/argocd@sha256:0f1e")))
    assert digest.version is None and "an image naming no release" in digest.said
