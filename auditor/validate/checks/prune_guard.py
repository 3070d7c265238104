"""Argo CD never deletes a queue, or an admitted namespace, because it left the repository.

A ClusterQueue, LocalQueue or admitted Namespace carries `argocd.argoproj.io/sync-options`
with `Prune=false` (removing it from Git does not delete it) and `Delete=false` (deleting its
Application does not either). `Prune=false` may be left out where the ApplicationSet that syncs
its folder (the folder it is rendered from) does not prune: those of argocd/, or wherever a
repository without that folder keeps its Argo CD objects; an object no ApplicationSet's git
directory generator reaches is taken to be pruned. A deleted LocalQueue strands its pending
Jobs, a deleted ClusterQueue evicts what it admitted.

Its rules, each with an example that passes and one that fails, are declared beside it in
prune_guard.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.model import Finding
from auditor.repo import argocd
from auditor.validate.checks import protocol
from auditor.validate.checks._common import KUEUE

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
PRUNE_UNGUARDED = RULES["prune-unguarded"]

ID = "prune-guard"
# Its findings about an object depend on it alone and the profiles (protocol.Rerun).
RERUN = protocol.PER_OBJECT
QUEUES = ("ClusterQueue", "LocalQueue")


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    app_sets = argocd.app_sets(ctx.repo)
    for resource in ctx.of_kind(*QUEUES, "Namespace"):
        if resource.kind in QUEUES and resource.key.group != KUEUE:
            continue
        labels = (resource.body.get("metadata") or {}).get("labels")
        if resource.kind == "Namespace" and not ctx.cluster.admits(labels):
            continue
        options = argocd.sync_options(resource)
        syncing = argocd.syncing(app_sets, resource)
        pruning = [a.name for a in syncing if a.prunes]
        missing = [
            option
            for option, needed in (("Prune", bool(pruning) or not syncing), ("Delete", True))
            if needed and options.get(option) != "false"
        ]
        if not missing:
            continue
        what = "admitted namespace" if resource.kind == "Namespace" else resource.kind
        who = (
            f"ApplicationSet {', '.join(pruning)} prunes its folder"
            if pruning
            else "its Application may be deleted"
            if syncing
            else "no ApplicationSet in argocd/ says its Application does not prune"
        )
        lost = "what it admitted" if resource.kind == "ClusterQueue" else "the Jobs pending in it"
        yield Finding.about(
            resource,
            PRUNE_UNGUARDED,
            f"{what} {resource.name} lacks {', '.join(o + '=false' for o in missing)} in "
            f"{argocd.SYNC_OPTIONS} ({who}): a sync could delete it, and with it {lost}; "
            f"annotate it {argocd.SYNC_OPTIONS}: Prune=false,Delete=false",
            path=["metadata", "annotations", argocd.SYNC_OPTIONS],
        )
