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


PROFILE_FILE = "tenants/team-a/profile.yaml"
TODAY = "2026-12-01"  # the day the evidence examples are judged on
EVIDENCE = """
      preemption:
        checkpointing:
          validated: jobs evicted mid-epoch resume from their last checkpoint
          reference: https://tickets.example.com/PLAT-412
          date: 2026-06-01
          expires: {expires}
        idempotentOutput:
          validated: a restarted job rewrites its outputs under the same keys
          reference: PLAT-412
          date: 2026-06-01
          expires: {expires}"""


def tenant_profile(preemption: str) -> str:
    return f"""
    apiVersion: kueue-gitops.io/v1alpha1
    kind: TenantProfile
    metadata: {{name: team-a}}
    spec:
      owners: ["@example-org/team-a"]
      clusters:
        gpu-prod: {{namespaces: [team-a], clusterQueues: [team-a-cq]}}{preemption}
    """


BORROWING = """preemption:
        reclaimWithinCohort: LowerPriority
        borrowWithinCohort: {{policy: LowerPriority{threshold}}}"""

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
        "lq-cluster-queue-invalid",
        "error",
        "queue",
        "policy",
        "A LocalQueue points at a ClusterQueue that this repository defines with a type error.",
        """The API server refuses the ClusterQueue (here its quota is no quantity), so the
        LocalQueue would point at nothing and its jobs would wait forever. The message names
        the ClusterQueue's own finding, file and line: fix it there.""",
        LQ,
        yaml(
            CQ_FILE,
            cluster_queue(
                SELECTS_TEAM_A + "\n      resourceGroups:\n"
                "        - coveredResources: [cpu]\n"
                "          flavors: [{name: cpu-only, resources: "
                "[{name: cpu, nominalQuota: lots}]}]"
            ),
        ),
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
        "A ClusterQueue can evict the work of a tenant that has no record its jobs survive that.",
        """A preempted job is killed and started again later: harmless only for jobs that
        resume from checkpoints and write output idempotently. Both sides of each preemption
        count: `withinClusterQueue` evicts the queue's own tenants; `reclaimWithinCohort` and
        `borrowWithinCohort` evict the tenants of every other queue in the cohort tree that can
        borrow. Each of them needs `preemption.checkpointing` and
        `preemption.idempotentOutput` records in its profile (what was validated, a reference,
        the date, an expiry); a preempting queue no tenant lists is an error too. Here team-a
        has no records, and team-b-cq reclaims from team-a-cq.""",
        yaml(PROFILE_FILE, tenant_profile(EVIDENCE.format(expires="2027-06-01")), today=TODAY),
        yaml(PROFILE_FILE, tenant_profile("")),
    ),
    rule(
        "preemption-evidence-expired",
        "error",
        "preemption",
        "policy",
        "A tenant's preemption evidence has expired while a ClusterQueue can evict its work.",
        """Evidence records expire because jobs change: a checkpointing test from last year
        says little about this year's code. Validate again, then record the new date, reference
        and expiry (or stop preempting the tenant's work).""",
        yaml(PROFILE_FILE, tenant_profile(EVIDENCE.format(expires="2027-06-01")), today=TODAY),
        yaml(PROFILE_FILE, tenant_profile(EVIDENCE.format(expires="2026-11-30")), today=TODAY),
    ),
    rule(
        "preemption-evidence-expiring",
        "warning",
        "preemption",
        "policy",
        "A tenant's preemption evidence expires within 30 days, and its work can be preempted.",
        """The warning comes before `preemption-evidence-expired` turns into an error: plan
        the next validation now. The examples are judged on 2026-12-01.""",
        yaml(PROFILE_FILE, tenant_profile(EVIDENCE.format(expires="2027-06-01")), today=TODAY),
        yaml(PROFILE_FILE, tenant_profile(EVIDENCE.format(expires="2026-12-20")), today=TODAY),
    ),
    rule(
        "prune-unguarded",
        "error",
        "deletion",
        "policy",
        "A ClusterQueue, LocalQueue or admitted Namespace may be deleted by an Argo CD sync.",
        """Removing it from Git (with pruning on) or deleting its Application would delete it:
        a LocalQueue's pending Jobs are stranded, a ClusterQueue's admitted work evicted, a
        namespace's Jobs deleted. Each carries `argocd.argoproj.io/sync-options:
        Prune=false,Delete=false`; `Prune=false` may be left out only where the ApplicationSet
        syncing its folder (argocd/) does not prune.""",
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata:
              name: batch
              namespace: team-a
              annotations: {argocd.argoproj.io/sync-options: "Prune=false,Delete=false"}
            spec: {clusterQueue: team-a-cq}
            """,
        ),
        yaml(LQ_FILE, local_queue("batch", "team-a-cq")),
    ),
    rule(
        "preemption-policy-too-broad",
        "error",
        "preemption",
        "policy",
        "A ClusterQueue preempts more than lower-priority work, and its cluster profile does not "
        "allow it.",
        """`reclaimWithinCohort: Any` evicts borrowed work of any priority, and
        `withinClusterQueue: LowerOrNewerEqualPriority` evicts equal-priority work that only
        arrived earlier. Tenants' queues use `Never` or `LowerPriority`; a queue that needs
        more is named in the cluster profile, `preemption.allow.<queue>`, where the platform
        team reviews it.""",
        yaml(CQ_FILE, cluster_queue("preemption: {reclaimWithinCohort: LowerPriority}")),
        yaml(CQ_FILE, cluster_queue("preemption: {reclaimWithinCohort: Any}")),
    ),
    rule(
        "borrow-preemption-unbounded",
        "error",
        "preemption",
        "policy",
        "A ClusterQueue preempts while borrowing without a maxPriorityThreshold below the "
        "platform's priority levels.",
        """`borrowWithinCohort` lets a queue evict other queues' work to borrow their capacity.
        Its `maxPriorityThreshold` bounds which work that may be: without one, any lower
        priority; it must be below every platform level (the cluster profile's
        `priority.platformLevels`, here batch-critical at 10000).""",
        yaml(CQ_FILE, cluster_queue(BORROWING.format(threshold=", maxPriorityThreshold: 100"))),
        yaml(CQ_FILE, cluster_queue(BORROWING.format(threshold=""))),
    ),
)

RULES = LOCALQUEUE_TARGET + NAMESPACE_SELECTOR + OTHER
