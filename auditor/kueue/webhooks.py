"""What Kueue's validating webhooks refuse that the CRDs' schemas and CEL rules do not express.

Read from the pinned release (sigs.k8s.io/kueue v0.17.0, pkg/webhooks/): the webhooks of
ClusterQueue, Cohort and ResourceFlavor (LocalQueue and WorkloadPriorityClass have none). Each
rule gives the field the webhook names and its reason, in the webhook's words:

- ClusterQueue and Cohort: quotas (nominalQuota, borrowingLimit, lendingLimit) and
  fairSharing.weight are not negative, and a non-zero weight is above 1n; coveredResources are
  qualified names. A ClusterQueue also has at most 256 flavors and 256 covered resources in all,
  and at most 512 flavor-resource pairs in a group, and a valid namespaceSelector.
- ResourceFlavor: nodeLabels are valid labels, node taints have a valid key and value and are
  unique by key and effect, tolerations have a valid key.

The webhooks' other rules are the quotas check's (auditor/validate/checks/quotas.py: limits
without a parent, lendingLimit over nominalQuota, repeated flavors or resources, resources out of
coveredResources order). The rules of these refusals are declared in webhooks.rules.yaml beside
this module; the check kueue-webhook (auditor/validate/checks/kueue_webhook.py) reports them.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor import rules
from auditor.k8s.names import label_value_errors, qualified_name_errors
from auditor.k8s.objects import Json
from auditor.k8s.quantity import ZERO, Quantity, QuantityError, parse
from auditor.kueue.quota import QUOTA_FIELDS, cells, resource_groups

RULES = rules.of(__name__)
QUANTITY_NEGATIVE = RULES["quantity-negative"]
FAIR_SHARING_WEIGHT_TINY = RULES["fair-sharing-weight-tiny"]
RESOURCE_NAME_INVALID = RULES["resource-name-invalid"]
QUOTA_TOO_MANY = RULES["quota-too-many"]
NAMESPACE_SELECTOR_INVALID = RULES["namespace-selector-invalid"]
FLAVOR_LABELS_INVALID = RULES["flavor-labels-invalid"]
FLAVOR_TAINT_REPEATED = RULES["flavor-taint-repeated"]

Path = tuple[str | int, ...]
NEGATIVE = "must be greater than or equal to 0"
MAX_FLAVORS = MAX_RESOURCES = 256
MAX_PAIRS = 512
OPERATORS = {"In": True, "NotIn": True, "Exists": False, "DoesNotExist": False}  # -> values?


@dataclass(frozen=True)
class Violation:
    rule: rules.Rule
    path: Path
    message: str


def violations(obj: Json) -> list[Violation]:
    kind = obj.get("kind")
    if kind == "ResourceFlavor":
        return list(_flavor(obj))
    if kind not in ("ClusterQueue", "Cohort"):
        return []
    found = [*_quantities(obj), *_names(obj)]
    if kind == "ClusterQueue":
        found += [*_totals(obj), *_selector(_dict(obj.get("spec")).get("namespaceSelector"))]
    return found


def _dict(value: t.Any) -> dict[str, t.Any]:
    return value if isinstance(value, dict) else {}


def _list(value: t.Any) -> list[t.Any]:
    return value if isinstance(value, list) else []


def _quantity(raw: t.Any) -> Quantity | None:
    try:
        return parse(raw)
    except QuantityError:
        return None  # not a quantity at all: the schema's pattern refuses it


def _quantities(obj: Json) -> t.Iterator[Violation]:
    for cell in cells(obj):
        for name in QUOTA_FIELDS:
            value = _quantity(cell.fields.get(name)) if name in cell.fields else None
            if value is not None and value < ZERO:
                yield Violation(QUANTITY_NEGATIVE, (*cell.path, name), f"{value}: {NEGATIVE}")
    weight = _dict(_dict(obj.get("spec")).get("fairSharing")).get("weight")
    value = _quantity(weight) if weight is not None else None
    path: Path = ("spec", "fairSharing", "weight")
    if value is not None and value < ZERO:
        yield Violation(QUANTITY_NEGATIVE, path, f"{value}: {NEGATIVE}")
    elif value is not None and ZERO < value <= parse("1n"):
        yield Violation(FAIR_SHARING_WEIGHT_TINY, path, "When not 0, weight must be > 10e-9")


def _names(obj: Json) -> t.Iterator[Violation]:
    for group in resource_groups(obj):
        for c, name in enumerate(group.covered):
            for why in qualified_name_errors(name):
                path = (*group.path, "coveredResources", c)
                yield Violation(RESOURCE_NAME_INVALID, path, f"{name!r}: {why}")


def _totals(obj: Json) -> t.Iterator[Violation]:
    groups = list(resource_groups(obj))
    flavors = sum(len(g.flavors) for g in groups)
    covered = sum(len(g.covered) for g in groups)
    at: Path = ("spec", "resourceGroups")
    if flavors > MAX_FLAVORS:
        yield Violation(
            QUOTA_TOO_MANY,
            at,
            f"total number of flavors across all resourceGroups must be ≤ {MAX_FLAVORS}, got "
            f"{flavors}",
        )
    if covered > MAX_RESOURCES:
        yield Violation(
            QUOTA_TOO_MANY,
            at,
            f"total number of covered resources across all resourceGroups must be ≤ "
            f"{MAX_RESOURCES}, got {covered}",
        )
    for group in groups:
        pairs = sum(len(_list(_dict(f).get("resources"))) for f in group.flavors)
        if pairs > MAX_PAIRS:
            yield Violation(
                QUOTA_TOO_MANY,
                group.path,
                f"number of flavor-resource combinations in a resourceGroup must be ≤ "
                f"{MAX_PAIRS}, got {pairs}",
            )


def _labels(labels: t.Any, path: Path) -> t.Iterator[tuple[Path, str]]:
    for key, value in _dict(labels).items():
        for why in qualified_name_errors(str(key)):
            yield (*path, str(key)), f"{key!r}: {why}"
        for why in label_value_errors(str(value)):
            yield (*path, str(key)), f"{value!r}: {why}"


def _selector(selector: t.Any) -> t.Iterator[Violation]:
    at: Path = ("spec", "namespaceSelector")
    for path, why in _labels(_dict(selector).get("matchLabels"), (*at, "matchLabels")):
        yield Violation(NAMESPACE_SELECTOR_INVALID, path, why)
    for i, expr in enumerate(_list(_dict(selector).get("matchExpressions"))):
        expr, path = _dict(expr), (*at, "matchExpressions", i)
        operator, values = expr.get("operator"), [str(v) for v in _list(expr.get("values"))]
        wants = OPERATORS.get(str(operator))
        if wants is None:
            why = f"{operator!r}: not a valid selector operator"
            yield Violation(NAMESPACE_SELECTOR_INVALID, (*path, "operator"), why)
        elif wants != bool(values):
            why = (
                "must be specified when `operator` is 'In' or 'NotIn'"
                if wants
                else "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            )
            yield Violation(NAMESPACE_SELECTOR_INVALID, (*path, "values"), why)
        for why in qualified_name_errors(str(expr.get("key", ""))):
            yield Violation(NAMESPACE_SELECTOR_INVALID, (*path, "key"), why)
        for v, value in enumerate(values):
            for why in label_value_errors(value):
                yield Violation(NAMESPACE_SELECTOR_INVALID, (*path, "values", v), why)


def _flavor(obj: Json) -> t.Iterator[Violation]:
    spec = _dict(obj.get("spec"))
    for path, why in _labels(spec.get("nodeLabels"), ("spec", "nodeLabels")):
        yield Violation(FLAVOR_LABELS_INVALID, path, why)
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(_list(spec.get("nodeTaints"))):
        taint, path = _dict(taint), ("spec", "nodeTaints", i)
        key, value = str(taint.get("key", "")), str(taint.get("value", ""))
        for why in qualified_name_errors(key):
            yield Violation(FLAVOR_LABELS_INVALID, (*path, "key"), f"{key!r}: {why}")
        for why in label_value_errors(value):
            yield Violation(FLAVOR_LABELS_INVALID, (*path, "value"), f"{value!r}: {why}")
        ident = (key, str(taint.get("effect", "")))
        if ident in seen:
            why = "taints must be unique by key and effect pair"
            yield Violation(FLAVOR_TAINT_REPEATED, path, why)
        seen.add(ident)
    for i, toleration in enumerate(_list(spec.get("tolerations"))):
        key = str(_dict(toleration).get("key") or "")
        for why in qualified_name_errors(key) if key else ():
            path = ("spec", "tolerations", i, "key")
            yield Violation(FLAVOR_LABELS_INVALID, path, f"{key!r}: {why}")
