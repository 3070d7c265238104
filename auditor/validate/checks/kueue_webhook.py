"""Kueue's validating webhooks, offline: what the pinned Kueue refuses beyond its CRDs.

The rules are auditor.kueue.webhooks', held to what the cluster's Kueue release refuses (its
own webhook code judged each rule's examples: auditor/kueue/api/<release>.json); the webhooks'
remaining rules are the quotas check's, listed in MIRRORED. Each finding is at the field the
webhook names, with its reason, so a pull request fails before Argo CD's sync does.
tests/integration/test_webhook_agreement.py holds these verdicts to Kueue's own, on a sandbox
running its webhooks.

Its rules, with an example that passes and one that fails each, are in the catalogue:
auditor/rules/webhook.py (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor.kueue import release, webhooks
from auditor.model import Finding
from auditor.validate.checks._common import KUEUE

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

ID = "kueue-webhook"
RULES = webhooks.OWN
CATEGORY = {"namespace-selector-invalid": "label"} | {
    r: "flavor" for r in ("flavor-labels-invalid", "flavor-taint-repeated")
}
# The quotas check's rules that are Kueue's webhook rules too: with RULES, every refusal.
MIRRORED = webhooks.MIRRORED


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    known = release.nearest_release(ctx.cluster.kueue_version)
    for resource in ctx.of_kind(*webhooks.KINDS):
        if resource.key.group != KUEUE:
            continue
        for found in webhooks.violations(resource.body, known):
            yield Finding.about(
                resource,
                found.rule,
                f"Kueue {known.version}'s webhook refuses this {resource.kind}: {found.message}",
                CATEGORY.get(found.rule, "quota"),
                path=found.path,
            )
