"""Schema verdicts offline equal the API server's: tests/data/schema/ against a real sandbox.

Each file holds one object; `ok-*` files must be accepted, the others rejected, both offline
(version contract + JSON Schema + CEL) and by a server-side dry-run apply with strict field
validation, which is what `validate --server-side` sends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox
from auditor.schemas.validator import ClusterValidator
from tests.conftest import ROOT
from tests.integration.cel_corpus import CATALOG, corpus_object, server_rejects

CASES = sorted((ROOT / "tests/data/schema").glob("*.yaml"))


@pytest.fixture(scope="module")
def cluster(sandbox: Sandbox) -> KubeCluster:
    live = sandbox.connect()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "schema-corpus"}}
    live.apply(namespace, manager="schema-corpus")
    return live


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_offline_schema_verdict_equals_the_api_servers(cluster: KubeCluster, path: Path) -> None:
    resource = corpus_object(path)
    findings, _ = ClusterValidator(CATALOG).check(resource)
    offline = [f for f in findings if f.severity == "error"]
    rejected, message = server_rejects(cluster, resource)
    assert bool(offline) == rejected, (offline, message)
    assert rejected == (not path.name.startswith("ok-"))
