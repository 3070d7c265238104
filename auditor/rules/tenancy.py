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
        "warning",
        "rbac",
        "policy",
        "A tenant role may create bare Pods.",
        """Pods created directly are not queued by Kueue (unless its pod integration is on),
        so they run outside the tenant's quota. Submit Jobs instead.""",
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

RULES = TENANT_OBJECTS + TENANT_RBAC + PRIORITY
