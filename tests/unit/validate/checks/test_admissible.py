from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import line_of, run_check

CQS = "clusters/gpu-prod/clusterqueues.yaml"
LQ = "tenants/team-a/gpu-prod/localqueues.yaml"

GPU_ONLY = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-z-cq}
spec:
  namespaceSelector:
    matchLabels: {platform.example.com/kueue: enabled}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: a100
          resources:
            - {name: nvidia.com/gpu, nominalQuota: "4"}
"""


def test_the_committed_queues_admit_jobs(repo_copy: Path) -> None:
    for cluster in ("gpu-prod", "gpu-staging", "gpu-legacy"):
        assert run_check(repo_copy, "admissible", cluster) == []


def test_a_gpu_only_queue_and_the_localqueue_leading_to_it_are_named(repo_copy: Path) -> None:
    cqs = repo_copy / CQS
    cqs.write_text(cqs.read_text() + "---\n" + GPU_ONLY)
    lqs = repo_copy / LQ
    lqs.write_text(
        lqs.read_text() + "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: gpu-only, namespace: team-a}\nspec: {clusterQueue: team-z-cq}\n"
    )
    found = run_check(repo_copy, "admissible")
    groups = line_of(repo_copy, CQS, "[nvidia.com/gpu]") - 1  # its resourceGroups: no cpu there
    assert [(f.rule.id, f.kind, f.file, f.line) for f in found] == [
        ("queue-admits-no-job", "ClusterQueue", CQS, groups),
        ("queue-admits-no-job", "LocalQueue", LQ, line_of(repo_copy, LQ, "team-z-cq")),
    ]
    assert "resource cpu unavailable in ClusterQueue" in found[0].message
    assert "memory" in found[0].message and "team-z-cq" in found[1].message
