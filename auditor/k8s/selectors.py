"""Label selectors as the API server reads them (metav1.LabelSelectorAsSelector).

`{}` selects everything. A nil selector means what the API using it says: Kueue's
ClusterQueue namespaceSelector and an aggregation rule's clusterRoleSelectors select nothing,
so callers state the reading they need (`nil=`). A selector the API server would reject
(`problems`: an unknown operator, In/NotIn without values, Exists/DoesNotExist with values, a key
that is no qualified name, a value that is no label value) selects nothing.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor.k8s.names import label_errors, label_value_errors, qualified_name_errors
from auditor.k8s.objects import FieldPath

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
WITH_VALUES = ("In", "NotIn")  # the other two take none


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


def problems(raw: t.Any) -> t.Iterator[tuple[FieldPath, str]]:
    """Why the API server rejects the selector `raw`, each at its field inside the selector and
    in the server's words; nothing for a valid or a nil selector."""
    if raw is None:
        return
    if not isinstance(raw, dict):
        yield (), f"a label selector is a mapping, not {type(raw).__name__}"
        return
    labels, exprs = raw.get("matchLabels") or {}, raw.get("matchExpressions") or []
    if not isinstance(labels, dict):
        yield ("matchLabels",), "matchLabels is a mapping"
        labels = {}
    if not isinstance(exprs, list):
        yield ("matchExpressions",), "matchExpressions is a list"
        exprs = []
    for key, why in label_errors(labels):
        yield ("matchLabels", key), why
    for i, expr in enumerate(exprs):
        at: FieldPath = ("matchExpressions", i)
        if not isinstance(expr, dict):
            yield at, "each matchExpression is a mapping"
            continue
        operator, values = expr.get("operator"), expr.get("values") or []
        if not isinstance(values, list):
            yield (*at, "values"), "values is a list"
            values = []
        if operator not in OPERATORS:
            yield (*at, "operator"), f"{operator!r}: not a valid selector operator"
        elif (operator in WITH_VALUES) != bool(values):
            yield (
                (*at, "values"),
                (
                    "must be specified when `operator` is 'In' or 'NotIn'"
                    if operator in WITH_VALUES
                    else "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                ),
            )
        for why in qualified_name_errors(str(expr.get("key", ""))):
            yield (*at, "key"), why
        for v, value in enumerate(values):
            for why in label_value_errors(str(value)):
                yield (*at, "values", v), why


def parse(raw: t.Any) -> Selector | None:
    """The selector in `raw` (None for a nil one); SelectorError if the API server rejects it."""
    for _path, why in problems(raw):
        raise SelectorError(why)
    if raw is None:
        return None
    found = [
        Requirement(str(k), "In", (str(v),)) for k, v in (raw.get("matchLabels") or {}).items()
    ]
    for expr in raw.get("matchExpressions") or []:
        values = tuple(str(v) for v in expr.get("values") or [])
        found.append(Requirement(str(expr.get("key")), str(expr["operator"]), values))
    return Selector(tuple(found))


def selects(raw: t.Any, labels: t.Mapping[str, t.Any] | None, *, nil: bool) -> bool:
    """Whether the selector `raw` matches `labels`; `nil` is the answer for an absent selector."""
    return matcher(raw, nil=nil)(labels)


def matcher(raw: t.Any, *, nil: bool) -> t.Callable[[t.Mapping[str, t.Any] | None], bool]:
    """`selects` with `raw` parsed once: for one selector judged against many label sets."""
    try:
        selector = parse(raw)
    except SelectorError:
        return lambda _labels: False
    if selector is None:
        return lambda _labels: nil
    return selector.matches
