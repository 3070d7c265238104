"""Onboarding through the CLI: `tenant add` and `cluster add` write what a person would, and the
repository they leave validates clean, with CODEOWNERS and the admission policies current."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
import typing as t
from importlib import resources
from pathlib import Path

import pytest
import yaml

from auditor.onboard import start
from auditor.repo.profiles import EXPORTED, SCHEMA_NAMES, export_schemas
from tests.conftest import ROOT, run_line

TEAM_C = [
    *("tenant", "add", "team-c", "--owner", "@example-org/team-c", "--group", "example-org:team-c"),
    *("--quota", "cpu-only.cpu=8", "--quota", "cpu-only.memory=32Gi"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The committed repository content (profiles, schemas, Argo CD, CODEOWNERS)."""
    archive = subprocess.run(
        ["git", "archive", "HEAD", "clusters", "tenants", "schemas", "argocd", "CODEOWNERS"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path


def kg(repo: Path, *argv: str) -> tuple[int, str, str]:
    result = run_line(["kueue-gitops", "--repo", str(repo), *argv])
    return result.exit_code, result.stdout, result.stderr


def open_findings(out: str) -> list[dict[str, t.Any]]:
    """A JSON report's findings that count (the repository may accept some on purpose)."""
    return [f for f in json.loads(out)["findings"] if "suppressed" not in f]


def clean(repo: Path) -> None:
    code, out, _ = kg(repo, "validate", "-o", "json")
    assert (code, open_findings(out)) == (0, [])
    assert kg(repo, "codeowners", "--check")[0] == 0


def test_tenant_add_writes_every_piece_and_validates_clean(repo: Path) -> None:
    code, out, err = kg(repo, *TEAM_C, "--cluster", "gpu-staging", "--cluster", "gpu-prod")
    assert code == 0, err
    for cluster in ("gpu-staging", "gpu-prod"):
        for name in ("namespace", "localqueues", "rbac"):
            assert f"wrote tenants/team-c/{cluster}/{name}.yaml" in out
        assert f"regenerated clusters/{cluster}/admission-policies.yaml" in out
        queues = [
            d["metadata"]["name"]
            for d in yaml.safe_load_all(
                (repo / f"clusters/{cluster}/clusterqueues.yaml").read_text()
            )
        ]
        assert queues[-1] == "team-c-cq"
        policies = (repo / f"clusters/{cluster}/admission-policies.yaml").read_text()
        assert "team-c" in policies
    assert "/tenants/team-c/*/localqueues.yaml  @example-org/team-c" in (
        (repo / "CODEOWNERS").read_text()
    )
    project = yaml.safe_load((repo / "argocd/tenants/team-c.yaml").read_text())
    assert project["metadata"]["name"] == "tenant-team-c"
    assert {d["name"] for d in project["spec"]["destinations"]} == {"gpu-staging", "gpu-prod"}
    clean(repo)
    # What `generate policies` would write is what tenant add wrote.
    code, out, _ = kg(repo, "generate", "policies")
    assert code == 0 and "written" not in out


def test_tenant_add_refuses_what_it_cannot_do_and_writes_nothing(repo: Path) -> None:
    before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    for argv, says in (
        ([*TEAM_C[:-4], "--cluster", "gpu-prod"], "--quota"),
        ([*TEAM_C, "--cluster", "gpu-prod", "--quota", "a100gpu=1"], "FLAVOR.RESOURCE=AMOUNT"),
        ([*TEAM_C, "--cluster", "nope"], "no cluster 'nope'"),
        (["tenant", "add", "team-a", *TEAM_C[3:], "--cluster", "gpu-prod"], "exists already"),
    ):
        code, _, err = kg(repo, *argv)
        assert code == 2 and says in err, (argv, err)
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == before


def test_joining_a_cohort_needs_preemption_evidence_as_validate_says(repo: Path) -> None:
    assert kg(repo, *TEAM_C, "--cluster", "gpu-staging", "--cohort", "ai-shared")[0] == 0
    code, out, _ = kg(repo, "validate", "-o", "json")
    assert code == 1
    assert {f["rule"] for f in open_findings(out)} == {"preemption-unvalidated"}


def test_cluster_add_like_another_then_a_tenant_on_it_validates_clean(repo: Path) -> None:
    code, _, err = kg(repo, "cluster", "add", "gpu-dev", "--like", "gpu-staging")
    assert code == 0, err
    profile = (repo / "clusters/gpu-dev/profile.yaml").read_text()
    doc = yaml.safe_load(profile)
    assert (doc["metadata"]["name"], doc["spec"]["context"]) == ("gpu-dev", "gpu-dev")
    assert "# kubeconfig context the auditor uses" in profile  # comments are kept
    assert not (repo / "clusters/gpu-dev/clusterqueues.yaml").exists()
    assert (repo / "schemas/gpu-dev/index.json").is_file()
    [platform] = yaml.safe_load_all((repo / "argocd/projects.yaml").read_text())
    dev = [d["namespace"] for d in platform["spec"]["destinations"] if d["name"] == "gpu-dev"]
    assert dev == ["", "kueue-monitoring", "kueue-system"]
    clean(repo)
    assert kg(repo, *TEAM_C, "--cluster", "gpu-dev")[0] == 0
    clean(repo)
    assert "gpu-dev" in json.loads(kg(repo, "github", "clusters")[1])


def test_cluster_add_without_like_starts_from_the_templates_and_validates_clean(
    repo: Path,
) -> None:
    code, _, err = kg(repo, "cluster", "add", "gpu-new", "--capacity", "cpu-only.cpu=16")
    assert code == 0, err
    profile = yaml.safe_load((repo / "clusters/gpu-new/profile.yaml").read_text())
    assert profile["spec"]["capacity"] == {"cpu-only": {"cpu": "16"}}
    assert profile["spec"]["owners"] == ["@example-org/platform"]  # the platform's, as the others
    [platform] = yaml.safe_load_all((repo / "argocd/projects.yaml").read_text())
    new = [d["namespace"] for d in platform["spec"]["destinations"] if d["name"] == "gpu-new"]
    assert new == ["", "kueue-monitoring", "kueue-system"]
    assert not (repo / "schemas/gpu-new").exists()  # the package's schemas judge it
    clean(repo)


def test_without_the_platforms_appproject_onboarding_says_so(repo: Path) -> None:
    (repo / "argocd/projects.yaml").unlink()
    before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    code, _, err = kg(repo, *TEAM_C, "--cluster", "gpu-prod")
    assert code == 2 and "argocd/projects.yaml names no sourceRepos" in err  # never ['*']
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == before
    code, _, err = kg(repo, "cluster", "add", "gpu-dev", "--like", "gpu-staging")
    assert code == 0 and "Argo CD may not sync clusters/gpu-dev/" in err  # not silently


def init_repo(tmp_path: Path, *argv: str) -> Path:
    empty = tmp_path / "platform"
    empty.mkdir()
    url = "https://git.example.com/platform/kueue.git"
    code, _, err = kg(empty, "init", "--cluster", "gpu-a", "--repo-url", url, *argv)
    assert code == 0, err
    return empty


def test_init_writes_a_repository_argo_cd_can_sync(tmp_path: Path) -> None:
    repo = init_repo(tmp_path, "--owner", "@platform/kueue-admins")
    [platform] = yaml.safe_load_all((repo / "argocd/projects.yaml").read_text())
    assert platform["spec"]["sourceRepos"] == ["https://git.example.com/platform/kueue.git"]
    assert {d["name"] for d in platform["spec"]["destinations"]} == {"gpu-a"}
    sets = list(yaml.safe_load_all((repo / "argocd/applicationsets.yaml").read_text()))
    assert {s["spec"]["template"]["spec"]["source"]["repoURL"] for s in sets} == {
        "https://git.example.com/platform/kueue.git"
    }
    assert "@platform/kueue-admins" in (repo / "CODEOWNERS").read_text()
    for name in ("resourceflavors", "cohorts", "rbac", "alerts", "admission-policies"):
        assert (repo / f"clusters/gpu-a/{name}.yaml").is_file(), name
    config = yaml.safe_load_all((repo / "clusters/gpu-a/kueue/manager-config.yaml").read_text())
    assert any(d["kind"] == "ConfigMap" for d in config)
    assert not (repo / "schemas/gpu-a").exists()  # the package's schemas judge it
    code, _, err = kg(repo, "validate")
    newest = start.newest_release()  # the release init writes by default
    assert code == 0 and f"schemas from the package, those of Kueue {newest}" in err, err
    clean(repo)
    assert kg(repo, *TEAM_C[:-4], "--quota", "gpu.nvidia.com/gpu=4", "--cluster", "gpu-a")[0] == 0
    [project] = yaml.safe_load_all((repo / "argocd/tenants/team-c.yaml").read_text())
    assert project["spec"]["sourceRepos"] == ["https://git.example.com/platform/kueue.git"]
    clean(repo)


def test_init_refuses_a_repository_that_has_clusters(repo: Path) -> None:
    before = (repo / "argocd/projects.yaml").read_text()
    code, _, err = kg(repo, "init", "--cluster", "x", "--repo-url", "https://example.org/r.git")
    assert code == 2 and "exists already" in err
    assert (repo / "argocd/projects.yaml").read_text() == before


def test_profile_schemas_are_exported_current_and_named_in_every_profile() -> None:
    for name in SCHEMA_NAMES:
        packaged = resources.files("auditor.repo").joinpath(f"profile_schemas/{name}.json")
        exported = ROOT / EXPORTED / f"{name}.json"
        assert exported.read_text() == packaged.read_text(), (
            f"{exported} is stale: run `kueue-gitops schemas profiles`"
        )
    profiles = [*ROOT.glob("clusters/*/profile.yaml"), *ROOT.glob("tenants/*/profile.yaml")]
    assert len(profiles) >= 4
    for path in profiles:
        first = path.read_text().splitlines()[0]
        kind = "clusterprofile" if path.parts[-3] == "clusters" else "tenantprofile"
        assert first == f"# yaml-language-server: $schema=../../{EXPORTED}/{kind}.json"
        target = (path.parent / first.split("=", 1)[1]).resolve()
        assert target == ROOT / EXPORTED / f"{kind}.json" and target.is_file()


def test_schemas_profiles_writes_them_where_the_profiles_point(repo: Path) -> None:
    shutil.rmtree(repo / EXPORTED, ignore_errors=True)
    code, out, _ = kg(repo, "schemas", "profiles")
    assert code == 0 and out.count("written") == 2
    assert [changed for _, changed in export_schemas(repo)] == [False, False]
    assert kg(repo, "schemas", "profiles")[1].count("unchanged") == 2


def test_tenant_add_help_says_quota_is_required() -> None:
    shown = run_line(["kueue-gitops", "tenant", "add", "--help"]).output
    quota = shown[shown.index("--quota") :].split("\n  -")[0]
    assert "required" in quota
