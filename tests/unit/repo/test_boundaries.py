"""One cluster's boundaries, read from the repository the way `generate policies` reads them."""

from __future__ import annotations

from pathlib import Path

import yaml

from auditor.kueue import admission
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from tests.conftest import ROOT
from tests.estate import ESTATE


def made(root: Path, cluster: str = "gpu-prod") -> admission.Boundaries:
    repo = Repository.open(root)
    return boundaries.boundaries(
        repo.cluster(cluster), repo.tenants, repo.load([cluster]).for_cluster(cluster)
    )


def test_each_admitting_namespace_with_its_queues_and_its_tenants_levels() -> None:
    b = made(ESTATE)
    assert b.namespaces == (
        admission.Namespace(
            "team-a", ("batch",), "team-a", ("batch-low", "batch-standard"), ("tenant-batch",)
        ),
        admission.Namespace(
            "team-b", ("batch",), "team-b", ("batch-low", "batch-standard"), ("tenant-batch",)
        ),
    )
    assert b.admission_label == ("platform.example.com/kueue", "enabled")
    assert b.guarded_labels == (
        "platform.example.com/kueue",
        "platform.example.com/tenant",
        admission.SCRATCH_LABEL,
    )
    assert "ServiceAccount argocd/argocd-application-controller" in b.platform
    assert [f.name for f in b.integrations] == ["batch/job"]  # from clusters/gpu-prod/kueue/


def test_the_kueue_configuration_comes_from_its_config_map() -> None:
    resources = Repository.open(ESTATE).load(["gpu-prod"]).for_cluster("gpu-prod")
    found = boundaries.config_map(resources)
    assert found is not None and found.file == "clusters/gpu-prod/kueue/manager-config.yaml"
    config = boundaries.configuration(found)
    assert config is not None and config["manageJobsWithoutQueueName"] is True


def test_a_namespace_admitting_work_without_queues_or_tenant_gets_none(repo_copy: Path) -> None:
    (repo_copy / "clusters/gpu-prod/stray.yaml").write_text(
        "apiVersion: v1\nkind: Namespace\n"
        "metadata: {name: stray, labels: {platform.example.com/kueue: enabled}}\n"
    )
    [stray] = [ns for ns in made(repo_copy).namespaces if ns.name == "stray"]
    assert stray == admission.Namespace("stray", (), None, (), ())


def test_the_committed_files_are_what_the_generator_writes() -> None:
    repo = Repository.open(ESTATE)
    for cluster in repo.clusters:
        text = boundaries.render(cluster, made(ESTATE, cluster))
        assert (ROOT / boundaries.policy_path(cluster)).read_text() == text
        assert list(yaml.safe_load_all(text)) == admission.policies(made(ESTATE, cluster))


def test_the_header_names_the_profile_file_the_layout_really_uses() -> None:
    repo = Repository.open(ROOT / "tests/data/rendered/helm")
    profile = repo.cluster("north")
    assert profile.file == "platform/profiles/north.yaml"
    first = boundaries.expected(profile, {}, []).splitlines()[0]
    assert first.endswith("from platform/profiles/north.yaml,")
    assert "clusters/north/profile.yaml" not in boundaries.expected(profile, {}, [])
