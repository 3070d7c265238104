"""Quantities are written the way the API server prints them back.

Kueue re-encodes ClusterQueues (its webhook) and converted objects, so `1000m` comes back as `1`
and `3072Mi` as `3Gi`; Argo CD then shows the object as OutOfSync forever. Text the server would
rewrite warns with the value it would print; text that is no quantity at all is an error.

Passes (clusters/gpu-prod/cohorts.yaml)::

    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata: {name: ai-shared}
    spec:
      resourceGroups:
        - coveredResources: [memory]
          flavors:
            - name: cpu-only
              resources: [{name: memory, nominalQuota: 3Gi}]

Fails (clusters/gpu-prod/cohorts.yaml)::

    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata: {name: ai-shared}
    spec:
      resourceGroups:
        - coveredResources: [memory]
          flavors:
            - name: cpu-only
              resources: [{name: memory, nominalQuota: 3072Mi}]
"""

from __future__ import annotations

import typing as t

from auditor.k8s.quantity import QuantityError, printed
from auditor.model import Finding, Resource
from auditor.validate.checks._common import KUEUE, quota_entries, spec_of

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

ID = "quantities"
CATEGORY = "quota"
LEVELS = {"quantity-not-canonical": "warning", "quantity-invalid": "error"}

QUOTA_FIELDS = ("nominalQuota", "borrowingLimit", "lendingLimit")


def _quantities(resource: Resource) -> t.Iterator[tuple[tuple[str | int, ...], t.Any]]:
    for entry in quota_entries(resource):
        for name in QUOTA_FIELDS:
            if name in entry.fields:
                yield (*entry.path, name), entry.fields[name]
    fair = spec_of(resource).get("fairSharing")
    if isinstance(fair, dict) and "weight" in fair:
        yield ("spec", "fairSharing", "weight"), fair["weight"]


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    for resource in ctx.of_kind("ClusterQueue", "Cohort", "LocalQueue"):
        if resource.key.group != KUEUE:
            continue
        for path, raw in _quantities(resource):
            try:
                text = printed(raw)
            except QuantityError as exc:
                yield Finding.about(resource, "quantity-invalid", str(exc), CATEGORY, path=path)
                continue
            if raw != text:
                yield Finding.about(
                    resource,
                    "quantity-not-canonical",
                    f"write {text!r} instead of {raw!r}: the API server stores it as {text!r} "
                    "and Argo CD would show the object OutOfSync forever",
                    CATEGORY,
                    path=path,
                )
