"""The OpenAPI formats as Kubernetes decodes them (auditor/k8s/formats.py)."""

from __future__ import annotations

import typing as t

import pytest

from auditor.k8s import formats


@pytest.mark.parametrize(
    ("format_", "value", "fits"),
    [
        ("int32", 2**31 - 1, True),
        ("int32", 2**31, False),
        ("int32", -(2**31), True),
        ("int32", -(2**31) - 1, False),
        ("int32", 3000000000, False),
        ("int64", 3000000000, True),
        ("int64", 2**63, False),
        ("int32", "3000000000", True),  # a string is the schema's type to judge, not the format's
        ("int32", True, True),
        ("byte", "aGVsbG8=", True),
        ("byte", "aGVsbG8", False),  # Go's standard encoding wants the padding
        ("byte", "not base64!", False),
        ("date-time", "2026-12-03T13:00:00Z", True),
        ("date-time", "2026-12-03T13:00:00.5+01:00", True),
        ("date-time", "2026-12-03 13:00", False),
        ("date-time", "2026-12-03T13:00:00Z\n", False),  # a block scalar's newline: Go refuses it
        ("date-time", None, True),
        ("hostname", "anything at all", True),  # not a format Kubernetes' schemas here carry
    ],
)
def test_a_value_fits_its_format_as_kubernetes_decodes_it(
    format_: str, value: t.Any, fits: bool
) -> None:
    assert formats.admits(format_, value) is fits


def test_the_range_is_said_in_words() -> None:
    assert formats.described("int32") == "int32 (-2147483648 to 2147483647)"
    assert formats.described("byte") == "byte (base64)"


@pytest.mark.parametrize(
    ("value", "stored"),
    [(3000000000, -1294967296), (2147483648, -2147483648), (-3000000000, 1294967296), (7, 7)],
)
def test_an_int32_past_its_width_wraps_as_server_side_apply_stores_it(
    value: int, stored: int
) -> None:
    assert formats.wrapped("int32", value) == stored  # each measured on a sandbox's apiserver
