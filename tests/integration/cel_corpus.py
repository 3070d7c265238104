"""The CEL corpus: objects each rule's CEL is held to, and what a real API server answers
for them."""

from __future__ import annotations

from pathlib import Path

from auditor.errors import ClusterAccessError
from auditor.live.kube import KubeCluster
from auditor.model import Resource
from auditor.repo.manifests import load_bytes
from auditor.schemas.catalog import SchemaCatalog
from auditor.validate.engine import judged
from tests.conftest import ROOT
from tests.estate import ESTATE

CATALOG = SchemaCatalog(ESTATE / "schemas", "gpu-prod")


def corpus_object(path: Path) -> Resource:
    [resource], problems = load_bytes(path.read_bytes(), str(path.relative_to(ROOT)))
    assert problems == []
    return resource


def server_rejects(cluster: KubeCluster, resource: Resource) -> tuple[bool, str]:
    try:
        cluster.apply(resource.body, manager="cel-corpus", dry_run=True, field_validation="Strict")
    except ClusterAccessError as exc:
        assert judged(exc), exc  # the server refused the object, it did not fail to answer
        return True, str(exc)
    return False, ""
