"""The OpenAPI formats of Kubernetes schemas, as Kubernetes decodes values of them.

A schema's `format` names what the Go type behind the field holds: `int32` and `int64` are Go
integers of that width, `byte` is base64 (Go's standard encoding, padded) and `date-time` is
RFC 3339 (metav1.Time). These are the formats' definitions, not facts about any field: which
field has which format is the schemas' (schemas/<cluster>/), and the schema validator
(auditor/schemas/validator.py) hands these to its format checkers.

Who holds a value to its format differs: the API server decodes built-in kinds into their Go
types and checks a CRD's string formats, but stores any integer a CRD's `type: integer` takes;
an integer past its width then fails only where a Go program decodes the object (a webhook, a
controller's informer). A built-in kind's integer past its width is refused by a create or an
update, but a server-side apply (Argo CD's ServerSideApply=true) stores it wrapped around:
`value: 3000000000` on a PriorityClass becomes -1294967296.
"""

from __future__ import annotations

import re
import typing as t

# The integer formats: the range of the Go integer of that width.
INTEGER_RANGES: dict[str, tuple[int, int]] = {
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}

# The string formats: the text Kubernetes decodes. byte: base64.StdEncoding (padded; Go skips
# line breaks, so a final one passes); date-time: RFC 3339 as metav1.Time parses it
# (time.RFC3339, fraction optional).
STRING_PATTERNS: dict[str, str] = {
    "byte": r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$",
    "date-time": (
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
        r"(?:Z|[+-][0-9]{2}:[0-9]{2})\Z"  # Go's parser takes nothing after: no final newline
    ),
}
_COMPILED = {name: re.compile(p) for name, p in STRING_PATTERNS.items()}


def admits(format_: str, value: t.Any) -> bool:
    """Whether `value` fits `format_`; a value of another type, or a format not defined here,
    is left to the schema's `type` (the format says nothing about it)."""
    bounds = INTEGER_RANGES.get(format_)
    if bounds is not None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return True
        return bounds[0] <= value <= bounds[1]
    pattern = _COMPILED.get(format_)
    if pattern is not None and isinstance(value, str):
        return pattern.match(value) is not None
    return True


def wrapped(format_: str, value: int) -> int:
    """The integer of `format_`'s width that `value` wraps around to (two's complement): what a
    server-side apply stores for a built-in kind's integer past its width."""
    low, high = INTEGER_RANGES[format_]
    span = high - low + 1
    return (value - low) % span + low


def described(format_: str) -> str:
    """The format in words, for a finding."""
    bounds = INTEGER_RANGES.get(format_)
    if bounds is not None:
        return f"{format_} ({bounds[0]} to {bounds[1]})"
    return {"byte": "byte (base64)", "date-time": "date-time (RFC 3339)"}.get(format_, format_)
