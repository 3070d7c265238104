"""ClusterQueue namespaceSelectors admit only namespaces the platform labelled for admission.

Kueue reads an absent selector as "no namespace" (the queue admits nothing: a warning) and `{}`
as "every namespace" (an error). Any selector must require the cluster's admission label, so an
unlabelled namespace can never submit work. A namespace carrying that label must belong to a
tenant profile, or nobody answers for the work it submits; one written in
clusters/<cluster>/unowned/ (import's, for a namespace its rule could not place) is named as
such, with how to assign it, a warning: the estate ran so before it was imported. Where the
cluster profile names a tenant label, a namespace's value for it must be its owner's name:
selectors match on it.

Its rules, each with an example that passes and one that fails, are declared beside it in
namespace_selector.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.model import Finding
from auditor.repo.layout import UNOWNED
from auditor.repo.root import CLUSTERS
from auditor.validate.checks import protocol
from auditor.validate.checks._common import (
    KUEUE,
    labels_of,
    namespace_owners,
    requires_label,
    spec_of,
)

if t.TYPE_CHECKING:
    from auditor.model import Resource
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
NAMESPACE_SELECTOR_ABSENT = RULES["namespace-selector-absent"]
NAMESPACE_SELECTOR_TOO_BROAD = RULES["namespace-selector-too-broad"]
ADMISSION_LABEL_UNOWNED = RULES["admission-label-unowned"]
TENANT_LABEL_MISMATCH = RULES["tenant-label-mismatch"]
NAMESPACE_UNOWNED = RULES["namespace-unowned"]

ID = "namespace-selector"
# Its findings about an object depend on it alone and the profiles (protocol.Rerun).
RERUN = protocol.PER_OBJECT


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    key, value = ctx.cluster.admission_label
    for cq in ctx.of_kind("ClusterQueue"):
        if cq.key.group != KUEUE:
            continue
        spec = spec_of(cq)
        if "namespaceSelector" not in spec or spec["namespaceSelector"] is None:
            yield Finding.about(
                cq,
                NAMESPACE_SELECTOR_ABSENT,
                f"ClusterQueue {cq.name} has no namespaceSelector, which Kueue reads as "
                f"'no namespace': it admits nothing; select {key}={value} (and the tenant)",
                path=["spec"],
            )
        elif not requires_label(spec["namespaceSelector"], key, value):
            what = (
                "{} admits every namespace"
                if spec["namespaceSelector"] == {}
                else "this selector can match a namespace"
            )
            yield Finding.about(
                cq,
                NAMESPACE_SELECTOR_TOO_BROAD,
                f"{what} without the admission label {key}={value}; require it with matchLabels "
                "so unlabelled namespaces stay inadmissible",
                path=["spec", "namespaceSelector"],
            )
    owners = namespace_owners(ctx)
    tenant_label = ctx.cluster.tenant_label
    for ns in ctx.of_kind("Namespace"):
        labels, owner = labels_of(ns), owners.get(ns.name)
        if tenant_label and owner and labels.get(tenant_label, owner.name) != owner.name:
            yield Finding.about(
                ns,
                TENANT_LABEL_MISMATCH,
                f"namespace {ns.name} belongs to {owner.name} but its {tenant_label} label says "
                f"{labels[tenant_label]!r}, so selectors meant for that tenant would admit it",
                path=["metadata", "labels", tenant_label],
            )
        if owner is None and _in_unowned(ctx, ns):
            yield _unowned(ctx, ns)
        elif ctx.cluster.admits(labels) and owner is None:
            yield Finding.about(
                ns,
                ADMISSION_LABEL_UNOWNED,
                f"namespace {ns.name} carries the admission label {key}={value} but no tenant "
                f"profile lists it on {ctx.cluster.name}; add it to a tenant's profile or drop "
                "the label",
                path=["metadata", "labels", key],
            )


def _in_unowned(ctx: CheckContext, ns: Resource) -> bool:
    """Whether `ns` is written where import puts a namespace no tenant has yet."""
    return (ns.file or "").startswith(f"{CLUSTERS}/{ctx.cluster.name}/{UNOWNED}/")


def _unowned(ctx: CheckContext, ns: Resource) -> Finding:
    """A namespace no tenant has yet, with how to give it one (one finding: not also the
    admission label's, which its owner settles too)."""
    cluster, tenant_label = ctx.cluster.name, ctx.cluster.tenant_label
    relabel = (
        f", or label it {tenant_label}=TENANT on the cluster and import again"
        if tenant_label
        else ""
    )
    return Finding.about(
        ns,
        NAMESPACE_UNOWNED,
        f"namespace {ns.name} on {cluster} belongs to no tenant (import could not place it): "
        f"to assign it, move {ns.file} into tenants/TENANT/{cluster}/ and add {ns.name} to "
        f"clusters.{cluster}.namespaces in tenants/TENANT/profile.yaml{relabel}",
        path=["metadata", "name"],
    )
