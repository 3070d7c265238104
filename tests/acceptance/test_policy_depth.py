"""`kueue-gitops validate` on a copy of the repository with one of issue 12's violations planted:
each is an error at its file and line (and the repository as it is validates clean)."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest

from tests.conftest import run_line
from tests.estate import copy_estate

CQS = "clusters/gpu-prod/clusterqueues.yaml"
PCS = "clusters/gpu-prod/priorityclasses.yaml"
RBAC = "clusters/gpu-prod/rbac.yaml"
COHORTS = "clusters/gpu-prod/cohorts.yaml"
RFS = "clusters/gpu-prod/resourceflavors.yaml"
ADMIN = (
    "\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n"
    "metadata: {name: team-a-root}\nroleRef: {apiGroup: rbac.authorization.k8s.io, "
    "kind: ClusterRole, name: cluster-admin}\nsubjects: [{apiGroup: rbac.authorization.k8s.io, "
    "kind: Group, name: example-org:team-a}]\n"
)
GUARD = "    argocd.argoproj.io/sync-options: Prune=false,Delete=false  # never deleted by a sync\n"
# (file, text to replace, replacement, the rule, a line the finding is on: in the same file, or
# "<file>:<line>" in another)
PLANTS: dict[str, tuple[str, str, str, str, str]] = {
    "reclaim-any": (CQS, "reclaimWithinCohort: LowerPriority", "reclaimWithinCohort: Any",
                    "preemption-policy-too-broad", "reclaimWithinCohort: Any"),
    "pod-class-preempts": (PCS, "value: 1000\nglobalDefault: false\npreemptionPolicy: Never",
                           "value: 1000000000\nglobalDefault: false",
                           "priority-class-preempts", "apiVersion: scheduling.k8s.io/v1"),
    "cluster-admin": (RBAC, "    name: kueue-gitops-auditor\n",
                      "    name: kueue-gitops-auditor\n" + ADMIN,
                      "rbac-tenant-power", "name: example-org:team-a"),
    "sync-options-dropped": (CQS, "  annotations:\n" + GUARD, "",
                             "prune-unguarded", "metadata:"),
    "cohort-cycle": (COHORTS, "spec: {}", "spec: {parentName: ai-shared}",
                     "cohort-cycle", "parentName: example-org"),
    "negative-quota": (CQS, 'nominalQuota: "16"', 'nominalQuota: "-2"',
                       "quantity-negative", 'nominalQuota: "-2"'),
    "gpu-flavor-unlabelled": (RFS, "  nodeLabels:\n    platform.example.com/pool: gpu-spot\n"
                              "    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n", "",
                              "gpu-flavor-unlabelled", f"{CQS}:- name: a100-spot"),
}  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    copy_estate(tmp_path, "clusters", "tenants", "schemas")
    return tmp_path


def validate(repo: Path) -> tuple[int, list[dict[str, t.Any]]]:
    result = run_line(["kueue-gitops", "--repo", str(repo), "validate", "-o", "json"])
    return result.exit_code, json.loads(result.stdout)["findings"]


def test_the_repository_as_it_is_validates_clean(repo: Path) -> None:
    code, findings = validate(repo)
    # Nothing but what is accepted on purpose, until its expiry: Kueue v0.9.1 on gpu-legacy
    # cannot limit the namespaces it manages (clusters/gpu-legacy/kueue/manager-config.yaml).
    assert code == 0
    assert [(f["cluster"], f["rule"], "suppressed" in f) for f in findings] == [
        ("gpu-legacy", "kueue-config-unmanaged-jobs", True)
    ]


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_planted_violation_is_an_error_at_its_line(repo: Path, plant: str) -> None:
    file, old, new, rule, at = PLANTS[plant]
    text = (repo / file).read_text()
    assert old in text, old
    (repo / file).write_text(text.replace(old, new, 1))
    code, findings = validate(repo)
    where, _, needle = at.partition(":") if at.startswith("clusters/") else ("", "", at)
    where = where or file
    line = next(i for i, s in enumerate((repo / where).read_text().splitlines(), 1) if needle in s)
    assert code == 1
    assert (rule, "error", where, line) in {
        (f["rule"], f["severity"], f["file"], f["line"]) for f in findings
    }, [(f["rule"], f["file"], f["line"]) for f in findings]
