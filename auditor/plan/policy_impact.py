"""What the ValidatingAdmissionPolicies a change adds or tightens would refuse today (`plan
--live`): Gatekeeper's audit and Kyverno's background scan answer it once a policy is installed;
this answers it on the pull request, before anything is refused.

Each policy (with each of its bindings) that the head adds or changes is judged offline, with its
expressions as written (auditor.schemas.vap), against what runs on the cluster now: every live
object of the kinds it matches, resubmitted as it is (a CREATE: what a tenant's next run of the
same Job sends), in its namespace with that namespace's labels. Only what the head refuses and
the base did not is reported: a policy the base already denied with counts only for what it
refuses anew. A policy whose expressions read who asks (`request.userInfo`) has no verdict on
objects alone: it is judged by who would be refused, namely every subject the cluster's RBAC lets
make such a request today (auditor.k8s.rbac), `system:masters` included, and what each would be
refused of the live objects.

A binding in Deny refuses: its refusals of running work, of the cluster's administrators or of
Argo CD's sync identity are errors. A binding in Warn only warns: the same judgement says what it
would refuse once enforcement is Deny, as a warning, so the flip is made knowing it.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field

from auditor import rules
from auditor.k8s import rbac
from auditor.k8s.objects import ADMISSION_API, RBAC_API, RBAC_KINDS, Json
from auditor.kueue import admission
from auditor.kueue import config as kueue_config
from auditor.kueue import workloads as kueue_workloads
from auditor.model import Finding, Resource
from auditor.schemas import vap

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster
    from auditor.plan.model import ClusterPlan

_RULES = rules.of(__name__)
PLAN_POLICY_REFUSES = _RULES["plan-policy-refuses"]
PLAN_POLICY_WOULD_REFUSE = _RULES["plan-policy-would-refuse"]
PLAN_POLICY_RESTRICTS = _RULES["plan-policy-restricts"]

ADMIN_ROLE = "cluster-admin"
FINISHED = ("Complete", "Completed", "Failed", "Succeeded", "Finished")
SHOWN = 5  # objects named per finding


@dataclass(frozen=True)
class Bound:
    """One policy with one of its bindings, as a revision holds them."""

    policy: Json
    binding: Json

    @property
    def denies(self) -> bool:
        return "Deny" in ((self.binding.get("spec") or {}).get("validationActions") or [])


@dataclass
class Judged:
    """A changed policy with one binding: the head's, the base's (None: added), where it is."""

    name: str
    head: Bound
    base: Bound | None
    resource: Resource


def changed(plan: ClusterPlan) -> list[Judged]:
    """The policies (per binding) the head adds or changes."""
    head, base = _bound(plan.head.objects.values()), _bound(plan.base.objects.values())
    out = []
    for key, (resource, bound) in sorted(head.items()):
        before = base.get(key)
        if before is None or before[1] != bound:
            out.append(Judged(key[0], bound, before[1] if before else None, resource))
    return out


def _bound(resources: t.Iterable[Resource]) -> dict[tuple[str, str], tuple[Resource, Bound]]:
    """(policy, binding) -> the policy's resource and the pair, for policies with a binding."""
    policies: dict[str, Resource] = {}
    bindings: list[Json] = []
    for r in resources:
        if r.api_version == ADMISSION_API and r.kind == admission.POLICY:
            policies[r.name] = r
        elif r.api_version == ADMISSION_API and r.kind == admission.BINDING:
            bindings.append(r.body)
    out = {}
    for b in bindings:
        name = str((b.get("spec") or {}).get("policyName", ""))
        if name in policies:
            key = (name, str((b.get("metadata") or {}).get("name", "")))
            out[key] = (policies[name], Bound(policies[name].body, b))
    return out


# -- what runs now -------------------------------------------------------------------------


@dataclass
class Live:
    """What the policies are judged against: objects by (group, resource), namespaces by name,
    the state of each object's Workload (by the object's uid), the RBAC objects."""

    objects: dict[tuple[str, str], list[Json]] = field(default_factory=dict)
    namespaces: dict[str, Json] = field(default_factory=dict)
    workload_states: dict[str, str] = field(default_factory=dict)
    rbac: list[Json] = field(default_factory=list)
    unknown: set[tuple[str, str]] = field(default_factory=set)  # resources it cannot list

    @classmethod
    def read(
        cls, cluster: KubeCluster, judged: list[Judged], kueue_version: str | None, kueue_api: str
    ) -> Live:
        """One LIST per kind the policies match, of Namespaces, Workloads and, where a policy
        reads who asks, of the RBAC objects."""
        from auditor.live.apierrors import KindNotServed

        live = cls()
        kinds = _kinds(kueue_version)
        for group, resource in sorted({r for j in judged for r in _resources(j.head.policy)}):
            found = kinds.get((group, resource))
            if found is None:
                live.unknown.add((group, resource))
                continue
            try:
                listed = cluster.list(*found)
            except KindNotServed:  # nothing of that kind can run there
                listed = []
            live.objects[(group, resource)] = [o for o in listed if not _finished(o)]
        live.namespaces = {n["metadata"]["name"]: n for n in cluster.list("v1", "Namespace")}
        for wl in cluster.list(kueue_api, "Workload"):
            for ref in (wl.get("metadata") or {}).get("ownerReferences") or []:
                live.workload_states[str(ref.get("uid"))] = kueue_workloads.quota_state(wl)
        if any(vap.reads_user(j.head.policy) for j in judged):
            live.rbac = [o for kind in RBAC_KINDS for o in cluster.list(RBAC_API, kind)]
        return live


def _kinds(kueue_version: str | None) -> dict[tuple[str, str], tuple[str, str]]:
    """(group, resource) -> (apiVersion, kind) of what a policy may match: namespaces and the
    kinds Kueue's frameworks manage."""
    out = {("", "namespaces"): ("v1", "Namespace")}
    for f in kueue_config.api_or_nearest(kueue_version).frameworks.values():
        out[(f.group, f.resource)] = (f"{f.group}/{f.version}" if f.group else f.version, f.kind)
    return out


def _resources(policy: Json) -> list[tuple[str, str]]:
    """The (group, resource) pairs a policy's resource rules name, for CREATE."""
    rules_ = ((policy.get("spec") or {}).get("matchConstraints") or {}).get("resourceRules") or []
    return [
        (g, r)
        for rule in rules_
        if {"CREATE", "*"} & set(rule.get("operations") or [])
        for g in rule.get("apiGroups") or []
        for r in rule.get("resources") or []
    ]


def _finished(obj: Json) -> bool:
    status = obj.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return True
    return any(
        c.get("type") in FINISHED and c.get("status") == "True"
        for c in status.get("conditions") or []
        if isinstance(c, dict)
    )


# -- judging -------------------------------------------------------------------------------

Key = tuple[str, str, str, str]  # group, resource, namespace, name


@dataclass(frozen=True)
class Asker:
    """Who sends the requests: nobody in particular (object policies), or a subject."""

    username: str = ""
    groups: tuple[str, ...] = ()


def findings(plan: ClusterPlan, cluster: KubeCluster) -> tuple[list[Finding], list[str]]:
    """The findings of the changed policies on this cluster, and what could not be judged
    (each a sentence: the cluster is then incomplete, never clean)."""
    judged = changed(plan)
    if not judged:
        return [], []
    profile = plan.profile
    live = Live.read(cluster, judged, profile.kueue_version, profile.kueue_api)
    out: list[Finding] = []
    unjudged = [
        f"admission policies matching {r} in API group {g or 'core'} not judged: only "
        "namespaces and the kinds of Kueue's frameworks are listed to judge them"
        for g, r in sorted(live.unknown)
    ]
    for j in judged:
        if not _resources(j.head.policy):
            unjudged.append(
                f"ValidatingAdmissionPolicy {j.name} not judged: it matches no CREATE, and what "
                "it refuses of an UPDATE depends on a change not made yet"
            )
            continue
        try:
            if vap.reads_user(j.head.policy):
                out += _by_identity(plan, j, live)
            else:
                out += _by_object(plan, j, live, Asker())
        except vap.Unsupported as exc:
            unjudged.append(f"ValidatingAdmissionPolicy {j.name} not judged offline: {exc}")
    return out, unjudged


def _refusals(bound: Bound | None, live: Live, asker: Asker) -> dict[Key, tuple[Json, str]]:
    """Every live object the policy refuses when `asker` submits it as it is: object, message."""
    if bound is None:
        return {}
    out = {}
    for group, resource in _resources(bound.policy):
        for obj in live.objects.get((group, resource), []):
            meta = obj.get("metadata") or {}
            ns = meta.get("namespace")
            request = vap.Request(
                vap.CREATE,
                group,
                resource,
                {k: v for k, v in obj.items() if k != "status"},
                namespace_object=live.namespaces.get(ns) if ns else None,
                username=asker.username,
                groups=asker.groups,
            )
            verdict = vap.judge(bound.policy, bound.binding, request)
            if verdict.refused:
                out[(group, resource, ns or "", meta.get("name", ""))] = (obj, verdict.failures[0])
    return out


def _new(j: Judged, live: Live, asker: Asker) -> dict[Key, tuple[Json, str]]:
    """What the head refuses that the base did not (the base's binding denied it already)."""
    head = _refusals(j.head, live, asker)
    before = _refusals(j.base, live, asker) if j.base and j.base.denies else {}
    return {k: v for k, v in head.items() if k not in before}


def _by_object(plan: ClusterPlan, j: Judged, live: Live, asker: Asker) -> list[Finding]:
    groups: dict[tuple[str, str, str], list[Json]] = {}
    for obj, message in _new(j, live, asker).values():
        who = _owner(plan, live, (obj.get("metadata") or {}).get("namespace"))
        groups.setdefault((who, str(obj.get("kind")), message), []).append(obj)
    out = []
    for (who, kind, message), objs in sorted(groups.items()):
        text = (
            f"{_verb(j)} {len(objs)} running {kind}{'s' if len(objs) > 1 else ''} of {who}"
            f"{_states(objs, live)}, submitted again as they are: {message} ({_names(objs)})"
        )
        rule = PLAN_POLICY_REFUSES if j.head.denies else PLAN_POLICY_WOULD_REFUSE
        out.append(_finding(plan, j, rule, text, {"refused": [_ref(o) for o in objs]}))
    return out


def _verb(j: Judged) -> str:
    if j.head.denies:
        return f"ValidatingAdmissionPolicy {j.name} (Deny) refuses"
    return (
        f"ValidatingAdmissionPolicy {j.name} only warns now (Warn), but once its binding "
        "denies it refuses"
    )


def _owner(plan: ClusterPlan, live: Live, namespace: str | None) -> str:
    """`tenant T` by the namespace's tenant label, else `namespace N` (or `the cluster`)."""
    if not namespace:
        return "the cluster"
    label = plan.profile.tenant_label
    labels = ((live.namespaces.get(namespace) or {}).get("metadata") or {}).get("labels") or {}
    tenant = labels.get(label) if label else None
    return f"tenant {tenant}" if tenant else f"namespace {namespace}"


def _states(objs: list[Json], live: Live) -> str:
    """` (3 admitted, 1 pending)`: the state of their Workloads, where Kueue made one."""
    counts: dict[str, int] = {}
    for o in objs:
        state = live.workload_states.get(str((o.get("metadata") or {}).get("uid")))
        if state:
            counts[state] = counts.get(state, 0) + 1
    parts = [f"{n} {s}" for s in kueue_workloads.QUOTA_STATES if (n := counts.get(s))]
    return f" ({', '.join(parts)})" if parts else ""


def _names(objs: list[Json]) -> str:
    names = [_ref(o) for o in objs[:SHOWN]]
    more = f" and {len(objs) - SHOWN} more" if len(objs) > SHOWN else ""
    return ", ".join(names) + more


def _ref(obj: Json) -> str:
    meta = obj.get("metadata") or {}
    return (
        f"{meta['namespace']}/{meta.get('name')}" if meta.get("namespace") else meta.get("name", "")
    )


def _finding(
    plan: ClusterPlan, j: Judged, rule: rules.Rule, message: str, extra: dict[str, t.Any]
) -> Finding:
    return Finding.about(j.resource, rule, message, cluster=plan.name, extra=extra)


# -- policies that read who asks -------------------------------------------------------------


def _by_identity(plan: ClusterPlan, j: Judged, live: Live) -> list[Finding]:
    """Per subject that may make the requests the policy matches: what it would be refused."""
    watched = tuple(
        rbac.Watched(g, r, ("create", "update", "patch"), True)
        for g, r in _resources(j.head.policy)
    )
    paths: dict[rbac.Subject, list[str]] = {rbac.Subject("Group", rbac.MASTERS): []}
    for grant in rbac.Policy(live.rbac).grants(watched):
        paths.setdefault(grant.subject, []).append(grant.path)
    out, others = [], []
    for subject, found in sorted(paths.items()):
        new = _new(j, live, _asker(subject))
        if not new:
            continue
        refused = [obj for obj, _ in new.values()]
        messages = sorted({m for _, m in new.values()})
        role = _role(subject, found)
        if role is None:
            others.append(f"{subject} ({len(refused)})")
            continue
        via = f"; it may through {found[0]}" if found else ""
        kind = str(refused[0].get("kind"))
        text = (
            f"{_verb(j)} {subject}, {role}{via}: it could not create or change "
            f"{len(refused)} live {kind}{'s' if len(refused) > 1 else ''} as they are "
            f"({_names(refused)}): {messages[0]}; add it to platformIdentities in "
            f"{plan.profile.file} or keep the policy in Warn"
        )
        rule = PLAN_POLICY_REFUSES if j.head.denies else PLAN_POLICY_WOULD_REFUSE
        out.append(_finding(plan, j, rule, text, {"subject": str(subject)}))
    if others:
        text = (
            f"ValidatingAdmissionPolicy {j.name} would refuse subjects RBAC lets make these "
            f"requests today, on the live objects they match (how many): {', '.join(others)}"
        )
        out.append(_finding(plan, j, PLAN_POLICY_RESTRICTS, text, {"subjects": others}))
    return out


def _role(subject: rbac.Subject, paths: list[str]) -> str | None:
    """Why refusing `subject` locks the platform out (None: it is not the platform's)."""
    if subject == rbac.Subject("Group", rbac.MASTERS):
        return "the cluster's administrators (every power, no binding)"
    if admission.is_sync_identity(str(subject)):
        return "the identity Argo CD syncs with"
    if any(f"-> ClusterRole {ADMIN_ROLE} ->" in p for p in paths):
        return f"a cluster administrator (bound to ClusterRole {ADMIN_ROLE})"
    return None


def _asker(subject: rbac.Subject) -> Asker:
    """The userInfo the API server gives a request of `subject`."""
    if subject.kind == "ServiceAccount":
        return Asker(
            f"system:serviceaccount:{subject.namespace}:{subject.name}",
            (
                "system:serviceaccounts",
                f"system:serviceaccounts:{subject.namespace}",
                "system:authenticated",
            ),
        )
    if subject.kind == "Group":  # a member: who exactly is not known, only the group
        return Asker(f"(a member of {subject.name})", (subject.name, "system:authenticated"))
    return Asker(subject.name, ("system:authenticated",))
