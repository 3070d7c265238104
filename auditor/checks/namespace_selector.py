"""ClusterQueue namespaceSelectors admit only namespaces the platform labelled for admission.

Kueue reads an absent selector as "no namespace" (the queue admits nothing: a warning) and `{}`
as "every namespace" (an error). Any selector must require the cluster's admission label, so an
unlabelled namespace can never submit work; and a namespace carrying that label must belong to a
tenant profile, or nobody answers for the work it submits.

Passes (clusters/gpu-prod/clusterqueues.yaml)::

    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {name: team-a-cq}
    spec:
      namespaceSelector:
        matchLabels: {platform.example.com/kueue: enabled, platform.example.com/tenant: team-a}

Fails (clusters/gpu-prod/clusterqueues.yaml)::

    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {name: team-a-cq}
    spec:
      namespaceSelector:
        matchLabels: {platform.example.com/tenant: team-a}
"""

from __future__ import annotations

import typing as t

from auditor.checks._common import KUEUE, labels_of, namespace_owners, requires_label, spec_of
from auditor.model import Finding

if t.TYPE_CHECKING:
    from auditor.checks import CheckContext

ID = "namespace-selector"
CATEGORY = "label"
LEVELS = {
    "namespace-selector-absent": "warning",
    "namespace-selector-too-broad": "error",
    "admission-label-unowned": "error",
}


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    key, value = ctx.cluster.admission_label
    for cq in ctx.of_kind("ClusterQueue"):
        if cq.key.group != KUEUE:
            continue
        spec = spec_of(cq)
        if "namespaceSelector" not in spec or spec["namespaceSelector"] is None:
            yield Finding.about(
                cq,
                "namespace-selector-absent",
                f"ClusterQueue {cq.name} has no namespaceSelector, which Kueue reads as "
                f"'no namespace': it admits nothing; select {key}={value} (and the tenant)",
                CATEGORY,
                path=["spec"],
            )
        elif not requires_label(spec["namespaceSelector"], key, value):
            what = (
                "{} admits every namespace"
                if spec["namespaceSelector"] == {}
                else ("this selector can match a namespace")
            )
            yield Finding.about(
                cq,
                "namespace-selector-too-broad",
                f"{what} without the admission label {key}={value}; require it with matchLabels "
                "so unlabelled namespaces stay inadmissible",
                CATEGORY,
                path=["spec", "namespaceSelector"],
            )
    owners = namespace_owners(ctx)
    for ns in ctx.of_kind("Namespace"):
        if labels_of(ns).get(key) == value and ns.name not in owners:
            yield Finding.about(
                ns,
                "admission-label-unowned",
                f"namespace {ns.name} carries the admission label {key}={value} but no tenant "
                f"profile lists it on {ctx.cluster.name}; add it to a tenant's profile or drop "
                "the label",
                CATEGORY,
                path=["metadata", "labels", key],
            )
