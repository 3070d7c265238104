"""Drift names the Argo CD Application tracking a drifted object, and whether Argo CD heals it."""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.drift import argocd
from auditor.k8s.objects import ResourceKey
from auditor.model import Finding

CQ = ResourceKey("kueue.x-k8s.io", "ClusterQueue", None, "team-a-cq")


def app(name: str, sync: str, resources: list[dict[str, t.Any]], **automated: t.Any) -> t.Any:
    return {
        "apiVersion": argocd.API,
        "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        "spec": {"destination": {"name": "gpu-prod"}, "syncPolicy": {"automated": automated}},
        "status": {"sync": {"status": sync}, "resources": resources},
    }


def entry(status: str, **extra: t.Any) -> dict[str, t.Any]:
    return {"group": CQ.group, "kind": CQ.kind, "name": CQ.name, "status": status, **extra}


def live(tracking: str | None = None, label: str | None = None) -> dict[str, t.Any]:
    meta: dict[str, t.Any] = {"name": CQ.name}
    if tracking:
        meta["annotations"] = {argocd.TRACKING_ID: tracking}
    if label:
        meta["labels"] = {argocd.INSTANCE_LABEL: label}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": CQ.kind, "metadata": meta}


def finding() -> Finding:
    return Finding(
        rule=rules.get("drift-quota"),
        message="spec.resourceGroups[0]... is 24 live but 16 in the repo",
        cluster="gpu-prod",
        api_version="kueue.x-k8s.io/v1beta2",
        kind=CQ.kind,
        name=CQ.name,
        change="modified",
    )


def named(apps: list[t.Any], obj: dict[str, t.Any] | None) -> Finding:
    found = finding()
    argocd.name_applications(
        [found], {"gpu-prod": {CQ: obj} if obj else {}}, argocd.Applications(apps)
    )
    return found


def test_the_tracking_annotation_and_the_instance_label_name_the_application() -> None:
    assert argocd.tracked_by(live("gpu-prod-platform:kueue.x-k8s.io/ClusterQueue:/q")) == (
        "gpu-prod-platform"
    )
    assert argocd.tracked_by(live("apps_gpu-prod:kueue.x-k8s.io/ClusterQueue:/q")) == (
        "apps/gpu-prod"
    )
    assert argocd.tracked_by(live(label="gpu-prod-platform")) == "gpu-prod-platform"
    assert argocd.tracked_by(live()) is None


def test_an_out_of_sync_application_with_self_heal_will_put_it_back() -> None:
    apps = [app("gpu-prod-platform", "OutOfSync", [entry("OutOfSync")], selfHeal=True)]
    found = named(apps, live("gpu-prod-platform:kueue.x-k8s.io/ClusterQueue:/team-a-cq"))
    assert found.extra["argocd"] == {
        "application": "gpu-prod-platform",
        "syncStatus": "OutOfSync",
        "resourceStatus": "OutOfSync",
        "extraneous": False,
        "selfHeal": True,
        "heals": True,
    }
    assert found.message.endswith(
        "Argo CD Application gpu-prod-platform (OutOfSync) sees it: selfHeal is on, "
        "it will put it back"
    )


def test_a_synced_application_does_not_see_the_drift_and_will_not_heal_it() -> None:
    apps = [app("gpu-prod-platform", "Synced", [entry("Synced")], selfHeal=True)]
    found = named(apps, live("gpu-prod-platform:kueue.x-k8s.io/ClusterQueue:/team-a-cq"))
    assert found.extra["argocd"]["heals"] is False
    assert "(Synced) sees no difference in it: it will not heal this" in found.message


def test_an_object_removed_from_the_repo_is_extraneous_and_never_deleted() -> None:
    apps = [app("gpu-prod-platform", "OutOfSync",
                [entry("OutOfSync", requiresPruning=True)], selfHeal=True)]  # fmt: skip
    found = named(apps, live())  # found through the Application's status alone
    assert found.extra["argocd"]["extraneous"] is True
    assert "lists it as extraneous: it will not delete it" in found.message


def test_without_self_heal_the_next_sync_puts_it_back() -> None:
    apps = [app("gpu-prod-platform", "OutOfSync", [entry("OutOfSync")], prune=True)]
    found = named(apps, live(label="gpu-prod-platform"))
    assert "selfHeal is off, the next sync puts it back" in found.message


def test_a_tracked_object_whose_application_was_not_read_is_named_all_the_same() -> None:
    found = named([], live("gpu-prod-platform:kueue.x-k8s.io/ClusterQueue:/team-a-cq"))
    assert found.extra["argocd"]["syncStatus"] is None
    assert "Application gpu-prod-platform tracks it" in found.message


def test_an_object_no_application_tracks_is_left_as_it_is() -> None:
    found = named([app("other", "Synced", [])], live())
    assert "argocd" not in found.extra
    assert "Argo CD" not in found.message
