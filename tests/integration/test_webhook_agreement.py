"""The webhook agreement corpus: offline verdicts must equal Kueue's, with its webhooks running.

tests/data/webhook/ holds, for each rule Kueue v0.17.0's validating webhooks enforce beyond the
CRDs (auditor/kueue/webhooks.py, and the quotas check's rules that mirror them), an object that
breaks it, and objects at the edge that pass (`ok-*`). The limits on counts (256 flavors, 256
resources, 512 pairs in a group) are objects too large to read, so they are built here. Each is
dry-run created on the sandbox running Kueue: the API server's schema, CEL and Kueue's webhooks
judge it, and offline validation (schemas, CEL, and the webhook rules) must say the same.
"""

from __future__ import annotations

import json
import re
import typing as t

import pytest

from auditor.errors import ClusterAccessError
from auditor.kueue import webhooks
from auditor.live.kube import KubeCluster
from auditor.model import Finding, Resource
from auditor.repo.layout import Repository
from auditor.repo.manifests import load_bytes
from auditor.sandbox import Sandbox
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.validator import ClusterValidator
from auditor.validate import checks
from auditor.validate.checks import kueue_webhook
from auditor.validate.engine import judged
from tests.conftest import ROOT
from tests.estate import ESTATE

CORPUS = ROOT / "tests/data/webhook"
CLUSTER = "gpu-staging"  # what the Kueue sandbox runs
NAMESPACE = "webhook-corpus"
# Every refusal (the onFlavors a release accepts is reported as what it does there, not refused).
WEBHOOK_RULES = (
    *(r for r in kueue_webhook.RULES.values() if r is not webhooks.CHECK_FLAVOR_IGNORED),
    *kueue_webhook.MIRRORED,
)
Json = dict[str, t.Any]


def group(covered: list[str], flavors: int, prefix: str) -> Json:
    resources = [{"name": r, "nominalQuota": "1"} for r in covered]
    return {
        "coveredResources": covered,
        "flavors": [{"name": f"{prefix}{i}", "resources": resources} for i in range(flavors)],
    }


def too_many(name: str, groups: list[Json]) -> Resource:
    body = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": f"wh-{name}"},
        "spec": {"resourceGroups": groups},
    }
    return Resource(body=body, file=f"(built) {name}", line=1)


BUILT = {
    # 5 groups of 52 flavors: 260 flavors, within the CRD's 64 a group
    "cq-too-many-flavors": too_many(
        "too-many-flavors", [group([f"r{g}"], 52, f"g{g}-f") for g in range(5)]
    ),
    # 16 groups of 17 resources: 272 covered resources
    "cq-too-many-resources": too_many(
        "too-many-resources",
        [group([f"g{g}-r{r}" for r in range(17)], 1, f"g{g}-f") for g in range(16)],
    ),
    # 57 flavors of 9 resources in one group: 513 pairs
    "cq-too-many-pairs": too_many("too-many-pairs", [group([f"r{r}" for r in range(9)], 57, "f")]),
    "ok-cq-at-the-limits": too_many(
        "at-the-limits",
        [group([f"g{g}-r{r}" for r in range(16)], 16, f"g{g}-f") for g in range(16)],
    ),  # 256 flavors, 256 resources, 256 pairs a group
}


def corpus() -> dict[str, Resource]:
    found: dict[str, Resource] = {}
    for path in sorted(CORPUS.glob("*.yaml")):
        [resource], problems = load_bytes(path.read_bytes(), str(path.relative_to(ROOT)))
        assert problems == []
        found[path.stem] = resource
    return found | BUILT


CASES = corpus()


def offline(resource: Resource) -> tuple[list[Finding], list[Finding]]:
    """The errors validate reports: schema and CEL, then the webhook rules on a sound object."""
    schema, sound = ClusterValidator(SchemaCatalog(ESTATE / "schemas", CLUSTER)).check(resource)
    repo = Repository.open(ESTATE)
    ctx = checks.CheckContext(repo, repo.cluster(CLUSTER), (resource,), repo.tenants)
    policy = checks.run(ctx, only=["quotas", kueue_webhook.ID]) if sound else []
    errors = [f for f in schema if f.severity == "error"]
    return errors, [f for f in policy if f.rule in WEBHOOK_RULES]


@pytest.fixture(scope="module")
def cluster(kueue_sandbox: Sandbox) -> KubeCluster:
    live = kueue_sandbox.connect()
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
    live.apply(namespace, manager="webhook-corpus")
    return live


def server_rejects(cluster: KubeCluster, resource: Resource) -> tuple[bool, str]:
    """A dry-run create: admission (Kueue's webhooks included) runs, nothing is stored."""
    meta = resource.body["metadata"]
    path = cluster.path(resource.api_version, resource.kind, meta.get("namespace"))
    query = [("dryRun", "All"), ("fieldValidation", "Strict")]
    try:
        cluster.request("POST", path, query=query, body=resource.body, what=f"create {path}")
    except ClusterAccessError as exc:
        assert judged(exc), exc  # the server refused the object, it did not fail to answer
        return True, str(exc)
    return False, ""


def _related(path: str, message: str) -> bool:
    """Whether the server names the same field as the finding (or one inside or around it: the
    webhook names a map, the finding its key)."""
    named = re.findall(r"(spec[\w.\[\]/-]*): ", message)
    return any(path.startswith(n) or n.startswith(path) for n in named)


@pytest.mark.parametrize("name", sorted(CASES))
def test_offline_verdict_equals_kueues(cluster: KubeCluster, name: str) -> None:
    resource = CASES[name]
    schema, webhook = offline(resource)
    rejected, message = server_rejects(cluster, resource)
    assert bool(schema or webhook) == rejected, (schema, webhook, message)
    assert rejected == (not name.startswith("ok-"))
    if webhook and not schema:  # only the webhook rules object: Kueue's webhook says why
        assert "admission webhook" in message and "denied the request" in message, message
        for finding in webhook:
            assert finding.path and _related(finding.path, message), (finding.path, message)


def test_every_webhook_rule_is_broken_by_some_corpus_object() -> None:
    broken = {f.rule for resource in CASES.values() for f in offline(resource)[1]}
    assert set(WEBHOOK_RULES) - broken == set()
    kinds = {r.kind for r in CASES.values()}
    assert kinds >= {
        "ClusterQueue",
        "Cohort",
        "ResourceFlavor",
        "LocalQueue",
        "WorkloadPriorityClass",
    }


def test_corpus_objects_name_nothing_the_sandbox_holds() -> None:
    names = [r.name for r in CASES.values()]
    assert len(names) == len(set(names)) and all(n.startswith("wh-") for n in names)
    assert json.dumps([r.body for r in CASES.values()])  # plain data, as sent
