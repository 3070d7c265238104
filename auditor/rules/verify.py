"""Rules of `verify`: probe Jobs on a live cluster disagree with the repository
(auditor/verify/)."""

from __future__ import annotations

from auditor.rules.rule import Rule, rule, said

FIX = """`verify` submits small probe Jobs through scratch namespaces on a cluster whose profile
allows it, and reports the Workload conditions it saw. A failed check means the live Kueue does
not admit work the way the repository means it to: compare its ClusterQueues with the repository
(`kueue-gitops drift`), and read the Workloads in `verify -o json`."""


BOUNDARY_FIX = """The tenant boundaries are held by the API server (the admission policies that
`kueue-gitops generate policies` writes into clusters/<cluster>/admission-policies.yaml), by
Kueue (its Configuration in clusters/<cluster>/kueue/) and by RBAC. The probe acted as a member
of the tenant's group; a failure means the live cluster lacks what the repository declares:
`kueue-gitops drift` names the policy, binding or Configuration that differs; let Argo CD sync
it (and restart Kueue after a Configuration change)."""


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
        "unqueued-job-held",
        "admission",
        "Behind the queue-name policy, Kueue let a Job that names no LocalQueue run.",
        "In a scratch namespace labelled as team-a's (the policies leave verify's namespaces "
        "out), an unsuspended Job without a queue name is suspended by Kueue "
        "(`manageJobsWithoutQueueName: true`) and makes no Pod.",
        "The Job starts its Pod: Kueue's Configuration live does not manage it.",
    ),
    _check(
        "pod-placement",
        "flavor",
        "An admitted Job's Pods ran off the nodes of the flavor Kueue assigned, or never "
        "completed.",
        "A Job naming no node is assigned a100 and its Pod runs on an a100 node and succeeds.",
        "The Pod stays Pending: the flavor's tolerations do not match its nodes' taints.",
    ),
    _check(
        "victim-recovery",
        "preemption",
        "A preempted Job did not recover: not stopped, not re-admitted after the preemptor, or "
        "not completed exactly once.",
        "Each borrowing victim is stopped, re-admitted after the reclaiming Job finished, "
        "and completes with one succeeded Pod.",
        "A victim's Job counts two succeeded Pods: its first run was never stopped.",
    ),
    _check(
        "cleanup",
        "other",
        "Scratch namespaces of a verify run were not all deleted, or a stopPolicy not restored.",
        "Every scratch namespace is gone after the run and each stopPolicy is as before.",
        "A scratch namespace is still terminating after the timeout (a stuck finalizer).",
    ),
    *(
        rule(f"verify-{name}", "error", category, "verify", summary, BOUNDARY_FIX, said(p), said(f))
        for name, category, summary, p, f in (
            (
                "job-without-queue",
                "admission",
                "The API server accepted a tenant's Job that names no LocalQueue.",
                "Acting as team-a, a Job without kueue.x-k8s.io/queue-name is refused by the "
                "policy kueue-gitops-queue-name, which says which queues to use.",
                "It is accepted: the policy or its binding is missing live.",
            ),
            (
                "undeclared-queue",
                "admission",
                "A tenant's Job naming a LocalQueue the repository does not declare there was "
                "accepted.",
                "A Job naming a missing queue, or a queue made live into team-b's ClusterQueue, "
                "is refused.",
                "The Job naming the live-made queue is accepted: team-a could use team-b's quota.",
            ),
            (
                "unapproved-priority",
                "priority",
                "A tenant's Job with a priority level or pod PriorityClass it is not approved "
                "for was accepted.",
                "batch-critical and system-node-critical are refused for team-a, with the "
                "levels it may use.",
                "A Job labelled batch-critical is accepted: business priority becomes "
                "preemption authority.",
            ),
            (
                "approved-priority",
                "priority",
                "A tenant's Job with approved levels was refused or not admitted.",
                "A Job with batch-low and tenant-batch in LocalQueue batch is accepted and "
                "admitted.",
                "It is refused: the policy live is stricter than the profiles.",
            ),
            (
                "namespace-relabel",
                "label",
                "A tenant could relabel its namespace's admission or tenant label.",
                "Refused by RBAC, and, after a temporary RoleBinding grants patch on the "
                "namespace, still refused by kueue-gitops-namespace-labels.",
                "With patch granted, the tenant label changes: only RBAC held the boundary.",
            ),
            (
                "platform-objects",
                "rbac",
                "A tenant may create or patch quota or priority objects.",
                "team-a is forbidden to create ClusterQueues, ResourceFlavors, Cohorts and "
                "priority classes, and to patch its ClusterQueue.",
                "team-a may patch team-a-cq: a live RoleBinding grants it.",
            ),
            (
                "boundary-cleanup",
                "other",
                "A boundary probe left objects behind in the tenant's namespace.",
                "The probe Jobs, LocalQueue, Role and RoleBinding are gone.",
                "The temporary RoleBinding is still there (the run was killed).",
            ),
        )
    ),
)
