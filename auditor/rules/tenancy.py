"""Policy rules about what tenants may hold and grant (checks tenant-objects, tenant-rbac,
priority in auditor/validate/checks/)."""

from __future__ import annotations

from auditor.rules.rule import rule, yaml

LQ_FILE = "tenants/team-a/gpu-prod/localqueues.yaml"
LQ = yaml(
    LQ_FILE,
    """
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata: {name: batch, namespace: team-a}
    spec: {clusterQueue: team-a-cq}
    """,
)
RBAC_FILE = "tenants/team-a/gpu-prod/rbac.yaml"
SUBMITTERS = yaml(
    RBAC_FILE,
    """
    apiVersion: rbac.authorization.k8s.io/v1
    kind: RoleBinding
    metadata: {name: team-a-submitters, namespace: team-a}
    roleRef:
      apiGroup: rbac.authorization.k8s.io
      kind: ClusterRole
      name: kueue-gitops:tenant-submitter
    subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: example-org:team-a}]
    """,
)
ROLE_FILE = "tenants/team-a/gpu-prod/role.yaml"


def role(rules: str) -> str:
    """A tenant Role with the given (flow-style) rules."""
    return f"""
    apiVersion: rbac.authorization.k8s.io/v1
    kind: Role
    metadata: {{name: team-a-extra, namespace: team-a}}
    rules:
      - {rules}
    """


JOBS_ROLE = yaml(ROLE_FILE, role("{apiGroups: [batch], resources: [jobs], verbs: [create, get]}"))
PROFILE_FILE = "tenants/team-a/profile.yaml"


def profile(workload: str) -> str:
    return f"""
    apiVersion: kueue-gitops.io/v1alpha1
    kind: TenantProfile
    metadata: {{name: team-a}}
    spec:
      owners: ["@example-org/team-a"]
      clusters:
        gpu-prod: {{namespaces: [team-a], clusterQueues: [team-a-cq]}}
      priorityClasses: {{workload: [{workload}], pod: [tenant-batch]}}
    """


TENANT_OBJECTS = (
    rule(
        "tenant-kind-not-allowed",
        "error",
        "tenancy",
        "policy",
        "A tenant folder holds a kind tenants may not define.",
        """Argo CD syncs `tenants/<tenant>/<cluster>/` with the same rights as `clusters/`, so
        a tenant folder may hold only Namespaces, LocalQueues, Roles and RoleBindings.
        Cluster-scoped objects belong in `clusters/<cluster>/`; for another kind, ask the
        platform team to allow it first.""",
        LQ,
        yaml(
            "tenants/team-a/gpu-prod/settings.yaml",
            """
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: settings, namespace: team-a}
            data: {mode: fast}
            """,
        ),
    ),
    rule(
        "tenant-foreign-namespace",
        "error",
        "tenancy",
        "policy",
        "A tenant's object is in a namespace its profile does not list for that cluster.",
        """A tenant may only write into the namespaces `tenants/<tenant>/profile.yaml` gives it
        on the cluster; an object in another tenant's namespace (or any other) would let it
        act there. Use one of its own namespaces, or add the namespace to its profile.""",
        LQ,
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata: {name: borrowed, namespace: team-b}
            spec: {clusterQueue: team-a-cq}
            """,
        ),
    ),
    rule(
        "tenant-namespace-missing",
        "error",
        "tenancy",
        "policy",
        "A namespaced object in a tenant folder names no metadata.namespace.",
        """Argo CD puts an object without a namespace into whatever namespace its Application
        targets, which may not be the tenant's. Write the namespace explicitly.""",
        LQ,
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata: {name: batch}
            spec: {clusterQueue: team-a-cq}
            """,
        ),
    ),
)

TENANT_RBAC = (
    rule(
        "rbac-wildcard",
        "error",
        "rbac",
        "policy",
        "A tenant role uses `*` in apiGroups, resources or verbs.",
        """A wildcard grants everything that exists now and everything installed later,
        including Kueue's own objects. Name the groups, resources and verbs.""",
        JOBS_ROLE,
        yaml(ROLE_FILE, role('{apiGroups: ["*"], resources: [jobs], verbs: [create]}')),
    ),
    rule(
        "rbac-escalation-verb",
        "error",
        "rbac",
        "policy",
        "A tenant role grants bind, escalate or impersonate.",
        """These verbs let their holder grant itself, or act with, more than it was given.
        Tenants never need them.""",
        JOBS_ROLE,
        yaml(
            ROLE_FILE,
            role("{apiGroups: [''], resources: [serviceaccounts], verbs: [impersonate]}"),
        ),
    ),
    rule(
        "rbac-platform-write",
        "error",
        "rbac",
        "policy",
        "A tenant role may change Kueue objects or PriorityClasses.",
        """ClusterQueues, ResourceFlavors, Cohorts, WorkloadPriorityClasses, LocalQueues and
        PriorityClasses change only through this repository, where they are reviewed; a tenant
        that could write them could give itself quota or priority.""",
        JOBS_ROLE,
        yaml(
            ROLE_FILE,
            role("{apiGroups: [kueue.x-k8s.io], resources: [clusterqueues], verbs: [patch]}"),
        ),
    ),
    rule(
        "rbac-namespace-write",
        "error",
        "rbac",
        "policy",
        "A tenant role may change Namespaces.",
        """A namespace's labels decide which ClusterQueues admit its work: relabelling one is
        admission, and the platform owns the labels.""",
        JOBS_ROLE,
        yaml(ROLE_FILE, role("{apiGroups: [''], resources: [namespaces], verbs: [patch]}")),
    ),
    rule(
        "rbac-rbac-write",
        "error",
        "rbac",
        "policy",
        "A tenant role may write Roles or bindings.",
        """A tenant that can write RBAC objects can hand out access the platform never
        reviewed. Access changes go through this repository.""",
        JOBS_ROLE,
        yaml(
            ROLE_FILE,
            role(
                "{apiGroups: [rbac.authorization.k8s.io], resources: [rolebindings], "
                "verbs: [create]}"
            ),
        ),
    ),
    rule(
        "rbac-write-not-submission",
        "error",
        "rbac",
        "policy",
        "A tenant role may write something other than the job kinds Kueue queues.",
        """Tenants submit jobs (batch Jobs, JobSets, Kubeflow, Ray and the other kinds Kueue
        integrates) and read; any other write bypasses what the platform reviews. Ask the
        platform team for what you need.""",
        JOBS_ROLE,
        yaml(ROLE_FILE, role("{apiGroups: [''], resources: [services], verbs: [create]}")),
    ),
    rule(
        "rbac-pod-create",
        "error",
        "rbac",
        "policy",
        "A tenant role may create bare Pods, which the cluster's Kueue does not manage.",
        """Pods created directly are queued by Kueue only where its pod integration is on
        (`pod` in the frameworks of the cluster's Kueue Configuration, `clusters/<cluster>/kueue/`);
        elsewhere they run outside every quota, and hide the contention quota would show. Submit
        Jobs instead, or turn the integration on.""",
        JOBS_ROLE,
        yaml(ROLE_FILE, role("{apiGroups: [''], resources: [pods], verbs: [create]}")),
    ),
    rule(
        "rbac-builtin-role",
        "error",
        "rbac",
        "policy",
        "A tenant RoleBinding grants the built-in admin, edit or cluster-admin role.",
        """These let the tenant manage access and every object in its namespace, quota
        objects included. Bind `kueue-gitops:tenant-submitter` instead.""",
        SUBMITTERS,
        yaml(
            RBAC_FILE,
            """
            apiVersion: rbac.authorization.k8s.io/v1
            kind: RoleBinding
            metadata: {name: team-a-admins, namespace: team-a}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: admin}
            subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: example-org:team-a}]
            """,
        ),
    ),
    rule(
        "rbac-unresolved-role",
        "error",
        "rbac",
        "policy",
        "A tenant RoleBinding binds a role this repository does not define (or one that "
        "aggregates none it defines).",
        """What the binding grants cannot be judged when its role is defined outside the
        repository, or aggregates only roles defined outside it (an aggregated ClusterRole is
        judged by the repository's ClusterRoles it aggregates). Bind a ClusterRole from
        `clusters/<cluster>/rbac.yaml`, or a Role in the tenant's folder.""",
        SUBMITTERS,
        yaml(
            RBAC_FILE,
            """
            apiVersion: rbac.authorization.k8s.io/v1
            kind: RoleBinding
            metadata: {name: team-a-submitters, namespace: team-a}
            roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: job-runner}
            subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: example-org:team-a}]
            """,
        ),
    ),
)

ACCESS_FILE = "clusters/gpu-prod/tenant-access.yaml"


def cluster_binding(role: str) -> str:
    return f"""
    apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRoleBinding
    metadata: {{name: team-a-{role}}}
    roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: {role}}}
    subjects: [{{apiGroup: rbac.authorization.k8s.io, kind: Group, name: example-org:team-a}}]
    """


TENANT_POWERS = (
    rule(
        "rbac-tenant-power",
        "error",
        "rbac",
        "policy",
        "A binding outside the tenant folders gives a tenant more than the tenant baseline.",
        """Wherever a binding lives, what it gives a tenant's group, its namespaces' service
        accounts (or everybody) counts: writes to ClusterQueues, ResourceFlavors, Cohorts,
        WorkloadPriorityClasses or PriorityClasses, updating or patching namespaces, bind,
        escalate or impersonate, and reading Secrets outside the tenant's namespaces are
        beyond what tenants may hold. The message names each power and the path that grants
        it (binding, role, rule). Remove the subject, or bind a narrower role.""",
        yaml(ACCESS_FILE, cluster_binding("view")),
        yaml(ACCESS_FILE, cluster_binding("cluster-admin")),
    ),
    rule(
        "rbac-tenant-role-unknown",
        "error",
        "rbac",
        "policy",
        "A binding outside the tenant folders gives a tenant a role nobody can bound.",
        """The role is neither defined for the cluster in this repository nor one Kubernetes
        ships, so what the tenant gains cannot be judged. Define it in
        `clusters/<cluster>/rbac.yaml` or bind one that is.""",
        yaml(ACCESS_FILE, cluster_binding("view")),
        yaml(ACCESS_FILE, cluster_binding("platform-operator")),
    ),
)

PRIORITY = (
    rule(
        "priority-class-in-tenant-folder",
        "error",
        "priority",
        "policy",
        "A tenant folder defines a WorkloadPriorityClass or PriorityClass.",
        """Priority classes are cluster-wide: a tenant that could define one could outrank
        everybody. The platform defines them in `clusters/<cluster>/`.""",
        LQ,
        yaml(
            "tenants/team-a/gpu-prod/priority.yaml",
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: WorkloadPriorityClass
            metadata: {name: team-a-urgent}
            value: 100000
            """,
        ),
    ),
    rule(
        "priority-level-missing",
        "error",
        "priority",
        "policy",
        "A tenant profile lists a priority class the cluster does not define.",
        """The tenant's jobs may request the level, and would be rejected at submission on
        a cluster without it. Define the class in `clusters/<cluster>/` or drop it from the
        profile's `priorityClasses`.""",
        yaml(PROFILE_FILE, profile("batch-low")),
        yaml(PROFILE_FILE, profile("batch-urgent")),
    ),
)

PC_FILE = "clusters/gpu-prod/priorityclasses.yaml"


def pod_priority(value: int, policy: str) -> str:
    """The platform's WorkloadPriorityClass batch-critical and the tenants' pod PriorityClass."""
    return f"""
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: WorkloadPriorityClass
    metadata: {{name: batch-critical}}
    value: 10000
    ---
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {{name: tenant-batch}}
    value: {value}
    preemptionPolicy: {policy}
    """


def workload_levels(low: int, standard: int) -> str:
    return "\n---\n".join(
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
        f"metadata: {{name: {name}}}\nvalue: {value}"
        for name, value in (("batch-low", low), ("batch-standard", standard))
    )


PRIORITY_LEVELS = (
    rule(
        "priority-class-preempts",
        "error",
        "priority",
        "policy",
        "A pod PriorityClass tenants may use does not set preemptionPolicy: Never.",
        """With the default, PreemptLowerPriority, the scheduler evicts other Pods to place a
        tenant's, outside Kueue's quota and preemption rules: business priority becomes
        preemption authority. A class a tenant profile lists (or the global default) sets
        `preemptionPolicy: Never`; Kueue decides preemption.""",
        yaml(PC_FILE, pod_priority(1000, "Never")),
        yaml(PC_FILE, pod_priority(1000, "PreemptLowerPriority")),
    ),
    rule(
        "priority-above-platform",
        "error",
        "priority",
        "policy",
        "A priority class tenants may use is not below every platform level.",
        """The platform's own levels (the cluster profile's `priority.platformLevels`, or the
        classes no tenant lists) must outrank all tenant work, or a tenant could preempt
        what the platform protects. Lower the tenant class's value.""",
        yaml(PC_FILE, pod_priority(1000, "Never")),
        yaml(PC_FILE, pod_priority(1000000000, "Never")),
    ),
    rule(
        "priority-order",
        "error",
        "priority",
        "policy",
        "WorkloadPriorityClass values do not rise in the order the cluster profile declares.",
        """The profile's `priority.workloadOrder` lists the levels lowest first (batch-low,
        batch-standard, batch-critical); a value out of that order silently changes who
        preempts whom. Fix the value, or the order after review.""",
        yaml(PC_FILE, workload_levels(100, 1000)),
        yaml(PC_FILE, workload_levels(100, 50)),
    ),
)

RULES = TENANT_OBJECTS + TENANT_RBAC + TENANT_POWERS + PRIORITY + PRIORITY_LEVELS
