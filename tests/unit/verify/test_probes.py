"""How verify sizes its probe Jobs and reads Kueue's objects (no cluster; the cohort test fakes our
reader)."""

from __future__ import annotations

import typing as t

import pytest

from auditor.errors import ConfigError
from auditor.k8s import quantity
from auditor.verify import probes, readings
from auditor.verify.model import Probe
from auditor.verify.scratch import Scratch
from tests.unit.conftest import cluster_profile

Json = dict[str, t.Any]

A100 = {
    "nodeLabels": {"platform.example.com/pool": "gpu"},
    "nodeTaints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
}


def _cq(*resources: Json, flavor: str = "a100") -> Json:
    return {
        "metadata": {"name": "team-a-cq"},
        "spec": {
            "cohortName": "ai-shared",
            "resourceGroups": [
                {
                    "coveredResources": [r["name"] for r in resources],
                    "flavors": [
                        {
                            "name": "cpu-only",
                            "resources": [
                                {"name": r["name"], "nominalQuota": "0"} for r in resources
                            ],
                        },
                        {"name": flavor, "resources": list(resources)},
                    ],
                }
            ],
        },
        "status": {
            "flavorsReservation": [
                {
                    "name": flavor,
                    "resources": [{"name": "nvidia.com/gpu", "total": "6", "borrowed": "2"}],
                }
            ]
        },
    }


def _sized(cq: Json) -> Probe:
    return probes.probe_for(
        "gpu-staging", cq, {"a100": {"metadata": {"name": "a100"}, "spec": A100}}
    )


def test_the_resource_with_a_borrowing_limit_is_probed_one_whole_unit_a_job() -> None:
    cq = _cq(
        {"name": "cpu", "nominalQuota": "32"},
        {"name": "nvidia.com/gpu", "nominalQuota": "4", "borrowingLimit": "2"},
    )
    probe = _sized(cq)
    assert (probe.flavor, probe.resource, str(probe.unit)) == ("a100", "nvidia.com/gpu", "1")
    # Pinned to its flavor: the flavor's node labels, and tolerations of its taints.
    assert probe.node_selector == {"platform.example.com/pool": "gpu"}
    assert probe.tolerations == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


@pytest.mark.parametrize(
    ("nominal", "unit"),
    [("64", "16"), ("256Gi", "64Gi"), ("8", "1"), ("1500m", "375m")],
    ids=["large-count", "binary", "small-count", "milli"],
)
def test_a_large_or_fractional_quota_is_probed_in_quarters(nominal: str, unit: str) -> None:
    probe = _sized(_cq({"name": "memory", "nominalQuota": nominal}))
    assert str(probe.unit) == unit
    assert probe.units(quantity.parse(nominal)) == quantity.parse(nominal).value / probe.unit.value


def test_units_round_down() -> None:
    probe = Probe("a100", "nvidia.com/gpu", quantity.parse("2"), {}, [])
    assert probe.units(quantity.parse("5")) == 2
    assert probe.units(quantity.parse("-1")) == 0


def test_quota_usage_and_borrowing_are_read_by_flavor_and_resource() -> None:
    cq = _cq({"name": "nvidia.com/gpu", "nominalQuota": "4", "borrowingLimit": "2"})
    probe = Probe("a100", "nvidia.com/gpu", quantity.parse("1"), {}, [])
    assert readings.quota(cq, probe) == {
        "nominalQuota": quantity.parse("4"),
        "borrowingLimit": quantity.parse("2"),
    }
    assert readings.usage(cq, probe) == quantity.parse("6")
    assert readings.borrowed(cq, probe) == quantity.parse("2")
    assert (
        readings.quota(cq, Probe("h100", "nvidia.com/gpu", probe.unit, {}, []), missing_ok=True)
        == {}
    )


class ListingCluster:
    """Lists staging's cohort tree: team-b-cq beside team-a-cq, ai-shared under example-org."""

    def list(self, api_version: str, kind: str) -> list[Json]:
        def holder(kind: str, name: str, parent: Json, gpu: Json) -> Json:
            flavors = [{"name": "a100", "resources": [{"name": "nvidia.com/gpu", **gpu}]}]
            spec = {**parent, "resourceGroups": [{"flavors": flavors}]}
            return {"kind": kind, "metadata": {"name": name}, "spec": spec}

        if kind == "Cohort":
            return [
                holder("Cohort", "ai-shared", {"parentName": "example-org"}, {"nominalQuota": "0"}),
                holder("Cohort", "example-org", {}, {"nominalQuota": "1"}),
            ]
        team_b = {"nominalQuota": "3", "lendingLimit": "1"}
        return [
            {**_cq({"name": "nvidia.com/gpu", "nominalQuota": "4"}), "kind": "ClusterQueue"},
            holder("ClusterQueue", "team-b-cq", {"cohortName": "ai-shared"}, team_b),
        ]


def test_what_the_cohort_can_lend_comes_from_the_whole_tree() -> None:
    profile = cluster_profile(tenant_label="platform.example.com/tenant", verify_allowed=True)
    scratch = Scratch(t.cast(t.Any, ListingCluster()), profile, "run1", timeout=1.0)
    probe = Probe("a100", "nvidia.com/gpu", quantity.parse("1"), {}, [])
    # team-b lends 1, and the parent cohort's pool 1 more
    assert scratch.lendable(_cq(), probe) == ("example-org", quantity.parse("2"))
    alone = _cq()
    del alone["spec"]["cohortName"]
    assert scratch.lendable(alone, probe) is None


def test_the_low_and_high_priorities_are_the_extremes_and_equal_values_give_no_high() -> None:
    def cls(name: str, value: int) -> Json:
        return {"metadata": {"name": name}, "value": value}

    assert probes.priority_pair([cls("mid", 50), cls("high", 100), cls("low", 1)]) == (
        "low",
        "high",
    )
    assert probes.priority_pair([cls("a", 5), cls("b", 5)]) == ("a", None)
    assert probes.priority_pair([]) == (None, None)


def test_a_queue_without_nominal_quota_cannot_be_probed_and_says_which() -> None:
    cq = _cq({"name": "nvidia.com/gpu", "nominalQuota": "0"})
    with pytest.raises(ConfigError, match="gpu-staging: ClusterQueue team-a-cq has no nominal"):
        probes.probe_for("gpu-staging", cq, {})
