"""Quota cells of ClusterQueues and Cohorts, with the path each finding would point at."""

from __future__ import annotations

import typing as t

import yaml

from auditor.k8s.quantity import ZERO, parse
from auditor.kueue import quota

Json = dict[str, t.Any]

CLUSTER_QUEUE: Json = yaml.safe_load(
    """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a-cq}
spec:
  cohortName: ai-shared
  resourceGroups:
    - coveredResources: [cpu, memory]
      flavors:
        - name: cpu-only
          resources:
            - {name: cpu, nominalQuota: "64"}
            - {name: memory, nominalQuota: 256Gi, borrowingLimit: 64Gi}
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: a100
          resources:
            - {name: nvidia.com/gpu, nominalQuota: "8", lendingLimit: "4"}
        - name: h100
          resources:
            - {name: nvidia.com/gpu, nominalQuota: "2", lendingLimit: "6"}
status:
  flavorsReservation:
    - name: a100
      resources:
        - {name: nvidia.com/gpu, total: "10", borrowed: "2"}
  flavorsUsage:
    - name: a100
      resources:
        - {name: nvidia.com/gpu, total: "6", borrowed: "0"}
"""
)


def test_every_cell_in_order_with_its_path_and_fields() -> None:
    found = [(c.flavor, c.resource, c.path) for c in quota.cells(CLUSTER_QUEUE)]
    groups = ("spec", "resourceGroups")
    assert found == [
        ("cpu-only", "cpu", (*groups, 0, "flavors", 0, "resources", 0)),
        ("cpu-only", "memory", (*groups, 0, "flavors", 0, "resources", 1)),
        ("a100", "nvidia.com/gpu", (*groups, 1, "flavors", 0, "resources", 0)),
        ("h100", "nvidia.com/gpu", (*groups, 1, "flavors", 1, "resources", 0)),
    ]
    memory = quota.table(CLUSTER_QUEUE)[("cpu-only", "memory")]
    assert memory.fields == {"name": "memory", "nominalQuota": "256Gi", "borrowingLimit": "64Gi"}
    assert memory.shown == "spec.resourceGroups[0].flavors[cpu-only].resources[memory]"


def test_quantities_are_the_set_fields_parsed() -> None:
    memory = quota.cell_of(CLUSTER_QUEUE, "cpu-only", "memory")
    assert memory is not None
    assert memory.quantities() == {
        "nominalQuota": parse("256Gi"),
        "borrowingLimit": parse("64Gi"),
    }
    assert memory.quantity("lendingLimit") is None
    assert quota.cell_of(CLUSTER_QUEUE, "cpu-only", "nvidia.com/gpu") is None


def test_a_value_that_is_no_quantity_reads_as_unset() -> None:
    entry = {"name": "cpu", "nominalQuota": "lots"}
    cq = {"spec": {"resourceGroups": [{"flavors": [{"name": "a", "resources": [entry]}]}]}}
    [cell] = quota.cells(cq)
    assert cell.fields["nominalQuota"] == "lots"
    assert cell.quantity("nominalQuota") is None
    assert cell.quantities() == {}


def test_a_malformed_spec_yields_what_is_a_cell_and_skips_the_rest() -> None:
    cq = {
        "spec": {
            "resourceGroups": [
                "not a group",
                {"coveredResources": "cpu", "flavors": [7, {"name": "a", "resources": [None]}]},
                {"flavors": [{"name": "b", "resources": [{"name": "cpu", "nominalQuota": 2}]}]},
            ]
        }
    }
    assert [g.covered for g in quota.resource_groups(cq)] == [[], []]
    assert [(c.cell, c.path[2]) for c in quota.cells(cq)] == [(("b", "cpu"), 2)]
    assert list(quota.cells({"spec": None})) == []
    assert list(quota.cells({})) == []


def test_a_cluster_queue_lends_at_most_its_lending_limit_and_never_more_than_its_nominal() -> None:
    table = quota.table(CLUSTER_QUEUE)
    assert table[("a100", "nvidia.com/gpu")].lendable("ClusterQueue") == parse("4")
    assert table[("h100", "nvidia.com/gpu")].lendable("ClusterQueue") == parse("2")
    assert table[("cpu-only", "cpu")].lendable("ClusterQueue") == parse("64")
    # A Cohort's own quota is a pool for its members: all of it lends.
    assert table[("a100", "nvidia.com/gpu")].lendable("Cohort") == parse("8")


def test_usage_cells_read_total_and_borrowed_of_either_status_list() -> None:
    gpu = ("a100", "nvidia.com/gpu")
    assert quota.used(CLUSTER_QUEUE, gpu) == parse("10")
    assert quota.used(CLUSTER_QUEUE, gpu, key="borrowed") == parse("2")
    assert quota.used(CLUSTER_QUEUE, gpu, quota.USAGE) == parse("6")
    assert quota.used(CLUSTER_QUEUE, ("h100", "nvidia.com/gpu")) == ZERO
    [cell] = quota.usage_cells(CLUSTER_QUEUE, quota.USAGE)
    assert cell.path == ("status", "flavorsUsage", 0, "resources", 0)
    assert quota.used({"status": {}}, gpu) == ZERO
