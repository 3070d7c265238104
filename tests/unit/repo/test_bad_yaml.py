"""YAML that once crashed the loader (or everything after it) is a finding at its file and line."""

from __future__ import annotations

import pytest
import yaml

from auditor.repo.manifests import load_text
from auditor.repo.pyyaml_reader import MAX_DEPTH, load_one

HEAD = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: a}\n"


def problems(text: str) -> list[tuple[str, int]]:
    _, found = load_text(text, "f.yaml")
    assert all(f.file == "f.yaml" and f.message for f in found)
    return [(f.rule.id, f.line or 0) for f in found]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: &a {b: *a}\n", [("yaml-recursive-alias", 1)]),
        (HEAD + "spec: &s\n  again: [*s]\n", [("yaml-recursive-alias", 5)]),  # the node
        ("x: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n", [("yaml-too-deep", 1)]),
        (HEAD + "spec:\n  weight: " + "9" * 5000 + "\n", [("yaml-bad-number", 5)]),
        (HEAD + "spec:\n  weight: .inf\n", [("yaml-bad-number", 5)]),
        (HEAD + "spec:\n  weight: -.inf\n", [("yaml-bad-number", 5)]),
        (HEAD + "spec:\n  weight: .nan\n", [("yaml-bad-number", 5)]),
        ("apiVersion: v1\nkind: Namespace\nmetadata: [a, b]\n", [("missing-identity", 1)]),
        ("apiVersion: v1\nkind: Namespace\nmetadata: just-a-name\n", [("missing-identity", 1)]),
        (HEAD + "spec:\n  ~: 1\n", [("yaml-bad-key", 5)]),
        (HEAD + "spec:\n  at: !!timestamp soon\n", [("yaml-syntax", 5)]),
        (HEAD + "spec:\n  on: !!bool maybe\n", [("yaml-syntax", 5)]),
        (HEAD + "spec:\n  names: !!set x\n", [("yaml-syntax", 5)]),
        (HEAD + "spec:\n  data: !!binary aGVsbG8=\n", [("yaml-syntax", 5)]),
    ],
    ids=[
        "recursive-alias",
        "recursive-alias-in-a-list",
        "too-deep",
        "5000-digit-int",
        "inf",
        "minus-inf",
        "nan",
        "metadata-list",
        "metadata-string",
        "null-key",
        "not-a-timestamp",
        "not-a-bool",
        "a-set",
        "bytes",
    ],
)
def test_bad_yaml_is_a_finding_at_its_line(text: str, expected: list[tuple[str, int]]) -> None:
    assert problems(text) == expected


def test_keys_are_the_strings_kubernetes_makes_of_them() -> None:
    """sigs.k8s.io/yaml turns `1` into "1" and `true` into "true": distinct keys, not duplicates."""
    resources, found = load_text(HEAD + "spec:\n  1: a\n  true: b\n  1.5: c\n  1e+06: d\n", "f")
    assert found == []
    assert resources[0].body["spec"] == {"1": "a", "true": "b", "1.5": "c", "1e+06": "d"}
    assert resources[0].line_of(["spec", "true"]) == 6


def test_keys_that_become_the_same_string_are_duplicates() -> None:
    assert problems(HEAD + "spec:\n  1: a\n  '1': b\n") == [("yaml-duplicate-key", 6)]
    assert problems(HEAD + "spec:\n  true: a\n  yes: b\n") == [("yaml-duplicate-key", 6)]


def test_the_other_documents_of_the_file_still_load() -> None:
    text = "a: &a {b: *a}\n---\n" + HEAD + "spec: {clusterQueue: cq}\n"
    resources, found = load_text(text, "f.yaml")
    assert [(f.rule.id, f.line) for f in found] == [("yaml-recursive-alias", 1)]
    assert [r.name for r in resources] == ["q"]


@pytest.mark.parametrize(
    "text",
    ["a: &a {b: *a}\n", "at: !!timestamp soon\n", "n: " + "9" * 5000 + "\n", "x: .nan\n"],
    ids=["recursive-alias", "bad-timestamp", "5000-digits", "nan"],
)
def test_yaml_held_in_a_string_is_read_with_the_same_limits(text: str) -> None:
    """A ConfigMap's embedded YAML (Kueue's Configuration): a YAMLError at its line, as
    yaml.safe_load's own errors are, never another exception."""
    with pytest.raises(yaml.YAMLError) as caught:
        load_one(text)
    assert caught.value.problem_mark.line == 0  # type: ignore[attr-defined]
    assert load_one("a: 1\nb: [x]\n") == {"a": 1, "b": ["x"]}


def test_a_tab_indent_is_called_a_tab() -> None:
    """PyYAML says 'found character that cannot start any token'; a person wants to hear tab."""
    _, [found] = load_text(HEAD + "spec:\n\tclusterQueue: q\n", "f.yaml")
    assert (found.rule.id, found.line) == ("yaml-syntax", 5)
    assert "a tab at column 1: YAML indents with spaces only" in found.message
    _, [other] = load_text(HEAD + "spec: [\n", "f.yaml")
    assert "tab" not in other.message
