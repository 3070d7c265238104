"""Rules of `verify`: probe Jobs on a live cluster disagree with the repository
(auditor/verify/)."""

from __future__ import annotations

from auditor.rules.rule import Rule, rule, said

FIX = """`verify` submits small probe Jobs through scratch namespaces on a cluster whose profile
allows it, and reports the Workload conditions it saw. A failed check means the live Kueue does
not admit work the way the repository means it to: compare its ClusterQueues with the repository
(`kueue-gitops drift`), and read the Workloads in `verify -o json`."""


def _check(name: str, category: str, summary: str, passes: str, fails: str) -> Rule:
    return rule(
        f"verify-{name}", "error", category, "verify", summary, FIX, said(passes), said(fails)
    )


RULES = (
    _check(
        "nominal-quota",
        "quota",
        "Jobs within a ClusterQueue's nominal quota were not all admitted, or borrowed.",
        "Every probe Job within team-a-cq's nominal quota is admitted without borrowing.",
        "Only 2 of 4 probe Jobs within the nominal quota are admitted: the live quota is lower.",
    ),
    _check(
        "borrowing-limit",
        "quota",
        "Borrowing did not stop at the borrowingLimit (or at what the cohort can lend).",
        "Jobs needing borrowing are admitted up to the borrowingLimit; the next stays pending.",
        "A Job beyond the borrowingLimit is admitted: the live limit was removed.",
    ),
    _check(
        "preemption",
        "preemption",
        "A higher-priority Job did not preempt as the ClusterQueue's policies say.",
        "The high-priority probe is admitted; each victim has lower priority and says why.",
        "The high-priority probe stays pending: preemption is Never live.",
    ),
    _check(
        "unlabelled-namespace",
        "label",
        "A Job from a namespace without the admission label was admitted.",
        "The probe from the unlabelled scratch namespace is never admitted nor creates a Pod.",
        "It is admitted: a live ClusterQueue's namespaceSelector is `{}`.",
    ),
    _check(
        "stop-policy-hold",
        "stop-policy",
        "`stopPolicy: Hold` did not hold new work, kept nothing running, or resuming failed.",
        "Under Hold the admitted Workload keeps running, a new one waits, and resuming admits it.",
        "A new Workload is admitted while team-a-cq is held.",
    ),
    _check(
        "cleanup",
        "other",
        "Scratch namespaces of a verify run were not all deleted, or a stopPolicy not restored.",
        "Every scratch namespace is gone after the run and each stopPolicy is as before.",
        "A scratch namespace is still terminating after the timeout (a stuck finalizer).",
    ),
)
