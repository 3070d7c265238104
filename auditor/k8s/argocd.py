"""Which Argo CD release an installation runs, as its objects say it. No I/O.

The repo-server is the daemon that runs kustomize and helm, so its release is the one that picks
them (auditor/render/tools.py). Upstream's install.yaml and the Argo Helm chart both make it a
Deployment labelled app.kubernetes.io/name=argocd-repo-server whose container runs the argocd
image, tagged with the release (quay.io/argoproj/argocd:v3.5.7; a mirror keeps the tag); the
chart also labels it app.kubernetes.io/version. An image pinned by digest alone, with no such
label, names no release.
"""

from __future__ import annotations

import re

from auditor.k8s.objects import Json

REPO_SERVER = "argocd-repo-server"
NAME_LABEL = "app.kubernetes.io/name"
VERSION_LABEL = "app.kubernetes.io/version"
SELECTOR = f"{NAME_LABEL}={REPO_SERVER}"  # the label selector that finds a repo-server
_RELEASE = re.compile(r"v?(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)")


def release(deployment: Json) -> str | None:
    """The Argo CD release a repo-server Deployment runs (`v3.5.7`): its argocd image's tag,
    else its version label; None when neither names one."""
    pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    containers = [c for c in pod.get("containers") or [] if isinstance(c, dict)]
    # its own container first (upstream names it so), then any running an argocd image
    containers.sort(key=lambda c: c.get("name") != REPO_SERVER)
    for container in containers:
        image = str(container.get("image") or "")
        if "argocd" in image.rpartition("/")[2]:
            found = _tag(image)
            if found:
                return found
    labels = (deployment.get("metadata") or {}).get("labels") or {}
    return normal(str(labels.get(VERSION_LABEL) or ""))


def _tag(image: str) -> str | None:
    """The release an image reference's tag names (`registry/argoproj/argocd:v3.5.7@sha256:..`
    is v3.5.7); None for a digest alone or a tag such as `latest`."""
    name = image.split("@", 1)[0]
    _, colon, tag = name.rpartition(":")
    return normal(tag) if colon and "/" not in tag else None


def normal(text: str) -> str | None:
    """`3.5.7` or `v3.5.7` as `v3.5.7` (a suffix kept: `v3.6.0-rc2`); None if no release."""
    found = _RELEASE.fullmatch(text.strip())
    return f"v{found[1]}" if found else None
