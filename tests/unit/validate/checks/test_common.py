"""Label selectors as Kueue reads them: nil selects nothing, {} everything."""

from __future__ import annotations

import pytest

from auditor.validate.checks._common import requires_label, selects

LABELS = {"platform.example.com/kueue": "enabled", "tier": "gold"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (None, False),
        ({}, True),
        ({"matchLabels": {"tier": "gold"}}, True),
        ({"matchLabels": {"tier": "silver"}}, False),
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["gold"]}]}, False),
        ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, False),
        ({"matchExpressions": [{"key": "tier", "operator": "Bogus"}]}, False),
        # The API server rejects these; read as selecting nothing, never as an error.
        ({"matchLabels": ["not", "a", "map"]}, False),
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": []}]}, False),
    ],
)
def test_selects_follows_label_selector_semantics(selector: object, expected: bool) -> None:
    assert selects(selector, LABELS) is expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (None, False),
        ({}, False),
        ({"matchLabels": {"platform.example.com/kueue": "enabled", "tier": "gold"}}, True),
        ({"matchLabels": {"platform.example.com/kueue": "disabled"}}, False),
        (
            {
                "matchExpressions": [
                    {"key": "platform.example.com/kueue", "operator": "In", "values": ["enabled"]}
                ]
            },
            True,
        ),
        (
            {"matchExpressions": [{"key": "platform.example.com/kueue", "operator": "Exists"}]},
            False,
        ),
    ],
)
def test_requires_label_only_when_no_unlabelled_namespace_can_match(
    selector: object, expected: bool
) -> None:
    assert requires_label(selector, "platform.example.com/kueue", "enabled") is expected
