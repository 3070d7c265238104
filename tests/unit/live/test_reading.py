"""Reading a kind again in the version a cluster serves it in (auditor/live/reading.py)."""

from __future__ import annotations

import typing as t

from auditor.live.apierrors import KindNotServed
from auditor.live.kube import KubeCluster
from auditor.live.reading import read, read_instead

COHORT = {"apiVersion": "kueue.x-k8s.io/v1alpha1", "kind": "Cohort", "metadata": {"name": "r"}}


class V091:
    """Kueue v0.9.1's API, as far as Cohorts go: v1alpha1 only."""

    def list(self, api: str, kind: str) -> list[dict[str, t.Any]]:
        if api != "kueue.x-k8s.io/v1alpha1":
            raise KindNotServed(f"{api} {kind} is not served")
        return [COHORT]


def test_a_kind_not_served_is_read_in_the_version_given() -> None:
    cluster = t.cast(KubeCluster, V091())
    live = read(cluster, [("kueue.x-k8s.io/v1beta1", "Cohort")])
    assert "Cohort" in live.not_served and not live.objects

    read_instead(cluster, live, [("kueue.x-k8s.io/v1alpha1", "Cohort")])
    assert "Cohort" not in live.not_served and "Cohort" in live.read
    assert list(live.objects.values()) == [COHORT]


def test_a_kind_served_in_neither_stays_not_served() -> None:
    cluster = t.cast(KubeCluster, V091())
    live = read(cluster, [("kueue.x-k8s.io/v1beta1", "Cohort")])
    read_instead(cluster, live, [("kueue.x-k8s.io/v1beta2", "Cohort")])
    assert "v1beta2 Cohort is not served" in live.not_served["Cohort"] and not live.objects


def test_a_kind_read_already_is_not_read_again() -> None:
    cluster = t.cast(KubeCluster, V091())
    live = read(cluster, [("kueue.x-k8s.io/v1alpha1", "Cohort")])
    read_instead(cluster, live, [("kueue.x-k8s.io/v1beta2", "Cohort")])
    assert "Cohort" not in live.not_served and list(live.objects.values()) == [COHORT]
