"""Only a bounded, well-formed answer is an answer: against a fake API server on loopback
(tests/fake_apiserver.py) that answers what no real one does.

A LIST answered with another kind, a Status under HTTP 200, no `items` or another apiVersion
leaves the kind unread (never read as empty: drift would call every object deleted); an answer
too long once decompressed, too deep or too wide is refused before it is built.
"""

from __future__ import annotations

import gzip
import json
import time
import typing as t
from pathlib import Path

import pytest

from auditor.live import answers
from auditor.live.apierrors import Forbidden, Malformed, Overrun
from auditor.live.kube import KubeCluster, Limits
from auditor.live.reading import read
from tests.fake_apiserver import Answer, FakeApiServer, empty_list, kubeconfig

CQ_API = "kueue.x-k8s.io/v1beta2"
RB_API = "rbac.authorization.k8s.io/v1"


@pytest.fixture
def server() -> t.Iterator[FakeApiServer]:
    fake = FakeApiServer()
    yield fake
    fake.close()


def connect(server: FakeApiServer, tmp_path: Path) -> KubeCluster:
    path = kubeconfig(tmp_path / "kc", {"fake": {"server": server.url}})
    return KubeCluster.connect("fake", kubeconfig=str(path), limits=Limits(deadline=30))


def queue(name: str, api: str = CQ_API, kind: str = "ClusterQueue") -> dict[str, t.Any]:
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name}, "spec": {}}


BINDING = queue("team-a", RB_API, "RoleBinding")
WRONG = {
    "items of another kind": {**empty_list(CQ_API, "ClusterQueue"), "items": [BINDING]},
    "a list of another kind": {**empty_list(RB_API, "RoleBinding"), "items": [BINDING]},
    "no items": {"kind": "ClusterQueueList", "apiVersion": CQ_API, "metadata": {}},
    "another apiVersion": {
        **empty_list("kueue.x-k8s.io/v1beta1", "ClusterQueue"),
        "items": [queue("a", "kueue.x-k8s.io/v1beta1")],
    },
    "items of another apiVersion": {
        **empty_list(CQ_API, "ClusterQueue"),
        "items": [queue("a", "kueue.x-k8s.io/v1beta1")],
    },
    "an item without a name": {**empty_list(CQ_API, "ClusterQueue"), "items": [{"spec": {}}]},
    "a Status of success": {"kind": "Status", "apiVersion": "v1", "status": "Success"},
    "items that are not a list": {**empty_list(CQ_API, "ClusterQueue"), "items": {"a": 1}},
}


@pytest.mark.parametrize("answer", list(WRONG.values()), ids=list(WRONG))
def test_a_list_not_of_the_kind_asked_leaves_the_kind_unread(
    server: FakeApiServer, tmp_path: Path, answer: dict[str, t.Any]
) -> None:
    server.answers[server.list_path(CQ_API, "ClusterQueue")] = Answer.of(answer)
    cluster = connect(server, tmp_path)
    with pytest.raises(Malformed, match=r"LIST ClusterQueue answered .* for a ClusterQueue"):
        cluster.list(CQ_API, "ClusterQueue")
    live = read(cluster, [(CQ_API, "ClusterQueue"), (RB_API, "RoleBinding")])
    assert live.read == {"RoleBinding"}, live.errors  # the next kind is still read
    assert not live.objects
    [error] = live.errors
    assert error.startswith("LIST ClusterQueue (kueue.x-k8s.io/v1beta2) failed: cluster fake:")


def test_a_status_of_failure_under_http_200_is_the_refusal_it_says(
    server: FakeApiServer, tmp_path: Path
) -> None:
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 403,
              "reason": "Forbidden", "message": "clusterqueues is forbidden"}  # fmt: skip
    server.answers[server.list_path(CQ_API, "ClusterQueue")] = Answer.of(status, 200)
    cluster = connect(server, tmp_path)
    with pytest.raises(Forbidden, match="clusterqueues is forbidden"):
        cluster.list(CQ_API, "ClusterQueue")


def test_a_well_formed_list_is_read_items_of_a_built_in_kind_given_their_kind(
    server: FakeApiServer, tmp_path: Path
) -> None:
    """Built-in kinds' LISTs leave apiVersion and kind out of their items; `items: null` (a Go
    nil slice) is an empty page."""
    path = server.list_path("v1", "Namespace")
    server.answers[path] = Answer.of({**empty_list("v1", "Namespace"),
                                      "items": [{"metadata": {"name": "team-a"}}]})  # fmt: skip
    server.answers[server.list_path(RB_API, "Role")] = Answer.of(
        {**empty_list(RB_API, "Role"), "items": None}
    )
    cluster = connect(server, tmp_path)
    assert cluster.list("v1", "Namespace") == [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    ]
    assert cluster.list(RB_API, "Role") == []


def bomb(decompressed: int) -> bytes:
    """A gzip body of `decompressed` spaces, about a thousandth that size: gzip members of
    16 MiB each, one after the other (a reader decompresses them all)."""
    member = gzip.compress(b" " * (16 * answers.MIB), compresslevel=9)
    return member * (decompressed // (16 * answers.MIB))


def test_a_decompression_bomb_is_refused_past_the_limit(
    server: FakeApiServer, tmp_path: Path
) -> None:
    body = bomb(512 * answers.MIB)
    assert len(body) < answers.MIB  # what crosses the network
    headers = (("Content-Type", "application/json"), ("Content-Encoding", "gzip"))
    server.answers[server.list_path(CQ_API, "ClusterQueue")] = Answer(body, headers=headers)
    cluster = connect(server, tmp_path)
    started = time.monotonic()
    with pytest.raises(Overrun, match=r"more than 64 MiB once decompressed \(gzip\)"):
        cluster.list(CQ_API, "ClusterQueue")
    assert time.monotonic() - started < 10  # stopped at the limit, not read to the end
    assert cluster.list(RB_API, "Role") == []  # the connection dropped, a new one serves


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"[" * 300 + b"]" * 300, "nested more than 200 deep"),
        (b"[" * 100_000, "nested more than 200 deep"),
        (b"[" + b"{}," * 4_000_000 + b"{}]", "more than 4,000,000 values"),
    ],
    ids=["deep", "deep-unbalanced", "wide"],
)
def test_an_answer_too_deep_or_too_wide_is_refused_before_it_is_built(
    server: FakeApiServer, tmp_path: Path, body: bytes, says: str
) -> None:
    server.answers[server.list_path(CQ_API, "ClusterQueue")] = Answer(body)
    with pytest.raises(Overrun, match=says):
        connect(server, tmp_path).list(CQ_API, "ClusterQueue")


def test_brackets_inside_strings_are_no_structure() -> None:
    """A description saying `[` or `{` many times over is text, not depth."""
    doc = {"kind": "X", "description": "[" * 500 + '"\\"{' * 300}
    assert answers.decode(json.dumps(doc).encode(), 200, "c", "GET") == doc
