"""Keys in the order a person writes them, for every YAML file onboarding writes.

The API server returns a custom resource's fields sorted by name, so an object read live and
dumped as it came reads `borrowingLimit` before `name` and an RBAC rule's `verbs` before its
`apiGroups`: nobody writes that, and review diffs are hard to scan. A mapping's keys are put in
the known order of the field it sits under (ORDERS), else with `name` first (a list item is
known by its name); the keys no order names keep the order they came in, after those it names.
"""

from __future__ import annotations

import typing as t

from auditor.kueue.quota import QUOTA_FIELDS

# Under which field (None: a whole object) a mapping's keys go in which order.
ORDERS: dict[str | None, tuple[str, ...]] = {
    None: ("apiVersion", "kind", "metadata"),
    "metadata": ("name", "namespace", "labels", "annotations"),
    "rules": ("apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs"),
    "roleRef": ("apiGroup", "kind", "name"),
    "subjects": ("kind", "name", "namespace", "apiGroup"),
    "resourceGroups": ("coveredResources", "flavors"),
    "resources": ("name", *QUOTA_FIELDS),
    "nodeTaints": ("key", "operator", "value", "effect"),
    "tolerations": ("key", "operator", "value", "effect", "tolerationSeconds"),
    "matchExpressions": ("key", "operator", "values"),
}
NAME_FIRST = ("name",)


def ordered(value: t.Any, under: str | None = None) -> t.Any:
    """`value` with every mapping's keys in the order a person writes them (a new value)."""
    if isinstance(value, list):
        return [ordered(item, under) for item in value]
    if not isinstance(value, dict):
        return value
    order = ORDERS.get(under, NAME_FIRST)
    rank = {key: i for i, key in enumerate(order)}
    keys = sorted(value, key=lambda k: rank.get(k, len(order)))  # stable: the rest as they came
    return {key: ordered(value[key], key) for key in keys}
