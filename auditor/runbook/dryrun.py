"""The runbook's order: resume only after a server-side dry-run of the cluster's folder passes.

Before admission is resumed, every object the repository syncs to the cluster (clusters/<c>/
and tenants/*/<c>/), as it will be once resumed, goes through the API server as a server-side
apply with dryRun=All: schemas, CEL, Kueue's webhooks and the admission policies all judge it,
and nothing is stored. A refusal means the corrected repository would not sync; resuming then
admits work against a configuration that is not the one reviewed. Each refusal is a finding of
the rule resume-dry-run-refused (rules.yaml beside this module) at the object's file and line.
"""

from __future__ import annotations

import dataclasses
import typing as t

from auditor import rules
from auditor.kueue import stop_policy
from auditor.live.apply import apply_each
from auditor.model import Finding, Resource
from auditor.repo.layout import Repository

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

RULES = rules.of(__name__)
REFUSED = RULES["resume-dry-run-refused"]


def resumed(resource: Resource, cluster_queue: str) -> Resource:
    """`resource` as it is once `cluster_queue` is resumed (its stopPolicy gone)."""
    if resource.kind != "ClusterQueue" or resource.name != cluster_queue:
        return resource
    return dataclasses.replace(resource, body=stop_policy.without(resource.body))


def refusals(
    repo: Repository, cluster_queue: str, live: t.Mapping[str, KubeCluster]
) -> list[Finding]:
    """What each cluster's folder, once `cluster_queue` is resumed, cannot become: the
    repository's own problems there, and each object the dry-run refused. Empty: all passed."""
    loaded = repo.load(sorted(live))
    out = [f for f in loaded.findings if f.cluster is None or f.cluster in live]
    for name, cluster in sorted(live.items()):
        mine = [resumed(r, cluster_queue) for r in loaded.for_cluster(name)]
        for resource, refused in apply_each(cluster, mine, dry_run=True):
            if refused is not None:
                out.append(
                    Finding.about(
                        resource,
                        REFUSED,
                        f"the API server of {name} refuses {resource.key} once {cluster_queue} "
                        f"is resumed: {refused}",
                        cluster=name,
                    )
                )
    return out
