"""What a manifest file that did not load may define (auditor/drift/unread.py)."""

from __future__ import annotations

from auditor.drift import unread
from auditor.k8s.objects import ResourceKey

KUEUE = "kueue.x-k8s.io"


def test_the_items_of_a_list_at_the_top_level_are_named() -> None:
    data = (
        b"- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: LocalQueue\n"
        b"  metadata: {name: a, namespace: team-a}\n"
        b"- apiVersion: v1\n  kind: Namespace\n  metadata: {name: team-a}\n"
    )
    assert unread.identities(data) == [
        ResourceKey(KUEUE, "LocalQueue", "team-a", "a"),
        ResourceKey("", "Namespace", None, "team-a"),
    ]


def test_a_byte_that_is_not_utf8_does_not_hide_the_object() -> None:
    data = (
        b"# caf\xe9\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: q\n"
    )
    assert unread.identities(data) == [ResourceKey(KUEUE, "ClusterQueue", None, "q")]


def test_the_documents_before_a_syntax_error_are_named() -> None:
    data = b"kind: Namespace\napiVersion: v1\nmetadata: {name: a}\n---\nkind: [\n"
    assert unread.identities(data) == [ResourceKey("", "Namespace", None, "a")]


def test_an_object_without_a_namespace_names_it_in_any() -> None:
    keys = {ResourceKey(KUEUE, "LocalQueue", None, "a"): "f.yaml"}
    assert unread.source(keys, ResourceKey(KUEUE, "LocalQueue", "team-b", "a")) == "f.yaml"
    assert unread.source(keys, ResourceKey(KUEUE, "LocalQueue", "team-b", "b")) is None
