"""Label selectors as the API server reads them (metav1.LabelSelectorAsSelector).

`{}` selects everything. A nil selector means what the API using it says: Kueue's
ClusterQueue namespaceSelector and an aggregation rule's clusterRoleSelectors select nothing,
so callers state the reading they need (`nil=`). A selector the API server would reject (an
unknown operator, In/NotIn without values, Exists/DoesNotExist with values) selects nothing.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class SelectorError(ValueError):
    """The selector is not one the API server accepts."""


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: t.Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        return present if self.operator == "Exists" else not present


@dataclass(frozen=True)
class Selector:
    requirements: tuple[Requirement, ...]  # matchLabels entries become `In` with one value

    def matches(self, labels: t.Mapping[str, t.Any] | None) -> bool:
        found = {str(k): str(v) for k, v in (labels or {}).items()}
        return all(r.matches(found) for r in self.requirements)

    def requires(self, key: str, value: str) -> bool:
        """Whether everything this selector matches carries `key=value`."""
        return any(
            r.key == key and r.operator == "In" and set(r.values) == {value}
            for r in self.requirements
        )


def parse(raw: t.Any) -> Selector | None:
    """The selector in `raw` (None for a nil one); SelectorError if the API server rejects it."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise SelectorError(f"a label selector is a mapping, not {type(raw).__name__}")
    labels, exprs = raw.get("matchLabels") or {}, raw.get("matchExpressions") or []
    if not isinstance(labels, dict) or not isinstance(exprs, list):
        raise SelectorError("matchLabels is a mapping and matchExpressions a list")
    found = [Requirement(str(k), "In", (str(v),)) for k, v in labels.items()]
    for expr in exprs:
        if not isinstance(expr, dict):
            raise SelectorError("each matchExpression is a mapping")
        op, values = str(expr.get("operator")), expr.get("values") or []
        if op not in OPERATORS or not isinstance(values, list):
            raise SelectorError(f"operator {op!r} is not one of {', '.join(OPERATORS)}")
        if bool(values) != (op in ("In", "NotIn")):
            raise SelectorError(f"{op} {'needs' if op in ('In', 'NotIn') else 'takes no'} values")
        found.append(Requirement(str(expr.get("key")), op, tuple(str(v) for v in values)))
    return Selector(tuple(found))


def selects(raw: t.Any, labels: t.Mapping[str, t.Any] | None, *, nil: bool) -> bool:
    """Whether the selector `raw` matches `labels`; `nil` is the answer for an absent selector."""
    try:
        selector = parse(raw)
    except SelectorError:
        return False
    return nil if selector is None else selector.matches(labels)
