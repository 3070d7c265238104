"""plan's immutable fields come from the schemas' transition rules (CEL reading `oldSelf`)."""

from __future__ import annotations

import json
import typing as t

from tests.conftest import run_line
from tests.unit.conftest import Revisions

FLAVORS = "clusters/gpu-prod/resourceflavors.yaml"
LQS = "tenants/team-a/gpu-prod/localqueues.yaml"
A100_LABEL = "nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB"
TOPOLOGY = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata:
  name: gpu-racks
spec:
  levels:
    - nodeLabel: cloud.example.com/rack
    - nodeLabel: kubernetes.io/hostname
"""


def plan(revs: Revisions, base: str, head: str) -> tuple[int, t.Any]:
    argv = [
        "kueue-gitops",
        "--repo",
        str(revs.root),
        "plan",
        "diff",
        "--base",
        base,
        "--head",
        head,
    ]
    result = run_line([*argv, "-o", "json"])
    return result.exit_code, json.loads(result.stdout) if result.stdout else result


def immutable(doc: dict[str, t.Any]) -> list[tuple[str, str, str, int]]:
    return [
        (f["name"], f["path"], f["message"].split(" (rule")[0].split(": ", 1)[1], f["line"])
        for f in doc["findings"]
        if f["rule"] == "plan-immutable-field"
    ]


def with_topology(revs: Revisions) -> str:
    """A base where flavor a100 is topology-aware (gpu-racks) and h100 is not."""
    revs.write("clusters/gpu-prod/topology.yaml", TOPOLOGY)
    a100 = "  nodeLabels:\n    platform.example.com/pool: gpu\n    " + A100_LABEL
    revs.edit(FLAVORS, a100, "  topologyName: gpu-racks\n" + a100)
    return revs.commit("a100 is topology-aware")


def test_node_labels_of_a_topology_aware_flavor_are_immutable(revs: Revisions) -> None:
    base = with_topology(revs)
    revs.edit(FLAVORS, A100_LABEL, "nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB")
    code, doc = plan(revs, base, revs.commit("the 40GB cards"))
    assert code == 1
    line = revs.line_of(FLAVORS, "nodeLabels:", after="name: a100")
    assert immutable(doc) == [
        ("a100", "spec.nodeLabels", "nodeLabels are immutable when topologyName is set", line)
    ]
    [finding] = doc["findings"]
    assert finding["file"] == FLAVORS and finding["cluster"] == "gpu-prod"
    assert "(rule in schemas/gpu-prod: !has(oldSelf.topologyName) ||" in finding["message"]
    assert "refuses to change it on an existing object" in finding["message"]


def test_the_conditional_rule_lets_a_flavor_without_topology_change(revs: Revisions) -> None:
    base = with_topology(revs)
    revs.edit(
        FLAVORS, "nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.product: H200"
    )
    code, doc = plan(revs, base, revs.commit("h100 becomes h200"))
    assert (code, doc["findings"]) == (0, [])
    assert [c["path"] for c in doc["changes"]] == ["spec.nodeLabels.nvidia.com/gpu.product"]


def test_dropping_the_topology_itself_is_refused_at_the_flavor(revs: Revisions) -> None:
    base = with_topology(revs)
    revs.edit(FLAVORS, "  topologyName: gpu-racks\n", "")
    code, doc = plan(revs, base, revs.commit("no topology"))
    assert code == 1
    [(name, path, message, line)] = immutable(doc)
    assert (name, path, message) == (
        "a100",
        "spec.topologyName",
        "topologyName is immutable when topologyName is set",
    )
    assert line == revs.line_of(FLAVORS, "spec:", after="name: a100")  # the field is gone


def test_topology_levels_and_a_localqueues_cluster_queue_are_immutable(revs: Revisions) -> None:
    base = with_topology(revs)
    revs.edit("clusters/gpu-prod/topology.yaml", "cloud.example.com/rack", "cloud.example.com/row")
    revs.edit(LQS, "clusterQueue: team-a-cq", "clusterQueue: team-b-cq")
    code, doc = plan(revs, base, revs.commit("two refused changes"))
    assert code == 1
    assert immutable(doc) == [
        ("batch", "spec.clusterQueue", "field is immutable", revs.line_of(LQS, "clusterQueue:")),
        ("gpu-racks", "spec.levels", "field is immutable",
         revs.line_of("clusters/gpu-prod/topology.yaml", "levels:")),
    ]  # fmt: skip


def test_the_head_revisions_schemas_decide(revs: Revisions) -> None:
    """A schema without the rule (a Kueue that allows the change) lets the change through."""
    schema = "schemas/gpu-prod/kueue.x-k8s.io/localqueue_v1beta2.json"
    doc = json.loads((revs.root / schema).read_text())
    spec = doc["properties"]["spec"]["properties"]["clusterQueue"]
    assert spec.pop("x-kubernetes-validations") == [
        {"message": "field is immutable", "rule": "self == oldSelf"}
    ]
    (revs.root / schema).write_text(json.dumps(doc))
    revs.edit(LQS, "clusterQueue: team-a-cq", "clusterQueue: team-b-cq")
    code, out = plan(revs, "base", revs.commit("a mutable clusterQueue"))
    assert (code, out["findings"]) == (0, [])


def test_without_the_clusters_schemas_at_head_the_packaged_ones_of_its_release_decide(
    revs: Revisions,
) -> None:
    """gpu-prod's committed schemas gone at head: the package's set of its release (v0.17.0)
    says LocalQueue's clusterQueue is immutable; a release the package lacks is exit 2."""
    revs.repo.git.rm("-r", "-q", "schemas/gpu-prod")
    revs.edit(LQS, "clusterQueue: team-a-cq", "clusterQueue: team-b-cq")
    code, out = plan(revs, "base", revs.commit("no schemas"))
    assert code == 1
    [finding] = [f for f in out["findings"] if f["rule"] == "plan-immutable-field"]
    assert finding["path"] == "spec.clusterQueue"
    assert "the package's Kueue v0.17.0 schemas" in finding["message"]
    revs.edit("clusters/gpu-prod/profile.yaml", "version: v0.17.0", "version: v0.16.9")
    head = revs.commit("a release the package does not carry")
    result = run_line(["kueue-gitops", "--repo", str(revs.root), "plan", "diff", "--base", "base",
                       "--head", head])  # fmt: skip
    assert result.exit_code == 2
    assert "schemas/gpu-prod/ is not in" in result.stderr
    assert "kueue-gitops schemas fetch --cluster gpu-prod" in result.stderr


STAGING_CQS = "clusters/gpu-staging/clusterqueues.yaml"
POLICY = "  concurrentAdmissionPolicy:\n    migration: {mode: TryPreferredFlavors}\n"


def test_a_field_kueues_webhook_holds_immutable_is_found_from_the_release(
    revs: Revisions,
) -> None:
    """gpu-staging runs Kueue v0.19.2, whose ClusterQueue webhook refuses any change to
    concurrentAdmissionPolicy (no CRD rule says so): adding it to an existing queue fails."""
    base = revs.commit("base")
    revs.edit(STAGING_CQS, "  cohortName: ai-shared\n", "  cohortName: ai-shared\n" + POLICY, 1)
    code, doc = plan(revs, base, revs.commit("concurrent admission for team-a"))
    assert code == 1
    [finding] = [f for f in doc["findings"] if f["rule"] == "plan-immutable-field"]
    assert (finding["cluster"], finding["name"], finding["path"]) == (
        "gpu-staging",
        "team-a-cq",
        "spec.concurrentAdmissionPolicy",
    )
    assert finding["line"] == revs.line_of(STAGING_CQS, "concurrentAdmissionPolicy:")
    assert "Kueue v0.19.2's webhook holds it immutable" in finding["message"]


def test_a_new_queue_may_carry_the_field_kueue_holds_immutable(revs: Revisions) -> None:
    base = revs.commit("base")
    revs.write(
        "clusters/gpu-staging/new-cq.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: new-cq}\n"
        "spec:\n" + POLICY,
    )
    _code, doc = plan(revs, base, revs.commit("a new queue"))
    assert [f for f in doc["findings"] if f["rule"] == "plan-immutable-field"] == []
