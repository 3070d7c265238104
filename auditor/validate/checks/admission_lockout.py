"""The admission policies lock nobody out who must get in.

The generated policies hold three boundaries at the API server (auditor/kueue/admission.py); in
Deny they refuse, whoever asks. Two ways they break a running estate are known before the merge:

- the namespace-label policy exempts only the cluster profile's `platformIdentities`: without the
  identity Argo CD syncs with, the sync cannot create a tenant namespace or set its labels;
  without an administrator (`Group system:masters`, the platform team's group or a user), nobody
  can, not even by hand;
- the priority policy allows a tenant only its approved levels: a level the tenant's own Jobs,
  Workloads or pod templates in the repository name, missing from its profile, is refused at
  their next submission (an import that missed one is the usual way).

Its rules, each with an example that passes and one that fails, are declared beside it in
admission_lockout.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.kueue import admission
from auditor.kueue import workloads as kueue_workloads
from auditor.model import Finding, Resource
from auditor.repo import boundaries, manifests
from auditor.validate.checks import protocol
from auditor.validate.checks._common import cluster_tenants, namespace_owners

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
ADMISSION_POLICIES_LOCK_OUT = RULES["admission-policies-lock-out"]
PRIORITY_LEVEL_NOT_APPROVED = RULES["priority-level-not-approved"]

ID = "admission-lockout"
# Its findings about an object depend on it alone and the profiles (protocol.Rerun); those about
# the cluster's profile on the profiles alone.
RERUN = protocol.PER_OBJECT

# Where a level is named, as a path into an object: the label Kueue reads, the pod templates.
LEVEL_LABELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("workload", ("metadata", "labels", kueue_workloads.PRIORITY_LABEL)),
    ("workload", ("spec", "jobTemplate", "metadata", "labels", kueue_workloads.PRIORITY_LABEL)),
)
POD_CLASSES: tuple[tuple[str, ...], ...] = (
    ("spec", "template", "spec", "priorityClassName"),
    ("spec", "jobTemplate", "spec", "template", "spec", "priorityClassName"),
)


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    yield from _lockout(ctx)
    yield from _levels(ctx)


# -- who the namespace-label policy lets through -------------------------------------------


def _lockout(ctx: CheckContext) -> t.Iterator[Finding]:
    profile = ctx.cluster
    if profile.policy_enforcement != admission.DENY:
        return  # Warn refuses nobody: the rollout's first step
    identities = profile.platform_identities
    missing = []
    if not any(admission.is_sync_identity(i) for i in identities):
        missing.append(
            "the identity Argo CD syncs with (ServiceAccount argocd/argocd-application-controller "
            "where Argo CD runs in the cluster, kube-system/argocd-manager where `argocd cluster "
            "add` registered it, or the user its cluster secret names), so the sync cannot "
            "create a tenant namespace or set its labels"
        )
    if not any(
        i.startswith(("User ", "Group ")) and not admission.is_sync_identity(i) for i in identities
    ):
        missing.append(
            "an administrator (Group system:masters, the platform team's group or a user), so "
            "nobody can set or change those labels by hand either"
        )
    for what in missing:
        found, _ = manifests.load_bytes(ctx.repo.tree.read(profile.file), profile.file)
        path = ("spec", "platformIdentities") if identities else ("spec",)
        yield Finding.about(
            found[0],
            ADMISSION_POLICIES_LOCK_OUT,
            f"the admission policies of {profile.name} deny ({boundaries.ENFORCEMENT_FIELD} "
            f"is Deny) but platformIdentities names no {what}: add it, or keep the policies "
            f"in Warn until it is ({boundaries.ROLLOUT_DOC})",
            path=path,
        )


# -- the levels a tenant's own work names ------------------------------------------------


def _levels(ctx: CheckContext) -> t.Iterator[Finding]:
    """Each level a tenant's own objects name (in its namespaces or its folder) that its
    profile does not approve."""
    here = cluster_tenants(ctx)
    owners = namespace_owners(ctx)
    for resource in ctx.resources:  # one pass: thousands of tenants share the cluster
        tenant = owners.get(resource.namespace or "") or here.get(resource.tenant or "")
        if tenant is None:
            continue
        approved = {
            "workload": tenant.workload_priority_classes,
            "pod": tenant.pod_priority_classes,
        }
        for use, level, path in _named(resource):
            if level in approved[use]:
                continue
            listed = ", ".join(approved[use]) or "none"
            yield Finding.about(
                resource,
                PRIORITY_LEVEL_NOT_APPROVED,
                f"{resource.kind} {resource.name} of tenant {tenant.name} uses the {use} "
                f"priority class {level}, which {tenant.file} does not approve "
                f"(spec.priorityClasses.{use}: {listed}): the admission policy refuses it at "
                "its next submission; approve the level in the profile and run `kueue-gitops "
                "generate policies`, or change what uses it",
                path=path,
            )


def _named(resource: Resource) -> t.Iterator[tuple[str, str, tuple[str, ...]]]:
    """The (use, level, path) of each priority level `resource` names."""
    body, kind = resource.body, resource.kind
    if kind == "Workload":  # Kueue's own record: its class, in either served version's shape
        spec = body.get("spec") or {}
        level = kueue_workloads.workload_priority_class(body)
        if level:
            yield (
                "workload",
                level,
                (
                    "spec",
                    "priorityClassRef" if spec.get("priorityClassRef") else "priorityClassName",
                ),
            )
        elif isinstance(spec.get("priorityClassName"), str):
            yield "pod", spec["priorityClassName"], ("spec", "priorityClassName")
        return
    if kind in ("WorkloadPriorityClass", "PriorityClass"):  # defined in the tenant's folder
        yield ("workload" if kind == "WorkloadPriorityClass" else "pod"), resource.name, ()
        return
    for use, path in LEVEL_LABELS:
        level = _at(body, path)
        if level:
            yield use, level, path
    pods: tuple[tuple[str, ...], ...] = (
        POD_CLASSES if kind != "Pod" else (("spec", "priorityClassName"),)
    )
    for path in pods:
        level = _at(body, path)
        if level:
            yield "pod", level, path


def _at(body: t.Any, path: tuple[str, ...]) -> str | None:
    for step in path:
        if not isinstance(body, dict):
            return None
        body = body.get(step)
    return body if isinstance(body, str) else None
