from __future__ import annotations

from pathlib import Path

from tests.unit.validate.checks.helpers import assert_findings, line_of, run_check, write

FOLDER = "tenants/team-a/gpu-prod"


def test_the_tenants_own_objects_pass(repo_copy: Path) -> None:
    assert run_check(repo_copy, "tenant-objects") == []


def test_cluster_scoped_and_unlisted_kinds_are_rejected(repo_copy: Path) -> None:
    write(
        repo_copy,
        f"{FOLDER}/extra.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: mine}\n"
        "spec: {}\n---\n"
        "apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: team-a}\n",
    )
    findings = run_check(repo_copy, "tenant-objects")
    assert_findings(
        findings,
        ("tenant-kind-not-allowed", "error", f"{FOLDER}/extra.yaml", 2),
        ("tenant-kind-not-allowed", "error", f"{FOLDER}/extra.yaml", 7),
    )
    assert "belong in clusters/gpu-prod/" in findings[0].message
    assert "ask the platform team" in findings[1].message


def test_objects_in_another_tenants_namespace_are_rejected(repo_copy: Path) -> None:
    write(
        repo_copy,
        f"{FOLDER}/extra.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-b-scratch\n---\n"
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n"
        "  name: peek\n  namespace: team-b\nrules: []\n",
    )
    assert_findings(
        run_check(repo_copy, "tenant-objects"),
        ("tenant-foreign-namespace", "error", f"{FOLDER}/extra.yaml", 4),
        ("tenant-foreign-namespace", "error", f"{FOLDER}/extra.yaml", 10),
        contains="its profile tenants/team-a/profile.yaml lists: team-a",
    )


def test_a_namespaced_object_without_namespace_is_rejected(repo_copy: Path) -> None:
    write(
        repo_copy,
        f"{FOLDER}/extra.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n  name: q\n"
        "spec: {clusterQueue: team-a-cq}\n",
    )
    assert_findings(
        run_check(repo_copy, "tenant-objects"),
        ("tenant-namespace-missing", "error", f"{FOLDER}/extra.yaml", 3),
    )


def test_a_cluster_folder_the_profile_does_not_list_owns_no_namespace(repo_copy: Path) -> None:
    profile = repo_copy / "tenants/team-a/profile.yaml"
    text = profile.read_text()
    start = text.index("    gpu-prod:")
    end = text.index("    gpu-staging:")
    profile.write_text(text[:start] + text[end:])
    findings = run_check(repo_copy, "tenant-objects")
    assert {f.rule.id for f in findings} == {"tenant-foreign-namespace"}
    assert {f.file for f in findings} >= {f"{FOLDER}/namespace.yaml", f"{FOLDER}/localqueues.yaml"}
    assert "lists: none on gpu-prod" in findings[0].message
    assert line_of(repo_copy, f"{FOLDER}/namespace.yaml", "name: team-a") in {
        f.line for f in findings
    }
