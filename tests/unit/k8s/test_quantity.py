from __future__ import annotations

from decimal import Decimal

import pytest

from auditor.k8s.quantity import (
    QuantityError,
    canonical,
    is_binary,
    parse,
    printed,
    round_trips,
    shown,
    value_of,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # decimal SI: the largest suffix that keeps a whole mantissa
        ("1000m", "1"),
        ("0.5", "500m"),
        (".5", "500m"),
        ("1.", "1"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("1.5k", "1500"),
        ("12000", "12k"),
        ("0.1", "100m"),
        ("100u", "100u"),
        ("1n", "1n"),
        ("0.1n", "1n"),  # rounded up to a whole nano unit
        ("-1000m", "-1"),
        ("+5", "5"),
        ("1E", "1E"),
        ("1000000000000000000000", "1000E"),
        # binary SI: whole values of at least 1Ki keep a binary suffix
        ("3072Mi", "3Gi"),
        ("2048Ki", "2Mi"),
        ("1536Mi", "1536Mi"),
        ("0.5Gi", "512Mi"),
        ("-0.5Gi", "-512Mi"),
        ("1.5Ki", "1536"),
        ("0.5Ki", "512"),
        ("0.1Ki", "102400m"),
        ("1023Ki", "1023Ki"),
        ("1Ti", "1Ti"),
        # decimal exponent
        ("1e3", "1e3"),
        ("1E3", "1e3"),
        ("12e6", "12e6"),
        ("1.5e3", "1500"),
        ("1e-3", "1e-3"),
        # zero in any form
        ("0Gi", "0"),
        ("0.000m", "0"),
        # YAML numbers in int-or-string fields
        (9, "9"),
        (0.5, "500m"),
    ],
)
def test_canonical_form_is_what_the_api_server_prints(text: str | float, expected: str) -> None:
    assert canonical(text) == expected
    assert canonical(expected) == expected  # canonical is a fixed point


def test_quantities_compare_by_value_whatever_the_suffix() -> None:
    assert parse("512Gi") == parse(549755813888)
    assert parse("1k") == parse("1000") == parse("1e3")
    assert hash(parse("1k")) == hash(parse("1000"))
    assert parse("500m") < parse("1") < parse("1Ki")
    assert parse("1Gi").value == Decimal(2**30)
    assert (parse("1Gi") + parse("1Gi")).canonical() == "2Gi"
    assert (parse("16") - parse("8")).canonical() == "8"
    assert (parse("0") + parse("1Ti")).canonical() == "1Ti"  # a zero start takes the other format


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # text apimachinery's fast path deems canonical is kept as written
        ("+5", "+5"),
        ("1.", "1."),
        ("1E3", "1E3"),
        ("05", "05"),
        ("+3Gi", "+3Gi"),
        ("1025Ki", "1025Ki"),
        ("0", "0"),
        # anything else is printed in canonical form
        ("1000", "1k"),
        ("1.50", "1500m"),
        ("1.5Gi", "1536Mi"),
        ("00", "0"),
        ("-0", "0"),
        ("1e-12", "1e-9"),
        (9, "9"),
        (0.5, "500m"),
    ],
)
def test_printed_is_what_the_api_server_sends_back(text: str | float, expected: str) -> None:
    assert printed(text) == expected


def test_only_strings_printed_back_unchanged_round_trip() -> None:
    assert round_trips("3Gi")
    assert round_trips("500m")
    assert round_trips("+5")  # odd, but the server keeps it: Argo CD sees no difference
    assert not round_trips("3072Mi")
    assert not round_trips(9)  # the server stores a string


@pytest.mark.parametrize("bad", ["", "abc", "1 Gi", "1K", "1Gb", "--1", "1e1.5", "Gi", None, True])
def test_text_that_is_not_a_quantity_is_rejected_with_the_text(bad: object) -> None:
    with pytest.raises(QuantityError, match="not a quantity"):
        parse(bad)


def test_values_compare_across_suffixes_and_print_in_the_units_they_were_written_in() -> None:
    assert value_of("1Ti") == value_of("1024Gi")
    assert is_binary("64", None, "256Gi")
    assert not is_binary("64", "500m", None)
    assert shown(value_of("512Gi") - value_of("256Gi"), binary=True) == "256Gi"
    assert shown(Decimal("1.5"), binary=False) == "1500m"
