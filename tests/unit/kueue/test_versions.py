"""The Kueue API version a cluster is spoken to in."""

from __future__ import annotations

import pytest

from auditor.kueue import versions
from tests.unit.conftest import cluster_profile


@pytest.mark.parametrize(
    ("listed", "served", "chosen"),
    [
        (["v1beta2"], None, "v1beta2"),
        (["v1beta1", "v1beta2"], None, "v1beta2"),  # the order listed does not matter
        (["v1alpha1", "v1beta1"], None, "v1beta1"),
        (["v1beta1", "v1beta2"], ["v1beta1"], "v1beta1"),  # only what the server serves
        (["v1beta2"], ["v1beta1"], "v1beta2"),  # nothing in common: the profile decides
        (["v1beta2", "v1"], None, "v1"),  # a stable version wins over any beta
        (["v2alpha1", "v1beta1"], None, "v1beta1"),
        (["v1beta10", "v1beta2"], None, "v1beta10"),  # numerically, not as text
    ],
)
def test_the_preferred_version_is_the_most_stable_then_the_newest(
    listed: list[str], served: list[str] | None, chosen: str
) -> None:
    assert versions.preferred(listed, served) == chosen


def test_no_version_listed_is_an_error() -> None:
    with pytest.raises(ValueError, match="no Kueue API version"):
        versions.preferred([])


def test_a_cluster_profile_names_the_api_version_to_use() -> None:
    profile = cluster_profile(kueue_api_versions=("v1beta1", "v1beta2"))
    assert profile.kueue_api == "kueue.x-k8s.io/v1beta2"
    assert versions.api_version(["v1beta1"]) == "kueue.x-k8s.io/v1beta1"


def test_to_try_puts_the_profiles_version_first_then_the_served_preferred_first() -> None:
    served = ["v1alpha1", "v1beta1", "v1beta2"]
    assert versions.to_try("kueue.x-k8s.io/v1beta1", served) == [
        "kueue.x-k8s.io/v1beta1",
        "kueue.x-k8s.io/v1beta2",
        "kueue.x-k8s.io/v1alpha1",
    ]
    assert versions.to_try("kueue.x-k8s.io/v1beta2", []) == ["kueue.x-k8s.io/v1beta2"]
