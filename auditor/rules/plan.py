"""Rules of `plan`: what a change from base to head would break (auditor/plan/)."""

from __future__ import annotations

from auditor.rules.rule import rule, said

RULES = (
    rule(
        "plan-immutable-field",
        "error",
        "immutable",
        "plan",
        "A change edits a field the API server refuses to change on an existing object.",
        """LocalQueue `spec.clusterQueue`, AdmissionCheck `spec.controllerName`, Topology
        `spec.levels`, and a ResourceFlavor's `topologyName`, `nodeLabels` and `tolerations`
        once it has a topology, are immutable: the sync fails. Hold admission, then remove the
        object and add it anew in separate changes.""",
        said("A pull request adds a new LocalQueue pointing at team-a-cq."),
        said("A pull request changes LocalQueue batch's clusterQueue from team-a-cq to team-b-cq."),
    ),
    rule(
        "plan-quota-below-usage",
        "warning",
        "quota",
        "plan",
        "A nominalQuota cut goes below what a ClusterQueue or Cohort tree uses (`plan --live`).",
        """Running workloads are not stopped by a quota cut, but new work waits until usage
        falls below the new quota, and the queue's preemption policies may evict what runs.
        A Cohort's own quota is a pool lent to every queue below it: a cut that leaves the
        tree's pool below what its queues borrow exposes the borrowers' Workloads to
        reclamation. The message says how much is over and which admitted Workloads are
        exposed first.""",
        said("team-a-cq's a100 GPU quota goes from 16 to 12 while 8 GPUs are in use."),
        said("team-a-cq's a100 GPU quota goes from 16 to 4 while 8 GPUs are in use."),
    ),
    rule(
        "plan-removes-queue",
        "error",
        "deletion",
        "plan",
        "A change removes a ClusterQueue, a LocalQueue or an admitted Namespace.",
        """Argo CD deletes what a sync prunes: a LocalQueue's pending Jobs are stranded, a
        ClusterQueue's admitted Workloads evicted, a namespace's Jobs deleted with it. Queues
        and admitted namespaces are never deleted through a sync: keep the object and hold its
        admission (`kueue-gitops hold`). With `--live`, a queue still holding Workloads is
        reported as plan-removes-queue-in-use instead, with how many.""",
        said("A pull request sets stopPolicy: Hold on LocalQueue batch and keeps it."),
        said("A pull request deletes tenants/team-b/gpu-prod/localqueues.yaml."),
    ),
    rule(
        "plan-removes-queue-in-use",
        "error",
        "deletion",
        "plan",
        "A change removes a LocalQueue or ClusterQueue that still holds Workloads (`plan --live`).",
        """Pending and admitted Workloads of a deleted queue are stranded or evicted. Hold
        admission first (`kueue-gitops hold`), let them finish, then remove the queue.""",
        said("A pull request removes a LocalQueue nobody submits to any more."),
        said("A pull request removes LocalQueue batch while 3 of its Workloads are admitted."),
    ),
    rule(
        "plan-admission-in-use",
        "error",
        "label",
        "plan",
        "A change takes admission from a namespace that still has Workloads (`plan --live`).",
        """Removing a namespace, or its admission label, while Workloads are pending or
        admitted there strands them. Hold its queues, let the work finish, then remove it.""",
        said("A pull request removes namespace team-old, which has no Workloads."),
        said(
            "A pull request drops the admission label of namespace team-a while 2 of its "
            "Workloads are pending."
        ),
    ),
)
