"""Repo and live objects for the drift engine's unit tests."""

from __future__ import annotations

import typing as t

from auditor.drift import reading
from auditor.repo.profiles import ClusterProfile

PROFILE = ClusterProfile(
    name="c",
    file="clusters/c/profile.yaml",
    context="c",
    owners=(),
    kueue_api_versions=("v1beta2",),
    admission_label=("platform.example.com/kueue", "enabled"),
    tenant_label=None,
    capacity={},
    trusted_subjects=("User kueue-controller-manager",),
)
RBAC = "rbac.authorization.k8s.io/v1"


def obj(api_version: str, kind: str, name: str, **extra: t.Any) -> dict[str, t.Any]:
    meta = {"name": name, **extra.pop("meta", {})}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **extra}


def live_of(*objects: dict[str, t.Any], unread: tuple[str, ...] = ()) -> reading.Live:
    live = reading.Live()
    live.read = {k for _, k in reading.kinds_to_read(PROFILE, [])} - set(unread)
    for o in objects:
        live.objects[reading.key_of(o)] = o
    return live
