"""Argo CD leaves Kueue the fields Kueue writes: a self-healing Application and Kueue's manager
quota automation must not fight over a manager ClusterQueue's quota.

Where Kueue writes a manager ClusterQueue's quota (MultiKueue `quotaManagement: Automated` with
its gate on: auditor/kueue/multikueue.py), the repository's nominalQuota is a placeholder. An
ApplicationSet (argocd/) whose Applications self-heal the queue's cluster folder must ignore
what Kueue's field manager wrote on it and respect that on sync (auditor/repo/argocd.py says
what counts; without argocd/ every Application is taken to heal); `kueue-gitops generate
argocd` writes the entry.

Its rule, with an example that passes and one that fails, is declared beside it in
self_heal.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.kueue import multikueue
from auditor.model import Finding
from auditor.repo import argocd
from auditor.validate.checks import protocol
from auditor.validate.checks._common import kueue_configuration, kueue_release, named

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
FIGHTS_KUEUE = RULES["self-heal-fights-kueue"]

ID = "self-heal"
RERUN = protocol.CLUSTER


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    owned = multikueue.automated(
        (r.body for r in ctx.of_kind(*multikueue.KINDS)),
        kueue_configuration(ctx),
        kueue_release(ctx),
    )
    if not owned:
        return
    syncing = [a for a in argocd.app_sets(ctx.repo) if a.makes(_folder(ctx))]
    for name, queue in sorted(named(ctx, "ClusterQueue").items()):
        if name not in owned:
            continue
        fighting = [a for a in syncing if a.heals and not a.leaves_kueue(name)]
        if syncing and not fighting:
            continue
        who = (
            ", ".join(f"ApplicationSet {a.name} ({a.file})" for a in fighting) + " self-heals it"
            if fighting
            else "no ApplicationSet in argocd/ says the Application syncing it does not heal it"
        )
        yield Finding.about(
            queue,
            FIGHTS_KUEUE,
            f"Kueue writes ClusterQueue {name}'s quota (MultiKueue quota automation), but {who} "
            f"without leaving Kueue what its field manager ({multikueue.FIELD_MANAGER}) wrote: "
            "Argo CD puts the placeholder quota back, "
            "Kueue sums the workers again, and the two fight over it; add the ignoreDifferences "
            "entry and RespectIgnoreDifferences=true that `kueue-gitops generate argocd` writes",
            path=("spec", "resourceGroups"),
        )


def _folder(ctx: CheckContext) -> str:
    return f"clusters/{ctx.cluster.name}"
