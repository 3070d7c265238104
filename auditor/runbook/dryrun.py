"""The runbook's order: resume only after a server-side dry-run of the cluster's folder passes.

Before admission is resumed, every object the repository syncs to the cluster (clusters/<c>/
and tenants/*/<c>/), as it will be once resumed, goes through the API server as a server-side
apply with dryRun=All: schemas, CEL, Kueue's webhooks and the admission policies all judge it,
and nothing is stored. A refusal means the corrected repository would not sync; resuming then
admits work against a configuration that is not the one reviewed.
"""

from __future__ import annotations

import copy
import dataclasses
import typing as t

from auditor.errors import AuditorError
from auditor.live.apply import apply_each
from auditor.model import Resource
from auditor.repo.layout import Repository

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster


class DryRunFailed(AuditorError):
    """The cluster's folder did not pass a server-side dry-run: `resume` refuses (exit 1)."""

    exit_code = 1


def resumed(resource: Resource, cluster_queue: str) -> Resource:
    """`resource` as it is once `cluster_queue` is resumed (its stopPolicy gone)."""
    if resource.kind != "ClusterQueue" or resource.name != cluster_queue:
        return resource
    body = copy.deepcopy(resource.body)
    (body.get("spec") or {}).pop("stopPolicy", None)
    return dataclasses.replace(resource, body=body)


def refusals(
    repo: Repository, cluster_queue: str, live: t.Mapping[str, KubeCluster]
) -> dict[str, list[str]]:
    """Per cluster, what its folder's dry-run refused (or could not read); empty: all passed."""
    loaded = repo.load(sorted(live))
    out: dict[str, list[str]] = {}
    for name, cluster in sorted(live.items()):
        problems = [
            f"{f.file}:{f.line}: {f.message}" for f in loaded.findings if f.cluster in (None, name)
        ]
        mine = [resumed(r, cluster_queue) for r in loaded.for_cluster(name)]
        for resource, refused in apply_each(cluster, mine, dry_run=True):
            if refused is not None:
                problems.append(f"{resource.key} ({resource.file}:{resource.line}): {refused}")
        if problems:
            out[name] = problems
    return out


def require_pass(repo: Repository, cluster_queue: str, live: t.Mapping[str, KubeCluster]) -> None:
    """Raise DryRunFailed unless every cluster's folder passes the dry-run."""
    found = refusals(repo, cluster_queue, live)
    if found:
        said = "; ".join(f"{name}: {'; '.join(p)}" for name, p in sorted(found.items()))
        raise DryRunFailed(
            f"not resuming {cluster_queue}: the server-side dry-run of the cluster's folder "
            f"failed ({said}). Correct the repository and resume again, or resume with --force "
            "(the commit message says so)"
        )
