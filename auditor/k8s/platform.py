"""Power over the platform's objects, and who may hold it.

Creating, changing or deleting a ResourceFlavor, Cohort, ClusterQueue or priority class
(WorkloadPriorityClass, PriorityClass) changes what every tenant is admitted, and so does
relabelling a tenant's namespace (update or patch on namespaces: its labels are admission). The
platform's identities hold these powers on purpose (a cluster profile's `platformIdentities`:
Argo CD's sync, the platform team, the break-glass administrators); anyone else holding one can
change the estate without a pull request. validate judges the repository's RBAC by this, drift
the roles the repository binds as the cluster defines them. The tenants' own subjects are judged
by auditor.k8s.confinement (the tenant baseline), so they are left out here: one finding, one place.
"""

from __future__ import annotations

import typing as t

from auditor.k8s import confinement, rbac
from auditor.k8s.objects import KUEUE_GROUP, SCHEDULING_GROUP

VERBS = ("create", "update", "patch", "delete")
OBJECTS = ("resourceflavors", "cohorts", "clusterqueues", "workloadpriorityclasses")
WATCHED: tuple[rbac.Watched, ...] = (
    *(rbac.Watched(KUEUE_GROUP, r, VERBS, False) for r in OBJECTS),
    rbac.Watched(SCHEDULING_GROUP, "priorityclasses", VERBS, False),
    rbac.Watched("", "namespaces", ("update", "patch"), True),
)
# The API server's own: whoever is in it may do anything, with no binding at all.
ALWAYS = (rbac.Subject("Group", rbac.MASTERS),)


class Tenant(t.NamedTuple):
    group: str | None
    namespaces: tuple[str, ...]


def outsider(subject: rbac.Subject, identities: t.Collection[str], tenants: list[Tenant]) -> bool:
    """Whether `subject` is neither one of the platform's `identities` (as a profile writes
    them: `Group name`, `User name`, `ServiceAccount namespace/name`) nor reaches a tenant,
    whose powers the tenant baseline judges."""
    if subject in ALWAYS or str(subject) in identities:
        return False
    return not any(confinement.reaches(subject, group, ns) for group, ns in tenants)


def over_platform(power: rbac.Power, tenants: list[Tenant]) -> bool:
    """Whether `power` (one of WATCHED) is over the platform's objects: every such object, and
    namespaces cluster-wide or a tenant's."""
    if power.resource != "namespaces":
        return True
    return power.namespace is None or any(power.namespace in ns for _, ns in tenants)


def grants(
    policy: rbac.Policy, identities: t.Collection[str], tenants: list[Tenant]
) -> list[rbac.Grant]:
    """The grants of `policy` that give a subject outside the platform power over its objects;
    the API server's own bindings (its bootstrap policy, the control plane's) aside."""
    return [
        g
        for g in policy.grants(WATCHED)
        if not confinement.bootstrap(g.binding.body)
        and outsider(g.subject, identities, tenants)
        and over_platform(g.power, tenants)
    ]


def describe(found: list[rbac.Grant], shown: int = 4) -> tuple[list[str], str]:
    """The powers `found` give (sorted), and a sentence naming the first `shown` of them, the
    rest counted, with the paths that grant them."""
    powers = sorted({str(g.power) for g in found})
    listed = ", ".join(powers[:shown]) + (
        f" and {len(powers) - shown} more" if len(powers) > shown else ""
    )
    paths = "; ".join(dict.fromkeys(g.path for g in found))
    return powers, f"{listed} (through {paths})"
