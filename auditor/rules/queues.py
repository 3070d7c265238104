"""Policy rules about queues and who they admit (checks localqueue-target, namespace-selector,
default-localqueue, stop-policy, preemption in auditor/validate/checks/)."""

from __future__ import annotations

from auditor.rules.rule import rule, yaml

LQ_FILE = "tenants/team-a/gpu-prod/localqueues.yaml"


def local_queue(name: str, target: str, extra: str = "") -> str:
    return f"""
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata: {{name: {name}, namespace: team-a}}
    spec: {{clusterQueue: {target}{extra}}}
    """


LQ = yaml(LQ_FILE, local_queue("batch", "team-a-cq"))
CQ_FILE = "clusters/gpu-prod/clusterqueues.yaml"


def cluster_queue(spec: str) -> str:
    return f"""
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {{name: team-a-cq}}
    spec:
      {spec}
    """


SELECTS_TEAM_A = (
    "namespaceSelector:\n        matchLabels: "
    "{platform.example.com/kueue: enabled, platform.example.com/tenant: team-a}"
)
CQ = yaml(CQ_FILE, cluster_queue(SELECTS_TEAM_A))
NS_FILE = "tenants/team-a/gpu-prod/namespace.yaml"


def namespace(name: str, tenant: str) -> str:
    return f"""
    apiVersion: v1
    kind: Namespace
    metadata:
      name: {name}
      labels: {{platform.example.com/kueue: enabled, platform.example.com/tenant: {tenant}}}
    """


LOCALQUEUE_TARGET = (
    rule(
        "lq-cluster-queue-missing",
        "error",
        "queue",
        "policy",
        "A LocalQueue points at a ClusterQueue that does not exist on its cluster.",
        """Kueue accepts such a LocalQueue, and every job sent to it waits forever. Name one
        of the cluster's ClusterQueues (the message lists them); a typo is the usual cause.""",
        LQ,
        yaml(LQ_FILE, local_queue("batch", "team-a-qc")),
    ),
    rule(
        "lq-cluster-queue-not-authorised",
        "error",
        "queue",
        "policy",
        "A LocalQueue points at a ClusterQueue its tenant's profile does not list.",
        """The tenant is the one whose profile lists the LocalQueue's namespace on the cluster;
        it may use only the ClusterQueues its profile lists there, or it would spend another
        tenant's quota.""",
        LQ,
        yaml(LQ_FILE, local_queue("batch", "team-b-cq")),
    ),
    rule(
        "lq-namespace-not-selected",
        "error",
        "queue",
        "policy",
        "A LocalQueue's ClusterQueue does not admit the LocalQueue's namespace.",
        """A ClusterQueue admits work only from namespaces its namespaceSelector matches (with
        the labels the namespace's object in this repository has, which must exist). Otherwise
        the LocalQueue is accepted but its jobs are never admitted. Fix the namespace's labels
        or the selector; here team-a's namespace is labelled as team-b's.""",
        yaml(NS_FILE, namespace("team-a", "team-a")),
        yaml(NS_FILE, namespace("team-a", "team-b")),
    ),
)

NAMESPACE_SELECTOR = (
    rule(
        "namespace-selector-absent",
        "warning",
        "label",
        "policy",
        "A ClusterQueue has no namespaceSelector, so it admits nothing.",
        """Kueue reads an absent (nil) selector as "no namespace": the queue is valid but no
        workload ever reaches it. Select the admission label (and the tenant label).""",
        CQ,
        yaml(CQ_FILE, cluster_queue("cohortName: ai-shared")),
    ),
    rule(
        "namespace-selector-too-broad",
        "error",
        "label",
        "policy",
        "A ClusterQueue's namespaceSelector does not require the admission label.",
        """A namespace without the cluster profile's admission label must never be able to
        submit work; `{}` selects every namespace, and a selector that does not require the
        label matches unlabelled ones. Require it in matchLabels.""",
        CQ,
        yaml(
            CQ_FILE,
            cluster_queue(
                "namespaceSelector:\n        matchLabels: {platform.example.com/tenant: team-a}"
            ),
        ),
    ),
    rule(
        "admission-label-unowned",
        "error",
        "label",
        "policy",
        "A Namespace carries the admission label but no tenant profile lists it.",
        """The admission label lets a namespace submit work; a namespace no tenant owns has
        nobody answering for that work (or its quota). Add it to a tenant's profile, or drop
        the label.""",
        yaml(NS_FILE, namespace("team-a", "team-a")),
        yaml("clusters/gpu-prod/namespaces.yaml", namespace("research", "research")),
    ),
    rule(
        "tenant-label-mismatch",
        "error",
        "label",
        "policy",
        "A Namespace's tenant label names another tenant than the one whose profile lists it.",
        """ClusterQueue selectors match on the tenant label (the cluster profile's
        `tenantLabel`), so a namespace labelled for another tenant is admitted to that
        tenant's queues. Its value must be the owning tenant's name.""",
        yaml(NS_FILE, namespace("team-a", "team-a")),
        yaml(NS_FILE, namespace("team-a", "team-b")),
    ),
)

OTHER = (
    rule(
        "default-localqueue",
        "warning",
        "queue",
        "policy",
        "A LocalQueue is named `default`, which captures unlabelled jobs in its namespace.",
        """With LocalQueueDefaulting (stable since Kueue 0.17), jobs in the namespace without a
        `kueue.x-k8s.io/queue-name` label go to the LocalQueue named `default`, and can no
        longer opt out. Rename the queue unless that is intended.""",
        LQ,
        yaml(LQ_FILE, local_queue("default", "team-a-cq")),
    ),
    rule(
        "stop-policy-holds",
        "warning",
        "stop-policy",
        "policy",
        "A ClusterQueue or LocalQueue has a stopPolicy that holds admission.",
        """`Hold` stops new admissions (running work finishes); `HoldAndDrain` also evicts what
        runs. The `hold` runbook sets them on purpose; anywhere else a reviewer should see it.
        Set `None` (or remove the field) to resume.""",
        yaml(LQ_FILE, local_queue("batch", "team-a-cq", ", stopPolicy: None")),
        yaml(LQ_FILE, local_queue("batch", "team-a-cq", ", stopPolicy: HoldAndDrain")),
    ),
    rule(
        "preemption-unvalidated",
        "error",
        "preemption",
        "policy",
        "A ClusterQueue preempts, but not every tenant using it has proven its jobs survive that.",
        """A preempted job is killed and started again later: harmless only for jobs that
        resume from checkpoints and write output idempotently. A ClusterQueue may preempt
        (any policy but `Never`) only when each tenant whose profile lists it declares
        `preemption.checkpointingValidated` and `preemption.idempotentOutputValidated`.""",
        yaml(
            CQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: ClusterQueue
            metadata: {name: platform-cq}
            spec:
              preemption: {reclaimWithinCohort: Never, withinClusterQueue: Never}
            """,
        ),
        yaml(
            CQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: ClusterQueue
            metadata: {name: platform-cq}
            spec:
              preemption: {withinClusterQueue: LowerPriority}
            """,
        ),
    ),
)

RULES = LOCALQUEUE_TARGET + NAMESPACE_SELECTOR + OTHER
