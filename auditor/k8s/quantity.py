"""Kubernetes resource quantities: parse exactly, compare by value, print as the API server does.

`parse("3072Mi") == parse("3Gi")` and `canonical("3072Mi") == "3Gi"`. The arithmetic is exact
(Decimal); like `resource.Quantity` in apimachinery, values are rounded up to whole nano units
and keep the family of their suffix (binary `Ki`..`Ei`, decimal `n`..`E`, or an `e` exponent).
Canonical form follows `Quantity.CanonicalizeBytes`: binary values below 1Ki or not whole print
as decimal; decimal values print with the largest SI suffix (or exponent) that keeps an integer.

`printed(text)` is what the API server sends back for a manifest's text: apimachinery keeps the
text itself when its fast parse path deems it canonical (so `+5`, `1E3` and `05` survive), and
prints the canonical form otherwise. A test holds both against a real kube-apiserver.
"""

from __future__ import annotations

import decimal
import enum
import re
from dataclasses import dataclass, field
from decimal import Decimal

_CONTEXT = decimal.Context(prec=200)  # far beyond any quantity: every step below stays exact
_NANO = Decimal("1e-9")
_INT64 = 2**63
# The largest power of ten we compute with. The API server stores `1e309` in a CRD's quantity
# field as text, but no node has such a quantity and Kueue's arithmetic is 64-bit (about 9e18):
# beyond this, exact steps would need thousands of digits (`1e999999999`, a billion).
MAX_EXPONENT = 100

# The CRDs' own pattern for int-or-string quantities.
_PATTERN = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?"
)

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}  # powers of two
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXPONENT = {e: s for s, e in _DECIMAL.items()}
_BINARY_BY_EXPONENT = {e: s for s, e in _BINARY.items()}


class QuantityError(ValueError):
    """The text is not a Kubernetes quantity."""


class QuantityTooLarge(QuantityError):
    """A quantity the API server stores, but past what we (and Kueue) compute with."""


class Format(enum.Enum):
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"
    DECIMAL_EXPONENT = "DecimalExponent"


@dataclass(frozen=True, order=True)
class Quantity:
    """A quantity's exact value; equality and order are by value, whatever the suffix."""

    value: Decimal
    format: Format = field(default=Format.DECIMAL_SI, compare=False)
    text: str | None = field(default=None, compare=False)  # parsed text the server would keep

    def __str__(self) -> str:
        return self.canonical()

    def printed(self) -> str:
        """What the API server prints for the text this quantity was parsed from."""
        return self.text if self.text is not None else self.canonical()

    def canonical(self) -> str:
        """The text the API server prints for this quantity."""
        if self.value == 0:
            return "0"
        if self.format is Format.BINARY_SI and abs(self.value) >= 1024 and _is_whole(self.value):
            return _base1024(int(self.value))
        return _base1000(self.value, exponent_form=self.format is Format.DECIMAL_EXPONENT)

    # Like Quantity.Add in apimachinery: the left format stays, unless the left side is zero.
    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(_CONTEXT.add(self.value, other.value), self._format_with(other))

    def __sub__(self, other: Quantity) -> Quantity:
        return Quantity(_CONTEXT.subtract(self.value, other.value), self._format_with(other))

    def _format_with(self, other: Quantity) -> Format:
        return other.format if self.value == 0 else self.format


ZERO = Quantity(Decimal(0))


def parse(raw: object) -> Quantity:
    """A quantity from manifest text or a YAML number (int-or-string fields take both)."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise QuantityError(f"{raw!r} is not a quantity (expected a string such as '4' or '8Gi')")
    text = raw if isinstance(raw, str) else repr(raw)
    match = _PATTERN.fullmatch(text)
    if match is None:
        raise QuantityError(f"{text!r} is not a quantity (e.g. '500m', '4', '8Gi', '1e3')")
    number = Decimal(match["number"])
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        fmt, shift = Format.BINARY_SI, _BINARY[suffix] * 3 // 10 + 1  # 2**60 < 10**19
    elif suffix in _DECIMAL:
        fmt, shift = Format.DECIMAL_SI, _DECIMAL[suffix]
    else:
        exponent = Decimal(suffix[1:])
        if not _is_whole(exponent):
            raise QuantityError(f"{text!r} is not a quantity: the exponent must be whole")
        fmt, shift = Format.DECIMAL_EXPONENT, _clamp(exponent)
    magnitude = number.adjusted() + shift if number else 0
    if magnitude > MAX_EXPONENT:
        shown = text if len(text) <= 40 else f"{text[:20]}...({len(text)} characters)"
        raise QuantityTooLarge(
            f"{shown!r} is out of range: kueue-gitops computes quantities up to "
            f"1e{MAX_EXPONENT} (Kueue's own arithmetic stops near 9.2e18)"
        )
    if not number or magnitude < -MAX_EXPONENT:
        value = _NANO.copy_sign(number) if number else Decimal(0)  # far below a nano unit
    elif fmt is Format.BINARY_SI:
        value = _CONTEXT.multiply(number, Decimal(2 ** _BINARY[suffix]))
    else:
        value = number.scaleb(shift, _CONTEXT)
    # Like apimachinery: below a nano unit, round away from zero.
    value = value.quantize(_NANO, rounding=decimal.ROUND_UP, context=_CONTEXT)
    kept = text if _kept(match["number"], suffix, fmt) else None
    return Quantity(value.normalize(_CONTEXT), fmt, kept)


def _clamp(exponent: Decimal) -> int:
    """An exponent as an int, held within twice the range we compute (`e` then 5,000 nines)."""
    bound = 2 * MAX_EXPONENT
    if abs(exponent) > bound:
        return bound if exponent > 0 else -bound
    return int(exponent)


def canonical(raw: object) -> str:
    """The canonical text of a quantity's value (`Quantity.String()` of a computed quantity)."""
    return parse(raw).canonical()


def printed(raw: object) -> str:
    """What the API server sends back for this manifest value (always a string)."""
    return parse(raw).printed()


def round_trips(raw: object) -> bool:
    """True when the API server would print this manifest value back unchanged."""
    return isinstance(raw, str) and printed(raw) == raw


def value_of(raw: object) -> Decimal:
    """A quantity's value, so that `1Ti` equals `1024Gi` (QuantityError, a ValueError, if bad)."""
    return parse(raw).value


def is_binary(*raws: object) -> bool:
    """Whether any of the quantities is written in binary units (memory-like); None is skipped."""
    return any(r is not None and parse(r).format is Format.BINARY_SI for r in raws)


def shown(value: Decimal, *, binary: bool) -> str:
    """A computed value as the API server prints it, in binary units for memory-like values."""
    return Quantity(value, Format.BINARY_SI if binary else Format.DECIMAL_SI).canonical()


def _kept(number: str, suffix: str, fmt: Format) -> bool:
    """ParseQuantity's fast path keeps the text it deems canonical (apimachinery quantity.go)."""
    if number == "0" and not suffix:
        return True
    whole, _, fraction = number.lstrip("+-").partition(".")
    digits = whole.lstrip("0") or "0"
    shifted = digits + fraction
    if len(shifted) > 19:  # more digits than an int64 holds: never the fast path
        return False
    if fmt is Format.BINARY_SI:
        exponent = _BINARY[suffix]
        precision = 15 - len(digits) - int(exponent * 3 / 10) - 1
        value = int(shifted)
        return (
            "." not in number
            and precision >= 0
            and value << exponent < _INT64
            and value & 0x07 != 0
        )
    exponent = _DECIMAL[suffix] if fmt is Format.DECIMAL_SI else int(Decimal(suffix[1:]))
    scale = exponent - len(fraction)
    return (
        18 - len(digits) - len(fraction) >= 0
        and scale >= -9
        and int(shifted) < _INT64
        and scale % 3 == 0
        and not shifted.endswith("000")
        and shifted[0] != "0"
    )


def _is_whole(value: Decimal) -> bool:
    return value == value.to_integral_value()


def _base1024(value: int) -> str:
    exponent = 0
    while value % 1024 == 0 and exponent < 60:
        value //= 1024
        exponent += 10
    return f"{value}{_BINARY_BY_EXPONENT.get(exponent, '')}"


def _base1000(value: Decimal, *, exponent_form: bool) -> str:
    """mantissa * 10**exponent with a whole mantissa and the largest exponent divisible by 3."""
    sign, digits, exponent = value.normalize(_CONTEXT).as_tuple()
    assert isinstance(exponent, int)
    mantissa = int("".join(map(str, digits)))
    shift = exponent % 3  # bring the exponent down to a multiple of 3
    mantissa, exponent = mantissa * 10**shift, exponent - shift
    if not exponent_form and exponent > 18:  # beyond exa there is no SI suffix: grow the mantissa
        mantissa, exponent = mantissa * 10 ** (exponent - 18), 18
    if exponent_form:
        suffix = f"e{exponent}" if exponent else ""
    else:
        suffix = _DECIMAL_BY_EXPONENT[exponent]
    return f"{'-' if sign else ''}{mantissa}{suffix}"
