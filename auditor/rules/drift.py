"""Rules of `drift`: the live cluster against the repository (auditor/drift/)."""

from __future__ import annotations

from auditor.rules.rule import Rule, rule, said

FIX = """A live object differs from the repository: a field was changed (`modified`, naming
who changed it from managedFields), the object is missing live (`missing`), or it exists only
live (`unmanaged`). Put the cluster back (let Argo CD sync), or commit the change through a pull
request so it is reviewed."""


def _drift(category: str, what: str, passes: str, fails: str) -> Rule:
    """`what`: the thing that drifted, then in parentheses the fields and objects it covers."""
    short, _, covers = what.partition(" (")
    return rule(
        f"drift-{category}",
        "error",
        category,
        "drift",
        f"Drift in {short}: the live cluster differs from the repository.",
        (f"This rule covers {covers.rstrip(')')}. " if covers else "") + FIX,
        said(passes),
        said(fails),
    )


RULES = (
    _drift(
        "quota",
        "quota (nominalQuota, borrowingLimit, lendingLimit; a ClusterQueue or LocalQueue as a "
        "whole)",
        "team-a-cq's a100 GPU nominalQuota is 16 live, as in clusterqueues.yaml.",
        "Someone ran `kubectl edit clusterqueue team-a-cq` and raised the a100 GPU nominalQuota "
        "from 16 to 24.",
    ),
    _drift(
        "cohort",
        "cohorts (cohortName; a Cohort as a whole)",
        "team-a-cq is in cohort ai-shared live, as in the repository.",
        "team-a-cq's cohortName was patched to `ai-private` on the cluster.",
    ),
    _drift(
        "label",
        "labels (an object's labels the repository sets or a selector reads, and a Namespace "
        "as a whole; a label or annotation only the live object carries, which no repository "
        "object of its kind sets and nothing reads, is not drift)",
        "Namespace team-a carries the admission and tenant labels the repository gives it, "
        "and an annotation `owner: alice` nothing reads.",
        "The tenant label of namespace team-a was changed to team-b on the cluster.",
    ),
    _drift(
        "rbac",
        "RBAC (a Role, ClusterRole or binding the repository defines)",
        "The RoleBinding team-a-submitters binds the same subjects live as in the repository.",
        "A second group was added to the subjects of team-a-submitters on the cluster.",
    ),
    _drift(
        "flavor",
        "flavors (a ResourceFlavor, a flavor of a queue's resource groups, or their order: "
        "Kueue tries them in order)",
        "ResourceFlavor a100 has the node labels and taints written in the repository.",
        "team-a-cq lists h100 before a100 on the cluster, so its jobs get H100s first.",
    ),
    _drift(
        "preemption",
        "preemption or flavor fungibility",
        "team-a-cq's preemption policies are the same live and in the repository.",
        "team-a-cq's withinClusterQueue was set to LowerOrNewerEqualPriority on the cluster.",
    ),
    _drift(
        "stop-policy",
        "stopPolicy",
        "No queue is held live that the repository does not hold.",
        "team-a-cq has stopPolicy Hold live (a hold applied by hand and never committed).",
    ),
    _drift(
        "admission-policy",
        "admission policies (a ValidatingAdmissionPolicy or its binding that `kueue-gitops "
        "generate policies` made; deleted or loosened live, it lets a tenant across a "
        "boundary the repository holds)",
        "kueue-gitops-queue-name and its binding are on the cluster exactly as generated.",
        "The binding kueue-gitops-priority-levels was changed to validationActions [Warn]: "
        "unapproved priority classes now only warn.",
    ),
    _drift(
        "kueue-config",
        "Kueue's Configuration (the ConfigMap kueue-system/kueue-manager-config, compared as "
        "the Configuration it holds)",
        "The live kueue-manager-config says manageJobsWithoutQueueName: true, as the repo does.",
        "manageJobsWithoutQueueName was set to false live: Jobs without a queue name would "
        "run outside quota after Kueue's next restart.",
    ),
    _drift(
        "priority",
        "priority (a PriorityClass or WorkloadPriorityClass)",
        "WorkloadPriorityClass batch-standard has value 1000 live, as in the repository.",
        "An unmanaged WorkloadPriorityClass `vip` was created on the cluster.",
    ),
    _drift(
        "version",
        "API versions",
        "The cluster serves every kind and version the repository's objects use.",
        "The repository writes ClusterQueues as v1beta2 but the cluster does not serve "
        "v1beta2 (Kueue was not upgraded), so the objects cannot exist there.",
    ),
    _drift(
        "other",
        "configuration (a field of no other category)",
        "team-a-cq's queueingStrategy is the same live and in the repository.",
        "team-a-cq's queueingStrategy was changed to StrictFIFO on the cluster.",
    ),
    rule(
        "drift-capacity",
        "error",
        "capacity",
        "drift",
        "A ResourceFlavor's nodes cannot hold what the queues promise on it, or it selects no "
        "Ready node.",
        """Kueue admits on quota, never looking at nodes: a flavor whose nodeLabels select no
        Ready node admits Jobs whose Pods can never be scheduled, and a flavor whose Ready
        nodes hold less (allocatable) than the sum of every ClusterQueue's and Cohort's
        nominalQuota on it admits more than can run at once. Fix the node pool, the flavor's
        nodeLabels, or lower the quota. A cluster with no Node at all (a bare control plane)
        is not compared.""",
        said("The a100 nodes hold 32 nvidia.com/gpu, and team-a-cq and team-b-cq promise 16 each."),
        said("The h100 node pool was scaled to zero: ResourceFlavor h100 selects no Ready node."),
    ),
    rule(
        "drift-not-compared",
        "error",
        "other",
        "drift",
        "A repository object is malformed, so it was not compared with the live one.",
        """A field of the wrong shape (`annotations` given as a string, a list where a mapping
        belongs) makes the object unreadable as Kubernetes would read it, so drift cannot say
        how it differs from the cluster; the finding quotes the schema's complaint at its line.
        Fix the object (`kueue-gitops validate` reports it too); nothing else is skipped.""",
        said("Every object in the repository passes its schema."),
        said("`metadata.annotations: note` in tenants/team-b/gpu-staging/namespace.yaml."),
    ),
    rule(
        "drift-admission-label",
        "error",
        "label",
        "drift",
        "A live namespace carries the admission label but is not in the repository.",
        """The admission label lets a namespace submit work to Kueue; a namespace labelled by
        hand can admit work nobody approved. Remove the label, or add the namespace to a
        tenant through a pull request.""",
        said("Every namespace with the admission label is defined in the repository."),
        said(
            "`kubectl label namespace scratch platform.example.com/kueue=enabled` on the cluster."
        ),
    ),
    rule(
        "rbac-power",
        "error",
        "rbac",
        "drift",
        "A live subject holds a watched power the repository does not grant.",
        """From the live Roles, ClusterRoles (aggregation included) and bindings: who can
        write ClusterQueues, ResourceFlavors, Cohorts, PriorityClasses or
        WorkloadPriorityClasses, update namespaces, or bind, escalate and impersonate. A subject
        holding such a power that neither the repository, nor the API server's bootstrap
        policy, nor the cluster profile's `drift.trustedSubjects` gives it is reported once
        per binding. Remove the binding, or grant the power through the repository.""",
        said("Only the platform's own bindings, from the repository, grant write on quota."),
        said(
            "A ClusterRoleBinding made by hand gives the group `ml-leads` `edit` on "
            "ClusterQueues through an aggregated ClusterRole."
        ),
    ),
    rule(
        "rbac-tenant-power-granted",
        "error",
        "rbac",
        "drift",
        "A repository binding gives a tenant more than the tenant baseline, as the cluster "
        "defines the role.",
        """rbac-power trusts what the repository grants, and a repository binding to a role the
        repository does not define is judged by that role as it is live. Here each repository
        binding is resolved that way, and a tenant's group, its namespaces' service accounts or
        everybody holding a power beyond the tenant baseline (quota or priority writes,
        namespace updates, bind, escalate, impersonate, Secrets outside its namespaces) is
        reported at the binding. Bind a role the repository defines, narrowly.""",
        said("team-a's group is bound to `view` and the kueue-gitops tenant roles only."),
        said(
            "team-a's group is bound in clusters/gpu-prod/rbac.yaml to a ClusterRole the "
            "repository does not define, and on the cluster it allows patching namespaces."
        ),
    ),
    rule(
        "schema-drift",
        "error",
        "version",
        "drift",
        "A live CRD differs from the schema committed in schemas/.",
        """The CRD's served versions or its schema fingerprint changed live, or it is
        installed on one side only: usually a Kueue upgrade nobody committed. Run
        `kueue-gitops schemas fetch --cluster <cluster>` and review the change in a pull
        request, or put the cluster back.""",
        said("`schemas/gpu-prod/index.json` has the fingerprint of every live Kueue CRD."),
        said("Kueue was upgraded on gpu-prod, and its ClusterQueue CRD gained a field."),
    ),
)
