"""init's templates: this repository's own platform files are those templates filled in, so
what `init` writes for a platform team is what this project tests and demonstrates."""

from __future__ import annotations

import re

import pytest

from auditor.onboard import start
from auditor.repo.layout import Repository
from tests.conftest import ROOT
from tests.estate import ESTATE

REPO = Repository.open(ESTATE)
URL = "https://github.com/example-org/kueue-gitops.git"


@pytest.mark.parametrize("cluster", sorted(REPO.clusters))
def test_the_repositorys_platform_files_are_the_templates_filled_in(cluster: str) -> None:
    profile = REPO.cluster(cluster)
    assert profile.kueue_version
    values = start.ClusterStart(
        cluster, tuple(profile.owners), profile.kueue_version, admission=profile.admission_label
    ).values()
    same = ["rbac.yaml", "priorityclasses.yaml", "alerts.yaml"]
    if cluster != "gpu-legacy":  # Kueue v0.9.1's Configuration predates the template's fields
        same.append("kueue/manager-config.yaml")
    for name in same:
        committed = (ESTATE / "clusters" / cluster / name).read_text()
        assert committed == start.render(f"cluster/{name}", values), f"clusters/{cluster}/{name}"


def test_the_repositorys_argocd_objects_are_the_templates_filled_in() -> None:
    made = start.argocd_files(URL, "main", ["gpu-prod", "gpu-staging", "gpu-legacy"])
    for path, text in made.items():
        assert (ESTATE / path).read_text() == text, path


def test_the_configuration_template_is_refused_by_a_release_that_lacks_its_fields() -> None:
    assert start.newest_release() != "v0.9.1"
    with pytest.raises(Exception, match="managedJobsNamespaceSelector"):
        start.cluster_files(start.ClusterStart("gpu-a", ("@o/p",), "v0.9.1"))


def test_owners_are_guessed_from_the_repository_url() -> None:
    assert start.owners_from("https://git.example.com/platform/kueue.git") == "@platform/platform"
    assert start.owners_from("git@github.com:acme/quota.git") == "@acme/platform"


def test_the_readmes_pre_commit_snippet_is_what_init_writes_for_the_tag_it_names() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme[readme.index("   ```yaml\n   repos:") :].split("```")[1]
    snippet = "".join(f"{line.removeprefix('   ')}\n" for line in block.splitlines()[1:-1])
    [tag] = set(re.findall(r"rev: (v\d+\.\d+\.\d+)", snippet))
    written = start.adopter_files(tag.removeprefix("v"))[".pre-commit-config.yaml"]
    assert written.endswith(snippet)
    assert f"rev: {tag}" in (ROOT / ".pre-commit-hooks.yaml").read_text()
