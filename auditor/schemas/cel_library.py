"""The Kubernetes CEL extensions that cel-python lacks, as functions for celpy programs.

Kubernetes adds libraries to CEL (strings, lists, quantity, ...; see the Kubernetes docs, "CEL
in Kubernetes"). celpy calls `x.f(y)` as `f(x, y)`, so each method is a function of its
receiver. A rule that needs anything missing here is skipped offline and counted, never guessed.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from celpy import celtypes

from auditor.k8s import quantity as k8s_quantity


@dataclass(frozen=True)
class QuantityValue:
    """A `quantity(...)` value: compared and added by exact value."""

    value: k8s_quantity.Quantity


def _quantity(text: celtypes.StringType) -> QuantityValue:
    return QuantityValue(k8s_quantity.parse(str(text)))


def _is_quantity(text: celtypes.StringType) -> celtypes.BoolType:
    try:
        k8s_quantity.parse(str(text))
    except k8s_quantity.QuantityError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _other(value: t.Any) -> k8s_quantity.Quantity:
    return value.value if isinstance(value, QuantityValue) else k8s_quantity.parse(int(value))


def _compare(a: QuantityValue, b: t.Any) -> int:
    left, right = a.value.value, _other(b).value
    return (left > right) - (left < right)


def _index_of(target: t.Any, item: t.Any) -> celtypes.IntType:
    if isinstance(target, celtypes.StringType):
        return celtypes.IntType(str(target).find(str(item)))
    return celtypes.IntType(list(target).index(item) if item in target else -1)


def _last_index_of(target: t.Any, item: t.Any) -> celtypes.IntType:
    if isinstance(target, celtypes.StringType):
        return celtypes.IntType(str(target).rfind(str(item)))
    items = list(target)
    return celtypes.IntType(len(items) - 1 - items[::-1].index(item) if item in items else -1)


FUNCTIONS: dict[str, t.Callable[..., t.Any]] = {
    # strings
    "lowerAscii": lambda s: celtypes.StringType(str(s).lower()),
    "upperAscii": lambda s: celtypes.StringType(str(s).upper()),
    "trim": lambda s: celtypes.StringType(str(s).strip()),
    "replace": lambda s, old, new: celtypes.StringType(str(s).replace(str(old), str(new))),
    "split": lambda s, sep: celtypes.ListType(
        [celtypes.StringType(p) for p in str(s).split(str(sep))]
    ),
    "join": lambda items, sep="": celtypes.StringType(str(sep).join(str(i) for i in items)),
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    # lists
    "isSorted": lambda items: celtypes.BoolType(list(items) == sorted(items)),
    "sum": lambda items: sum(items, type(items[0])(0)) if items else celtypes.IntType(0),
    "min": lambda items: min(items),
    "max": lambda items: max(items),
    # quantity
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "compareTo": lambda a, b: celtypes.IntType(_compare(a, b)),
    "isLessThan": lambda a, b: celtypes.BoolType(_compare(a, b) < 0),
    "isGreaterThan": lambda a, b: celtypes.BoolType(_compare(a, b) > 0),
    "sign": lambda a: celtypes.IntType((a.value.value > 0) - (a.value.value < 0)),
    "isInteger": lambda a: celtypes.BoolType(a.value.value == a.value.value.to_integral_value()),
    "asInteger": lambda a: celtypes.IntType(int(a.value.value)),
    "asApproximateFloat": lambda a: celtypes.DoubleType(float(a.value.value)),
    "add": lambda a, b: QuantityValue(a.value + _other(b)),
    "sub": lambda a, b: QuantityValue(a.value - _other(b)),
}
