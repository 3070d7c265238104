"""Fair sharing as the cluster's Kueue release runs it: settings that do nothing, or worse.

Three combinations users keep reporting upstream, each judged against the Configuration the
repository gives the cluster's Kueue and the release its profile names:
- fair sharing with a ClusterQueue's `preemption.borrowWithinCohort`: unsupported together, the
  combination behind an infinite preemption loop (kubernetes-sigs/kueue#3779);
- a `fairSharing.weight` where it counts for nothing: a ClusterQueue's or Cohort's without fair
  sharing, a LocalQueue's without Admission Fair Sharing;
- Admission Fair Sharing whose `usageHalfLifeTime` is zero (its default), which empties the
  queues' recorded usage at every update (kubernetes-sigs/kueue#11134), so they are ordered as
  if it were off.

Its rules, each with an example that passes and one that fails, are declared beside it in
fair_sharing.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.kueue import config as kueue_config
from auditor.model import Finding
from auditor.repo import boundaries
from auditor.validate.checks import protocol
from auditor.validate.checks._common import KUEUE, kueue_configuration, kueue_release, spec_of
from auditor.validate.checks._embedded import Embedded

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
BORROW_WITHIN_COHORT = RULES["fair-sharing-borrow-within-cohort"]
WEIGHT_IGNORED = RULES["fair-sharing-weight-ignored"]
NO_DECAY = RULES["admission-fair-sharing-no-decay"]

ID = "fair-sharing"
RERUN = protocol.CLUSTER
WEIGHT = ("spec", "fairSharing", "weight")


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    config = kueue_configuration(ctx)
    if config is None:
        return  # kueue-config reports a missing or broken Configuration
    known = kueue_release(ctx)
    fair = kueue_config.fair_sharing(config)
    admission = kueue_config.admission_fair_sharing(config, known)
    for queue in ctx.of_kind("ClusterQueue", "Cohort", "LocalQueue"):
        if queue.key.group != KUEUE:
            continue
        spec = spec_of(queue)
        if fair and queue.kind == "ClusterQueue":
            policy = ((spec.get("preemption") or {}).get("borrowWithinCohort") or {}).get("policy")
            if policy not in (None, "Never"):
                yield Finding.about(
                    queue,
                    BORROW_WITHIN_COHORT,
                    f"borrowWithinCohort.policy is {policy} while the Configuration turns fair "
                    f"sharing on: Kueue {known.version} supports borrowWithinCohort with classical "
                    "preemption only, and the two together have looped preempting and "
                    "re-admitting (kubernetes-sigs/kueue#3779); drop borrowWithinCohort and let "
                    "fair sharing's reclaim decide",
                    path=("spec", "preemption", "borrowWithinCohort", "policy"),
                )
        if (spec.get("fairSharing") or {}).get("weight") is None:
            continue
        counts = admission is not None if queue.kind == "LocalQueue" else fair
        if not counts:
            yield Finding.about(
                queue,
                WEIGHT_IGNORED,
                f"{queue.kind} {queue.name} sets fairSharing.weight, which counts only with "
                + (
                    "Admission Fair Sharing (admissionFairSharing in the Configuration, and "
                    f"Kueue {known.version}'s AdmissionFairSharing gate)"
                    if queue.kind == "LocalQueue"
                    else "fair sharing (a fairSharing block in the Configuration)"
                )
                + ", which this cluster's Configuration leaves off: the weight changes nothing",
                path=WEIGHT,
            )
    if admission is not None:
        yield from _no_decay(ctx, admission)


def _no_decay(ctx: CheckContext, admission: dict[str, t.Any]) -> t.Iterator[Finding]:
    raw = admission.get("usageHalfLifeTime")
    half_life = 0.0 if raw is None else kueue_config.duration_seconds(raw)
    if half_life != 0.0:
        return  # a bad duration is the schema's (and Kueue's start-up's) to refuse
    found = boundaries.config_map(ctx.of_kind("ConfigMap"))
    assert found is not None  # the Configuration came from it
    embedded = Embedded(ctx, found, NO_DECAY)
    embedded.parse()
    said = "leaves usageHalfLifeTime out (0s)" if raw is None else f"sets usageHalfLifeTime: {raw}"
    yield embedded.finding(
        f"Admission Fair Sharing {said}: with a zero half-life Kueue empties every LocalQueue's "
        "consumedResources at each update, so no queue's past usage ever counts and admission "
        "is ordered as if Admission Fair Sharing were off (kubernetes-sigs/kueue#11134); set a "
        "half-life, e.g. usageHalfLifeTime: 168h",
        ("admissionFairSharing", "usageHalfLifeTime")
        if raw is not None
        else ("admissionFairSharing",),
        rule=NO_DECAY,
    )
