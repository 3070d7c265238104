"""Check self-heal: where gpu-staging's Kueue v0.19.2 writes a manager's quota, the committed
argocd/ self-heals it and fights Kueue; what `generate argocd` writes leaves Kueue its fields."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from auditor import rules
from auditor.repo import argocd
from auditor.repo.layout import Repository
from tests.estate import ESTATE
from tests.unit.validate.checks.helpers import line_of, run_check, write

AUTOMATED = rules.get("multikueue-quota-unsupported").passes
CONFIG = "clusters/gpu-staging/kueue/manager-config.yaml"
APPSETS = "argocd/applicationsets.yaml"


def test_the_committed_argocd_fights_kueue_and_the_generated_one_does_not(repo_copy: Path) -> None:
    shutil.copytree(ESTATE / "argocd", repo_copy / "argocd")
    assert run_check(repo_copy, "self-heal", "gpu-staging") == []  # Kueue writes no quota yet
    write(repo_copy, CONFIG, AUTOMATED.text)
    [fight] = run_check(repo_copy, "self-heal", "gpu-staging")
    assert fight.rule.id == "self-heal-fights-kueue"
    assert fight.line == line_of(repo_copy, CONFIG, "resourceGroups:")
    assert f"ApplicationSet kueue-clusters ({APPSETS}) self-heals it" in fight.message
    generated = argocd.for_url(Repository.open(repo_copy), "https://example.com/fork.git")
    clusters, tenants = (o for o in generated if o["kind"] == "ApplicationSet")
    spec = clusters["spec"]["template"]["spec"]
    assert spec["ignoreDifferences"] == [
        {"group": "kueue.x-k8s.io", "kind": "ClusterQueue", "name": "remote-cq",
         "managedFieldsManagers": ["kueue"]}
    ]  # fmt: skip
    assert "RespectIgnoreDifferences=true" in spec["syncPolicy"]["syncOptions"]
    assert "ignoreDifferences" not in tenants["spec"]["template"]["spec"]  # no queue there
    write(repo_copy, APPSETS, yaml.safe_dump_all([clusters, tenants], sort_keys=False))
    assert run_check(repo_copy, "self-heal", "gpu-staging") == []
    # Generating again adds nothing: the entry is there once.
    again = argocd.for_url(Repository.open(repo_copy), "https://example.com/fork.git")
    assert [o for o in again if o["kind"] == "ApplicationSet"] == [clusters, tenants]


def test_without_argocd_every_application_is_taken_to_heal(repo_copy: Path) -> None:
    write(repo_copy, CONFIG, AUTOMATED.text)
    [fight] = run_check(repo_copy, "self-heal", "gpu-staging")
    assert "no ApplicationSet in argocd/ says the Application syncing it does not heal it" in (
        fight.message
    )
