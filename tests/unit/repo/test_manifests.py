from __future__ import annotations

import pytest

from auditor.repo.manifests import load_bytes, load_text

NAMESPACE = """\
# a comment first
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels:
    platform.example.com/kueue: enabled
"""


def test_objects_remember_file_and_line_of_each_field() -> None:
    [ns], problems = load_text(NAMESPACE, "tenants/team-a/gpu-prod/namespace.yaml")
    assert problems == []
    assert (ns.kind, ns.name, ns.line) == ("Namespace", "team-a", 2)
    assert ns.line_of(["metadata", "labels", "platform.example.com/kueue"]) == 7
    assert ns.line_of(["metadata", "labels", "absent"]) == 6  # nearest existing parent


def test_multi_document_lines_count_from_file_start() -> None:
    text = NAMESPACE + "---\n" + NAMESPACE.replace("team-a", "team-b")
    found, _ = load_text(text, "f.yaml")
    assert [(r.name, r.line) for r in found] == [("team-a", 2), ("team-b", 10)]


@pytest.mark.parametrize(
    ("text", "rule", "line"),
    [
        (
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  name: b\n",
            "yaml-duplicate-key",
            5,
        ),
        ("- just\n- a list\n", "not-a-mapping", 1),
        ("kind: Namespace\nmetadata: {name: a}\n", "missing-identity", 1),
        ("apiVersion: v1\nkind: Namespace\nmetadata: {}\n", "missing-identity", 1),
        ("apiVersion: v1\nkind: [unclosed\n", "yaml-syntax", 3),
        (
            "a: &a [1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: &c [*b, *b, *b, *b, *b, *b, *b]\n"
            "d: &d [*c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d]\n"
            "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f]\n",
            "yaml-too-large",
            1,
        ),
    ],
    ids=["duplicate-key", "not-a-mapping", "no-apiversion", "no-name", "syntax", "alias-bomb"],
)
def test_bad_input_is_a_finding_with_its_line(text: str, rule: str, line: int) -> None:
    found, problems = load_text(text, "bad.yaml")
    assert found == []
    assert [(p.rule.id, p.file, p.line) for p in problems] == [(rule, "bad.yaml", line)]


def test_loading_goes_on_after_a_bad_document() -> None:
    text = "- not a mapping\n---\n" + NAMESPACE
    found, problems = load_text(text, "f.yaml")
    assert [r.name for r in found] == ["team-a"]
    assert [p.rule.id for p in problems] == ["not-a-mapping"]


def test_non_utf8_file_names_the_byte_and_line() -> None:
    found, [problem] = load_bytes(b"apiVersion: v1\nkind: \xff\n", "latin.yaml")
    assert found == []
    assert (problem.rule.id, problem.line) == ("not-utf8", 2)
    assert "0xff" in problem.message


def test_field_lines_of_a_later_document_survive_empty_and_bad_documents_before_it() -> None:
    # lines are derived again from the text on first use: the document index must line up
    text = "---\n---\n- a list\n---\n" + NAMESPACE + "  annotations: {1: one, 'x': [a, {b: c}]}\n"
    [ns], problems = load_text(text, "f.yaml")
    assert [p.rule.id for p in problems] == ["not-a-mapping"]
    assert ns.line == 6
    assert ns.line_of(["metadata", "labels", "platform.example.com/kueue"]) == 11
    assert ns.line_of(["metadata", "annotations", "1"]) == 12
    assert ns.line_of(["metadata", "annotations", "x", 1, "b"]) == 12
    assert ns.line_of(["metadata", "annotations", "x", 7]) == 12


def test_duplicate_key_names_the_line_of_the_first_one() -> None:
    _, [problem] = load_text("a: 1\nb:\n  c: 2\n  d: 3\n  c: 4\n", "f.yaml")
    assert (problem.rule.id, problem.line) == ("yaml-duplicate-key", 5)
    assert "(first at line 3)" in problem.message
