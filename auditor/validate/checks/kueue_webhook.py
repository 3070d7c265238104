"""Kueue's validating webhooks, offline: what the pinned Kueue refuses beyond its CRDs.

The rules are auditor.kueue.webhooks', held to what the cluster's Kueue release refuses (its
own webhook code judged each rule's examples: auditor/kueue/api/<release>.json); the webhooks'
remaining rules are the quotas check's, listed in MIRRORED. Each finding is at the field the
webhook names, with its reason, so a pull request fails before Argo CD's sync does.
tests/integration/test_webhook_agreement.py holds these verdicts to Kueue's own, on a sandbox
running its webhooks.

Its rules, each with an example that passes and one that fails, are declared beside the
webhooks' model, in auditor/kueue/webhooks.rules.yaml (`kueue-gitops explain RULE`,
docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.kueue import release, webhooks
from auditor.model import Finding
from auditor.validate.checks import protocol
from auditor.validate.checks._common import KUEUE

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

ID = "kueue-webhook"
# Its findings about an object depend on it alone and the profile (protocol.Rerun).
RERUN = protocol.PER_OBJECT
RULES = webhooks.RULES  # declared beside auditor/kueue/webhooks.py, which finds them
# The quotas check's rules that are Kueue's webhook rules too (the webhooks' model names them):
# with RULES, every refusal. Read from its declarations: the check modules import none of each
# other (an import-linter contract).
MIRRORED = tuple(rules.of("auditor.validate.checks.quotas")[rule] for rule in webhooks.MIRRORED)


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    known = release.nearest_release(ctx.cluster.kueue_version)
    for resource in ctx.of_kind(*webhooks.KINDS):
        if resource.key.group != KUEUE:
            continue
        for found in webhooks.violations(resource.body, known):
            message = found.message
            if found.rule is not webhooks.CHECK_FLAVOR_IGNORED:  # the others are refusals
                message = f"Kueue {known.version}'s webhook refuses this {resource.kind}: {message}"
            yield Finding.about(resource, found.rule, message, path=found.path)
