"""Quantities are written the way the API server prints them back.

Kueue re-encodes ClusterQueues (its webhook) and converted objects, so `1000m` comes back as `1`
and `3072Mi` as `3Gi`; Argo CD then shows the object as OutOfSync forever. Text the server would
rewrite warns with the value it would print; text that is no quantity at all is an error (the
API server refuses it), and so is one the server stores but no quota arithmetic holds (`1e309`).

Its rules, each with an example that passes and one that fails, are declared beside it in
quantities.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.k8s.quantity import QuantityError, QuantityTooLarge, printed
from auditor.kueue import KUEUE_GROUP
from auditor.kueue.quota import QUOTA_FIELDS, cells
from auditor.model import Finding, Resource
from auditor.validate.checks import protocol
from auditor.validate.checks._common import spec_of

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
QUANTITY_NOT_CANONICAL = RULES["quantity-not-canonical"]
QUANTITY_INVALID = RULES["quantity-invalid"]
QUANTITY_TOO_LARGE = RULES["quantity-too-large"]

ID = "quantities"
# Its findings about an object depend on it alone and the profiles (protocol.Rerun).
RERUN = protocol.PER_OBJECT


def _quantities(resource: Resource) -> t.Iterator[tuple[tuple[str | int, ...], t.Any]]:
    for cell in cells(resource.body):
        for name in QUOTA_FIELDS:
            if name in cell.fields:
                yield (*cell.path, name), cell.fields[name]
    fair = spec_of(resource).get("fairSharing")
    if isinstance(fair, dict) and "weight" in fair:
        yield ("spec", "fairSharing", "weight"), fair["weight"]


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    for resource in ctx.of_kind("ClusterQueue", "Cohort", "LocalQueue"):
        if resource.key.group != KUEUE_GROUP:
            continue
        for path, raw in _quantities(resource):
            try:
                text = printed(raw)
            except QuantityTooLarge as exc:
                message = (
                    f"{exc}: the API server stores it, but no node holds it and Kueue's "
                    "64-bit quota arithmetic cannot"
                )
                yield Finding.about(resource, QUANTITY_TOO_LARGE, message, path=path)
                continue
            except QuantityError as exc:
                yield Finding.about(resource, QUANTITY_INVALID, str(exc), path=path)
                continue
            if raw != text:
                yield Finding.about(
                    resource,
                    QUANTITY_NOT_CANONICAL,
                    f"write {text!r} instead of {raw!r}: the API server stores it as {text!r} "
                    "and Argo CD would show the object OutOfSync forever",
                    path=path,
                )
