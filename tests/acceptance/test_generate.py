"""`kueue-gitops generate policies`, and `validate` holding the generated files to the profiles."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

from auditor.repo.layout import Repository
from tests.conftest import run_line
from tests.estate import ESTATE


def generate(repo: Path, *args: str) -> tuple[int, str]:
    result = run_line(["kueue-gitops", "--repo", str(repo), "generate", "policies", *args])
    return result.exit_code, result.output


def findings(report: dict[str, t.Any]) -> list[dict[str, t.Any]]:
    return list(report["findings"])


def validate(repo: Path) -> tuple[int, dict[str, t.Any]]:
    line = ["kueue-gitops", "--repo", str(repo), "validate", "--schemas", str(ESTATE / "schemas")]
    result = run_line([*line, "-o", "json"])
    return result.exit_code, json.loads(result.stdout)


def test_the_committed_policies_are_what_the_profiles_generate(repo_copy: Path) -> None:
    code, out = generate(repo_copy)
    assert code == 0
    clusters = sorted(Repository.open(repo_copy).clusters)
    assert out.splitlines()[::2] == [
        f"{repo_copy}/clusters/{c}/admission-policies.yaml: 2 namespace(s) that admit work, "
        "unchanged"
        for c in clusters
    ]
    assert out.splitlines()[1::2] == [  # each cluster's line says what its policies do
        f"  the policies of {c} refuse what breaks a boundary (spec.admissionPolicies."
        f"enforcement in clusters/{c}/profile.yaml: Deny); `kueue-gitops plan diff --live` names "
        "what a change to them would refuse today (a cluster that already runs work starts in "
        "Warn: docs/boundaries.md)"
        for c in clusters
    ]


def test_policies_in_warn_are_written_so_and_the_step_to_deny_is_named(repo_copy: Path) -> None:
    profile = repo_copy / "clusters/gpu-prod/profile.yaml"
    profile.write_text(
        profile.read_text().replace(
            "  capacity:", "  admissionPolicies: {enforcement: Warn}\n  capacity:", 1
        )
    )
    code, out = generate(repo_copy, "--cluster", "gpu-prod")
    assert code == 0
    written = (repo_copy / "clusters/gpu-prod/admission-policies.yaml").read_text()
    assert written.count("  validationActions:\n  - Warn\n  - Audit\n") == 3
    assert "- Deny" not in written
    assert "only warn and audit (spec.admissionPolicies.enforcement in " in out
    assert "set it to Deny in a change of its own (docs/boundaries.md" in out


def test_validate_fails_on_stale_policies_until_they_are_generated_again(repo_copy: Path) -> None:
    profile = repo_copy / "tenants/team-b/profile.yaml"
    profile.write_text(
        profile.read_text().replace(
            "workload: [batch-low, batch-standard]", "workload: [batch-low]"
        )
    )
    team_b = sorted(Repository.open(repo_copy).tenants["team-b"].clusters)
    assert "gpu-prod" in team_b
    code, report = validate(repo_copy)
    assert code == 1
    stale = [f for f in findings(report) if f["rule"] == "admission-policies-stale"]
    assert sorted((f["cluster"], f["file"]) for f in stale) == [
        (c, f"clusters/{c}/admission-policies.yaml") for c in team_b
    ]
    assert '+      {"team-a": ["batch-low", "batch-standard"], "team-b": ["batch-low"]}' in str(
        stale[0]["message"]
    )
    code, out = generate(repo_copy, "--cluster", "gpu-prod")
    assert code == 0
    assert "admission-policies.yaml: 2 namespace(s) that admit work, written\n" in out
    code, report = validate(repo_copy)
    assert sorted(
        f["cluster"] for f in findings(report) if f["rule"] == "admission-policies-stale"
    ) == [c for c in team_b if c != "gpu-prod"]
    generate(repo_copy)
    assert validate(repo_copy)[0] == 0
    text = (repo_copy / "clusters/gpu-staging/admission-policies.yaml").read_text()
    assert '"team-b": ["batch-low"]' in text
