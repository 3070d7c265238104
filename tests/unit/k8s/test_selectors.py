"""Label selectors as the API server reads them, with the nil reading chosen by the caller."""

from __future__ import annotations

import pytest

from auditor.k8s import selectors
from auditor.k8s.names import NAME_RULE

LABELS = {"app": "web", "tier": "gold"}


def expr(key: str, op: str, *values: str) -> dict[str, object]:
    return {"key": key, "operator": op, **({"values": list(values)} if values else {})}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({}, True),
        ({"matchLabels": {"app": "web", "tier": "gold"}}, True),
        ({"matchLabels": {"app": "web", "tier": "silver"}}, False),
        ({"matchExpressions": [expr("tier", "In", "gold", "silver")]}, True),
        ({"matchExpressions": [expr("zone", "In", "a")]}, False),
        ({"matchExpressions": [expr("tier", "NotIn", "gold")]}, False),
        ({"matchExpressions": [expr("zone", "NotIn", "a")]}, True),  # absent key: not in
        ({"matchExpressions": [expr("tier", "Exists")]}, True),
        ({"matchExpressions": [expr("tier", "DoesNotExist")]}, False),
        # Labels and expressions are ANDed.
        ({"matchLabels": {"app": "web"}, "matchExpressions": [expr("tier", "In", "x")]}, False),
    ],
)
def test_selects_as_the_api_server_does(selector: object, expected: bool) -> None:
    assert selectors.selects(selector, LABELS, nil=False) is expected


def test_nil_means_what_the_caller_says_and_empty_means_everything() -> None:
    assert selectors.selects(None, LABELS, nil=False) is False  # Kueue's namespaceSelector
    assert selectors.selects(None, LABELS, nil=True) is True
    assert selectors.selects({}, {}, nil=False) is True


@pytest.mark.parametrize(
    "selector",
    [
        {"matchExpressions": [expr("tier", "Bogus", "gold")]},
        {"matchExpressions": [expr("tier", "In")]},  # In needs values
        {"matchExpressions": [expr("tier", "Exists", "gold")]},  # Exists takes none
        {"matchLabels": ["tier"]},
        {"matchLabels": {"tier/": "gold"}},  # no qualified name
        {"matchExpressions": [expr("tier", "In", "gold!")]},  # no label value
        "tier=gold",
    ],
)
def test_a_selector_the_api_server_rejects_selects_nothing(selector: object) -> None:
    with pytest.raises(selectors.SelectorError):
        selectors.parse(selector)
    assert selectors.selects(selector, LABELS, nil=True) is False


def test_requires_only_when_every_match_carries_the_label() -> None:
    def requires(raw: object) -> bool:
        parsed = selectors.parse(raw)
        return parsed is not None and parsed.requires("tier", "gold")

    assert requires({"matchLabels": {"tier": "gold", "app": "web"}})
    assert requires({"matchExpressions": [expr("tier", "In", "gold")]})
    assert not requires({"matchExpressions": [expr("tier", "In", "gold", "silver")]})
    assert not requires({"matchExpressions": [expr("tier", "Exists")]})
    assert not requires({})


def test_each_problem_is_at_its_field_inside_the_selector_in_the_servers_words() -> None:
    raw = {
        "matchLabels": {"tier": "gold!"},
        "matchExpressions": [expr("tier", "In"), expr("zone", "Near", "a"), expr("x/", "Exists")],
    }
    assert list(selectors.problems(raw)) == [
        (("matchLabels", "tier"), "'gold!': a valid label " + NAME_RULE),
        (("matchExpressions", 0, "values"), "must be specified when `operator` is 'In' or 'NotIn'"),
        (("matchExpressions", 1, "operator"), "'Near': not a valid selector operator"),
        (("matchExpressions", 2, "key"), "name part must be non-empty"),
    ]
    assert list(selectors.problems({"matchExpressions": [expr("tier", "Exists")]})) == []
    assert list(selectors.problems(None)) == []
