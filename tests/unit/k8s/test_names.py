from __future__ import annotations

import pytest

from auditor.k8s.names import label_value_errors, qualified_name_errors


@pytest.mark.parametrize(
    "name", ["cpu", "nvidia.com/gpu", "example.com/My_Name.1", "a" * 63, f"{'b' * 253}/x"]
)
def test_qualified_names(name: str) -> None:
    assert qualified_name_errors(name) == []


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "name part must be non-empty"),
        ("/gpu", "prefix part must be non-empty"),
        ("a/b/c", "an optional prefix and a name"),
        ("Example.com/gpu", "prefix part must be a lowercase RFC 1123 subdomain"),
        ("nvidia.com/gpu_", "name part must consist of alphanumeric characters"),
        ("a" * 64, "name part must be no more than 63 characters"),
        ("has space", "must start and end with an alphanumeric character"),
    ],
)
def test_what_is_no_qualified_name_and_why(name: str, why: str) -> None:
    assert any(why in e for e in qualified_name_errors(name)), qualified_name_errors(name)


def test_label_values_may_be_empty_but_not_spaced_or_long() -> None:
    assert label_value_errors("") == [] and label_value_errors("present") == []
    assert label_value_errors("NVIDIA A100") and label_value_errors("x" * 64)
    assert label_value_errors("-dash") and not label_value_errors("A100_80GB.v2")
