"""Drift names the Argo CD Application tracking a drifted object, and whether Argo CD heals it."""

from __future__ import annotations

import dataclasses
import typing as t

from auditor import rules
from auditor.drift import argocd
from auditor.k8s.objects import ResourceKey
from auditor.live.argocd import Running
from auditor.model import Finding
from tests.unit.drift.objects import PROFILE

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


# --- the Argo CD release the profile names against the one running ---------------------------


def test_a_profile_naming_another_argo_cd_release_than_runs_is_a_warning_at_it() -> None:
    profile = dataclasses.replace(PROFILE, argocd_version="v3.4.14")
    running = Running("v3.6.2", "the image of Deployment argocd/argocd-repo-server")
    [found] = argocd.release_drift(profile, running)
    assert (found.rule.id, str(found.severity), found.cluster, found.file) == (
        "argocd-version-differs", "warning", "c", "clusters/c/profile.yaml"
    )  # fmt: skip
    assert found.message == (
        "cluster c runs Argo CD v3.6.2 (the image of Deployment argocd/argocd-repo-server), but "
        "its profile's argocd.version is v3.4.14: its folders are rendered with kustomize "
        "v5.8.1 where it runs v5.8.3 and helm v3.19.4 where it runs v4.3.2. Set "
        "argocd.version: v3.6.2 in clusters/c/profile.yaml"
    )
    assert argocd.release_drift(profile, Running("v3.4.14", "")) == []
    assert argocd.release_drift(profile, Running(None, "no Deployment")) == []
    assert argocd.release_drift(profile, None) == []  # not read (the cluster stopped answering)


def test_a_profile_naming_none_is_held_to_the_pinned_release() -> None:
    assert argocd.release_drift(PROFILE, Running("v3.5.7", "")) == []  # the pinned one
    [found] = argocd.release_drift(PROFILE, Running("v3.5.0", "its image"))
    assert "names no argocd.version, so the pinned Argo CD v3.5.7 is assumed" in found.message
    assert "both run the same kustomize and helm, so the renders are the same" in found.message


def test_an_unread_release_is_a_note_naming_what_the_profile_says() -> None:
    said = argocd.release_unread(PROFILE, Running(None, "no Deployment labelled X runs"))
    assert said == (
        "its Argo CD release is not checked (no Deployment labelled X runs); its profile's is "
        "none: the pinned v3.5.7 is assumed"
    )
