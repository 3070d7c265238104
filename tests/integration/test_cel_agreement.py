"""The CEL agreement corpus: offline verdicts must equal the real API server's dry-run verdicts.

tests/data/cel/ holds, for every CEL rule of the Kueue kinds this repository uses, an object
that breaks it (and a few that pass). Transition rules (oldSelf) never run on create and are not
evaluated offline; they are listed, not covered.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox
from auditor.schemas import cel
from auditor.schemas.validator import ClusterValidator
from tests.conftest import ROOT
from tests.integration.cel_corpus import CATALOG, corpus_object, server_rejects

CORPUS = ROOT / "tests/data/cel"
KINDS = ("ClusterQueue", "Cohort", "LocalQueue", "ResourceFlavor", "WorkloadPriorityClass")


@pytest.fixture(scope="module")
def cluster(sandbox: Sandbox) -> KubeCluster:
    live = sandbox.connect()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cel-corpus"}}
    live.apply(namespace, manager="cel-corpus")
    return live


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.yaml")), ids=lambda p: p.stem)
def test_offline_verdict_equals_the_api_servers(cluster: KubeCluster, path: Path) -> None:
    resource = corpus_object(path)
    findings, _ = ClusterValidator(CATALOG).check(resource)
    offline = [f for f in findings if f.severity == "error"]
    rejected, message = server_rejects(cluster, resource)
    assert bool(offline) == rejected, (offline, message)
    assert rejected == (not path.name.startswith("ok-"))
    for finding in offline:  # the server gives the same reason
        assert finding.message.split(" (rule: ")[0].split(" (the rule")[0] in message


def rules_of(kind: str) -> dict[tuple[str, str], set[str]]:
    entry = CATALOG.kind("kueue.x-k8s.io", kind)
    assert entry is not None
    out = {}
    for version in entry["served"]:
        schema = CATALOG.schema(f"kueue.x-k8s.io/{version}", kind)
        assert schema is not None
        out[(version, kind)] = {r.rule for r in cel.collect(schema) if not r.transition}
    return out


def test_every_rule_of_the_kinds_we_use_is_broken_by_some_corpus_object() -> None:
    wanted: dict[tuple[str, str], set[str]] = {}
    for kind in KINDS:
        wanted.update(rules_of(kind))
    broken: dict[tuple[str, str], set[str]] = {key: set() for key in wanted}
    for path in CORPUS.glob("*.yaml"):
        resource = corpus_object(path)
        schema = CATALOG.schema(resource.api_version, resource.kind)
        assert schema is not None
        body = cel.with_defaults(schema, resource.body)
        key = (resource.api_version.rpartition("/")[2], resource.kind)
        broken[key] |= {v.rule for v in cel.evaluate(cel.collect(schema), body)}
    missing = {k: wanted[k] - broken[k] for k in wanted if wanted[k] - broken[k]}
    assert missing == {}
    assert sum(len(v) for v in wanted.values()) >= 20  # the corpus is not trivially small


def test_transition_rules_are_known_and_not_run_offline() -> None:
    schema = CATALOG.schema("kueue.x-k8s.io/v1beta2", "LocalQueue")
    assert schema is not None
    transition = [r for r in cel.collect(schema) if r.transition]
    assert [r.rule for r in transition] == ["self == oldSelf"]
    assert cel.evaluate(transition, {"spec": {"clusterQueue": "x"}}) == []
