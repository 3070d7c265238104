"""The tenant boundaries the API server holds: ValidatingAdmissionPolicies made from the profiles.

Three policies per cluster, each with its binding (admissionregistration.k8s.io/v1, CEL):

- queue name: in a namespace that admits work, a Job (or any kind of the configured Kueue
  integrations) must name, with `kueue.x-k8s.io/queue-name`, a LocalQueue the repository
  declares in that namespace; without one it would run outside every quota.
- priority levels: its `kueue.x-k8s.io/priority-class` must be one of the tenant's approved
  workload levels, and its pods' `priorityClassName` one of the approved pod levels (absent is
  the default and allowed), so business priority does not become preemption authority.
- namespace labels: a namespace's admission and tenant labels (and verify's scratch label) are
  set or changed only by the platform's identities, whatever RBAC grants.

An UPDATE is judged only when it changes what a rule looks at: Kueue and the Job controller
update admitted Jobs all the time, and a Job created before a tenant lost a level must still
finish. Namespaces a verify run makes (labelled with SCRATCH_LABEL, which only the platform
may set) are left out of the workload rules: verify probes admission there with its own queues.
"""

from __future__ import annotations

import json
import typing as t
from dataclasses import dataclass

from auditor.k8s.objects import ADMISSION_API, Json
from auditor.kueue.config import Framework
from auditor.kueue.workloads import PRIORITY_LABEL, QUEUE_LABEL

API = ADMISSION_API
POLICY = "ValidatingAdmissionPolicy"
BINDING = "ValidatingAdmissionPolicyBinding"
KINDS = (POLICY, BINDING)
SCRATCH_LABEL = "kueue-gitops.io/verify-run"  # verify's scratch namespaces
MANAGED_BY = {"app.kubernetes.io/managed-by": "kueue-gitops"}
QUEUE_POLICY = "kueue-gitops-queue-name"
PRIORITY_POLICY = "kueue-gitops-priority-levels"
NAMESPACE_POLICY = "kueue-gitops-namespace-labels"
POLICIES = (QUEUE_POLICY, PRIORITY_POLICY, NAMESPACE_POLICY)
ABSENT = "<absent>"  # never a label value: those are [A-Za-z0-9._-]
# Where the pod specs sit in kinds whose schema every API server has, as CEL over `o`.
# The pods of other kinds (custom resources) keep only the label rules: their priorityClassName
# is not judged here.
POD_SPECS = {
    ("batch", "Job"): "[o.spec.template.spec]",
    ("apps", "Deployment"): "[o.spec.template.spec]",
    ("apps", "StatefulSet"): "[o.spec.template.spec]",
    ("", "Pod"): "[o.spec]",
}


@dataclass(frozen=True)
class Namespace:
    """A namespace that admits work: its LocalQueues in the repo and its tenant's levels."""

    name: str
    queues: tuple[str, ...]
    tenant: str | None = None
    workload_levels: tuple[str, ...] = ()
    pod_levels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Boundaries:
    """Everything the policies of one cluster are made from."""

    admission_label: tuple[str, str]
    guarded_labels: tuple[str, ...]
    platform: tuple[str, ...]  # `User name`, `Group name`, `ServiceAccount ns/name`
    namespaces: tuple[Namespace, ...]
    integrations: tuple[Framework, ...]
    actions: tuple[str, ...] = ("Deny",)

    @property
    def unchecked_pods(self) -> list[str]:
        """Configured kinds whose pods' priorityClassName the policies cannot judge."""
        return [f.kind for f in self.integrations if (f.group, f.kind) not in POD_SPECS]


DENY, WARN = "Deny", "Warn"  # the cluster profile's spec.admissionPolicies.enforcement

# Who Argo CD syncs a cluster as, which the namespace-label policy must let through: the
# application controller's ServiceAccount on the cluster Argo CD runs in, and the one
# `argocd cluster add` makes (kube-system/argocd-manager) on a cluster it registered.
ARGOCD_SYNC_ACCOUNTS = ("argocd-application-controller", "argocd-manager")


def is_sync_identity(identity: str) -> bool:
    """Whether a platformIdentities entry ("Kind name") is one Argo CD syncs with: one of its
    ServiceAccounts, every ServiceAccount (a system:serviceaccounts group), or a user a
    cluster was registered with whose name says it is Argo CD's."""
    kind, _, name = identity.partition(" ")
    if kind == "ServiceAccount":
        return name.partition("/")[2] in ARGOCD_SYNC_ACCOUNTS
    if kind == "User":
        return "argocd" in name
    return kind == "Group" and name.startswith("system:serviceaccounts")


def actions(enforcement: str) -> tuple[str, ...]:
    """The bindings' validationActions: Deny, or for a rollout Warn with an audit record."""
    return (DENY,) if enforcement == DENY else (WARN, "Audit")


def starting_enforcement(runs_work: bool) -> str:
    """The enforcement a new cluster profile is written with. A cluster that already runs work
    (an import, any estate not started by `init`) starts in Warn: its profiles were read from
    what runs, and a policy in Deny made from a level or an identity they missed would refuse
    running tenants' Jobs, or Argo CD's own sync, at the first sync. Deny is then a reviewed
    change of the field; an empty cluster (`init`) may deny from the start."""
    return WARN if runs_work else DENY


def policies(b: Boundaries) -> list[Json]:
    """The policies and bindings, in a stable order (each policy followed by its binding)."""
    workload_scope = {
        "namespaceSelector": {
            "matchLabels": {b.admission_label[0]: b.admission_label[1]},
            "matchExpressions": [{"key": SCRATCH_LABEL, "operator": "DoesNotExist"}],
        }
    }
    out: list[Json] = []
    for policy, scope in (
        (_queue_policy(b), workload_scope),
        (_priority_policy(b), workload_scope),
        (_namespace_policy(b), None),
    ):
        out += [policy, _binding(policy["metadata"]["name"], b.actions, scope)]
    return out


def _meta(name: str) -> Json:
    return {"name": name, "labels": dict(MANAGED_BY)}


def _policy(
    name: str, rules: list[Json], variables: list[tuple[str, str]], validations: list[Json]
) -> Json:
    return {
        "apiVersion": API,
        "kind": POLICY,
        "metadata": _meta(name),
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": rules},
            "variables": [{"name": n, "expression": e} for n, e in variables],
            "validations": validations,
        },
    }


def _binding(policy: str, validation_actions: tuple[str, ...], scope: Json | None) -> Json:
    spec: Json = {"policyName": policy, "validationActions": list(validation_actions)}
    if scope is not None:
        spec["matchResources"] = scope
    return {"apiVersion": API, "kind": BINDING, "metadata": _meta(policy), "spec": spec}


def _rules(frameworks: t.Iterable[Framework]) -> list[Json]:
    """One resource rule per API group, CREATE and UPDATE, every version."""
    by_group: dict[str, list[str]] = {}
    for f in frameworks:
        resources = by_group.setdefault(f.group, [])
        if f.resource not in resources:
            resources.append(f.resource)
    return [
        {
            "apiGroups": [group],
            "apiVersions": ["*"],
            "resources": sorted(resources),
            "operations": ["CREATE", "UPDATE"],
        }
        for group, resources in sorted(by_group.items())
    ]


def _cel(value: t.Any) -> str:
    """A CEL literal of strings, lists and maps (JSON's syntax is CEL's for these)."""
    return json.dumps(value, sort_keys=True)


def _label(obj: str, key: str) -> str:
    return f"{obj}.metadata.?labels[?{_cel(key)}].orValue('')"


def _changed(variable: str) -> str:
    """CEL: this request sets `variable` anew (a create, or an update that changes it)."""
    return f"request.operation == 'CREATE' || variables.{variable} != variables.old_{variable}"


def _exempt_owned_pods(b: Boundaries) -> list[tuple[str, str]]:
    """Pods made by a controller (a Job's, a ReplicaSet's) answer to their owner's labels."""
    if not any(f.kind == "Pod" and f.group == "" for f in b.integrations):
        return [("owned", "false")]
    return [
        (
            "owned",
            "object.kind == 'Pod' && object.metadata.?ownerReferences.orValue([])"
            ".exists(r, r.?controller.orValue(false))",
        )
    ]


def _queue_policy(b: Boundaries) -> Json:
    queues = {ns.name: list(ns.queues) for ns in b.namespaces}
    variables = [
        ("queues", _cel(queues)),
        ("ns", "namespaceObject.metadata.name"),
        ("declared", "variables.queues[?variables.ns].orValue([])"),
        ("queue", _label("object", QUEUE_LABEL)),
        ("old_queue", f"oldObject == null ? '' : {_label('oldObject', QUEUE_LABEL)}"),
        *_exempt_owned_pods(b),
        ("judged", f"!variables.owned && ({_changed('queue')})"),
        (
            "use",
            "size(variables.declared) == 0 ? 'none is declared for it in the repository; "
            "ask the platform team for one' : 'use one of: ' + variables.declared.join(', ')",
        ),
    ]
    validations = [
        {
            "expression": "!variables.judged || variables.queue != ''",
            "messageExpression": (
                f"object.kind + 's in namespace ' + variables.ns + ' must name their "
                f"LocalQueue with the label {QUEUE_LABEL}, or they run outside every quota: ' "
                "+ variables.use"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": (
                "!variables.judged || variables.queue == '' || "
                "variables.queue in variables.declared"
            ),
            "messageExpression": (
                "'LocalQueue ' + variables.queue + ' is not a LocalQueue of namespace ' + "
                f"variables.ns + ' in the repository (label {QUEUE_LABEL}): ' + "
                "variables.use"
            ),
            "reason": "Forbidden",
        },
    ]
    return _policy(QUEUE_POLICY, _rules(b.integrations), variables, validations)


def _pod_classes(b: Boundaries, obj: str) -> str:
    """CEL: the priorityClassNames of `obj`'s pod specs ('' where unset), by its kind."""
    expression = "[]"
    for f in reversed(b.integrations):
        specs = POD_SPECS.get((f.group, f.kind))
        if specs is None:
            continue
        api = f"'{f.group}/'" if f.group else "''"
        is_kind = (
            f"{obj}.apiVersion.startsWith({api}) && {obj}.kind == '{f.kind}'"
            if f.group
            else f"{obj}.apiVersion == 'v1' && {obj}.kind == '{f.kind}'"
        )
        classes = specs.replace("o.", f"{obj}.") + ".map(s, s.?priorityClassName.orValue(''))"
        expression = f"({is_kind}) ? {classes} : {expression}"
    return expression


def _priority_policy(b: Boundaries) -> Json:
    tenants = {ns.name: ns.tenant or "" for ns in b.namespaces}
    workload = {ns.name: list(ns.workload_levels) for ns in b.namespaces}
    pod = {ns.name: list(ns.pod_levels) for ns in b.namespaces}
    variables = [
        ("tenants", _cel(tenants)),
        ("workload_levels", _cel(workload)),
        ("pod_levels", _cel(pod)),
        ("ns", "namespaceObject.metadata.name"),
        (
            "who",
            "variables.tenants[?variables.ns].orValue('') == '' ? 'namespace ' + "
            "variables.ns : 'tenant ' + variables.tenants[variables.ns]",
        ),
        ("level", _label("object", PRIORITY_LABEL)),
        ("old_level", f"oldObject == null ? '' : {_label('oldObject', PRIORITY_LABEL)}"),
        ("approved", "variables.workload_levels[?variables.ns].orValue([])"),
        (
            "pod_classes",
            f"({_pod_classes(b, 'object')}).filter(c, c != '')",
        ),
        (
            "old_pod_classes",
            f"oldObject == null ? [] : ({_pod_classes(b, 'oldObject')}).filter(c, c != '')",
        ),
        ("approved_pods", "variables.pod_levels[?variables.ns].orValue([])"),
        (
            "unapproved_pods",
            "variables.pod_classes.filter(c, !(c in variables.approved_pods))",
        ),
    ]
    leave_out = " or leave it out for the default"
    validations = [
        {
            "expression": (
                f"!({_changed('level')}) || variables.level == '' || "
                "variables.level in variables.approved"
            ),
            "messageExpression": (
                "'priority class ' + variables.level + ' is not approved for ' + variables.who "
                f"+ ': set the label {PRIORITY_LABEL} to one of: ' + "
                f"(size(variables.approved) == 0 ? '(none)' : variables.approved.join(', ')) "
                f"+ '{leave_out}'"
            ),
            "reason": "Forbidden",
        },
        {
            "expression": (f"!({_changed('pod_classes')}) || size(variables.unapproved_pods) == 0"),
            "messageExpression": (
                "'pod PriorityClass ' + variables.unapproved_pods.join(', ') + ' is not approved"
                " for ' + variables.who + ': set priorityClassName to one of: ' + "
                "(size(variables.approved_pods) == 0 ? '(none)' : "
                f"variables.approved_pods.join(', ')) + '{leave_out}'"
            ),
            "reason": "Forbidden",
        },
    ]
    return _policy(PRIORITY_POLICY, _rules(b.integrations), variables, validations)


def subjects(platform: t.Iterable[str]) -> tuple[list[str], list[str]]:
    """The user names and groups of `User x`, `Group x`, `ServiceAccount ns/name` entries."""
    users: list[str] = []
    groups: list[str] = []
    for entry in platform:
        kind, _, name = entry.partition(" ")
        if kind == "Group":
            groups.append(name)
        elif kind == "ServiceAccount":
            users.append("system:serviceaccount:" + name.replace("/", ":", 1))
        else:
            users.append(name)
    return users, groups


def _namespace_policy(b: Boundaries) -> Json:
    users, groups = subjects(b.platform)
    policy = _policy(
        NAMESPACE_POLICY,
        [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["namespaces"],
                "operations": ["CREATE", "UPDATE"],
            }
        ],
        [
            ("guarded", _cel(list(b.guarded_labels))),
            (
                "changed",
                f"variables.guarded.filter(k, object.metadata.?labels[?k].orValue('{ABSENT}') != "
                f"(oldObject == null ? '{ABSENT}' : "
                f"oldObject.metadata.?labels[?k].orValue('{ABSENT}')))",
            ),
        ],
        [
            {
                "expression": "size(variables.changed) == 0",
                "messageExpression": (
                    "'only the platform may set or change the label(s) ' + "
                    "variables.changed.join(', ') + ' of namespace ' + object.metadata.name + "
                    "': they decide whose quota its work uses. Ask the platform team to change "
                    "the namespace in the repository'"
                ),
                "reason": "Forbidden",
            }
        ],
    )
    policy["spec"]["matchConditions"] = [
        {
            "name": "not-the-platform",
            "expression": (
                f"!(request.userInfo.username in {_cel(users)}) && "
                f"!request.userInfo.?groups.orValue([]).exists(g, g in {_cel(groups)})"
            ),
        }
    ]
    return policy
