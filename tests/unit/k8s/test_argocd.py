"""Which Argo CD release a repo-server Deployment runs, as installs write it."""

from __future__ import annotations

import typing as t

import pytest

from auditor.k8s import argocd


def repo_server(*images: str, labels: dict[str, str] | None = None) -> dict[str, t.Any]:
    containers = [{"name": "argocd-repo-server", "image": images[0]}]
    containers += [{"name": f"sidecar-{i}", "image": image} for i, image in enumerate(images[1:])]
    return {
        "metadata": {"labels": {argocd.NAME_LABEL: argocd.REPO_SERVER, **(labels or {})}},
        "spec": {"template": {"spec": {"containers": containers}}},
    }


DIGEST = "quay.io/argoproj/argocd@sha256:0f1e"


@pytest.mark.parametrize(
    ("deployment", "release"),
    [
        (repo_server("quay.io/argoproj/argocd:v3.5.7"), "v3.5.7"),  # upstream's install.yaml
        (repo_server("registry.corp.example:5000/mirror/argocd:v3.4.14@sha256:0f1e"), "v3.4.14"),
        (repo_server("ghcr.io/acme/argocd:3.6.0-rc2"), "v3.6.0-rc2"),
        # a digest alone: the Helm chart's version label names it
        (repo_server(DIGEST, labels={argocd.VERSION_LABEL: "v3.3.19"}), "v3.3.19"),
        (repo_server(DIGEST, labels={argocd.VERSION_LABEL: "3.3.19"}), "v3.3.19"),
        (repo_server(DIGEST), None),
        (repo_server("quay.io/argoproj/argocd:latest"), None),
        # a plugin sidecar's image names no Argo CD release
        (repo_server("quay.io/argoproj/argocd:v3.5.7", "example/cmp-plugin:v1.2.3"), "v3.5.7"),
        ({"metadata": {}, "spec": None}, None),
    ],
)  # fmt: skip
def test_the_release_is_the_argocd_images_tag_else_the_version_label(
    deployment: dict[str, t.Any], release: str | None
) -> None:
    assert argocd.release(deployment) == release
