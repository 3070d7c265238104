"""Drift between the node pools and the quota: the repository's flavors and queues against the
cluster's live Nodes (auditor.kueue.capacity says which nodes a flavor selects)."""

from __future__ import annotations

from auditor import rules
from auditor.k8s.objects import Json
from auditor.kueue import capacity
from auditor.kueue.quota import QUOTA_KINDS
from auditor.model import Finding, Resource
from auditor.repo.profiles import ClusterProfile

_RULES = rules.of(__name__)
DRIFT_CAPACITY = _RULES["drift-capacity"]


def drift(profile: ClusterProfile, desired: list[Resource], nodes: list[Json]) -> list[Finding]:
    """A finding per repository flavor with no Ready node, or with less than its quota.

    A cluster without any Node (a bare control plane) has no pools to compare: nothing is said.
    """
    if not nodes:
        return []
    flavors = {r.name: r for r in desired if r.kind == "ResourceFlavor"}
    holders = [r.body for r in desired if r.kind in QUOTA_KINDS]
    findings = []
    for gap in capacity.gaps([r.body for r in flavors.values()], nodes, holders):
        resource = flavors[gap.flavor]
        findings.append(
            Finding.about(
                resource,
                DRIFT_CAPACITY,
                gap.message,
                path=("spec", "nodeLabels"),
                cluster=profile.name,
                change="modified" if gap.resource else "missing",
                desired=str(gap.promised) if gap.resource else capacity.node_labels(resource.body),
                live=str(gap.held) if gap.resource else [],
                extra={"resource": gap.resource, "nodes": gap.nodes},
            )
        )
    return findings
