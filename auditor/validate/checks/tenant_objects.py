"""A tenant folder holds only the kinds the platform allows there, in the tenant's own namespaces.

Argo CD syncs `tenants/<tenant>/<cluster>/` with the same rights as `clusters/`, so anything a
tenant folder holds must stay inside the namespaces the tenant's profile lists for that cluster:
its Namespace objects, LocalQueues, Roles and RoleBindings. Cluster-scoped objects belong in
`clusters/<cluster>/`.

Its rules, each with an example that passes and one that fails, are declared beside it in
tenant_objects.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.k8s.objects import CLUSTER_SCOPED_KINDS, RBAC_GROUP
from auditor.model import Finding
from auditor.validate.checks import protocol
from auditor.validate.checks._common import KUEUE

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
TENANT_KIND_NOT_ALLOWED = RULES["tenant-kind-not-allowed"]
TENANT_FOREIGN_NAMESPACE = RULES["tenant-foreign-namespace"]
TENANT_NAMESPACE_MISSING = RULES["tenant-namespace-missing"]

ID = "tenant-objects"
# Its findings about an object depend on it alone and the profiles (protocol.Rerun).
RERUN = protocol.PER_OBJECT

ALLOWED: frozenset[tuple[str, str]] = frozenset(
    {("", "Namespace"), (KUEUE, "LocalQueue"), (RBAC_GROUP, "Role"), (RBAC_GROUP, "RoleBinding")}
)


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    for resource in ctx.resources:
        tenant = ctx.tenants.get(resource.tenant) if resource.tenant else None
        if tenant is None:
            continue
        if (resource.key.group, resource.kind) not in ALLOWED:
            where = (
                f"cluster-scoped objects belong in clusters/{ctx.cluster.name}/"
                if resource.kind in CLUSTER_SCOPED_KINDS
                else "ask the platform team to allow the kind first"
            )
            allowed = ", ".join(sorted(kind for _, kind in ALLOWED))
            yield Finding.about(
                resource,
                TENANT_KIND_NOT_ALLOWED,
                f"{resource.key} may not live in a tenant folder (allowed: {allowed}); {where}",
                path=["kind"],
            )
            continue
        on = tenant.clusters.get(ctx.cluster.name)
        own = on.namespaces if on else ()
        is_namespace = resource.kind == "Namespace"
        namespace = resource.name if is_namespace else resource.namespace
        path = ["metadata", "name"] if is_namespace else ["metadata", "namespace"]
        if namespace is None:
            yield Finding.about(
                resource,
                TENANT_NAMESPACE_MISSING,
                f"{resource.key} names no metadata.namespace, so Argo CD would put it in whatever "
                f"namespace its Application targets; set one of {tenant.name}'s namespaces",
                path=["metadata"],
            )
        elif namespace not in own:
            listed = ", ".join(own) if own else f"none on {ctx.cluster.name}"
            yield Finding.about(
                resource,
                TENANT_FOREIGN_NAMESPACE,
                f"namespace {namespace!r} is not {tenant.name}'s on {ctx.cluster.name} "
                f"(its profile {tenant.file} lists: {listed})",
                path=path,
            )
