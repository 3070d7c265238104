from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import run_line
from tests.estate import ESTATE


def codeowners(repo: Path, *args: str) -> tuple[int, str]:
    result = run_line(["kueue-gitops", "--repo", str(repo), "codeowners", *args])
    return result.exit_code, result.output


def test_the_estates_codeowners_is_current() -> None:
    assert codeowners(ESTATE, "--check") == (0, "codeowners: clean: 0 error(s), 0 warning(s)\n")


def test_generated_file_gives_the_platform_everything_and_tenants_their_queues(
    repo_copy: Path,
) -> None:
    code, out = codeowners(repo_copy)
    assert code == 0 and out.endswith("CODEOWNERS: 3 rules, written\n")
    lines = [ln.split() for ln in (repo_copy / "CODEOWNERS").read_text().splitlines()]
    assert [ln for ln in lines if ln and not ln[0].startswith("#")] == [
        ["*", "@example-org/platform"],
        ["/tenants/team-a/*/localqueues.yaml", "@example-org/team-a"],
        ["/tenants/team-b/*/localqueues.yaml", "@example-org/team-b"],
    ]
    assert codeowners(repo_copy, "--check")[0] == 0
    assert codeowners(repo_copy)[1].endswith("unchanged\n")


def test_check_without_a_codeowners_file_fails(repo_copy: Path) -> None:
    code, out = codeowners(repo_copy, "--check")
    assert code == 1
    assert "there is no CODEOWNERS; run `kueue-gitops codeowners`" in out


def test_check_fails_when_a_profile_changed_since_generation(repo_copy: Path) -> None:
    codeowners(repo_copy)
    shutil.copytree(repo_copy / "tenants/team-b", repo_copy / "tenants/team-c")
    profile = repo_copy / "tenants/team-c/profile.yaml"
    profile.write_text(
        profile.read_text().replace("name: team-b", "name: team-c").replace("team-b", "team-c")
    )
    code, out = codeowners(repo_copy, "--check", "-o", "json")
    assert code == 1
    [finding] = json.loads(out)["findings"]
    assert finding["rule"] == "codeowners-stale"
    assert (finding["file"], finding["line"]) == ("CODEOWNERS", 8)
    assert "+/tenants/team-c/*/localqueues.yaml  @example-org/team-c" in finding["message"]
    assert codeowners(repo_copy)[0] == 0
    assert codeowners(repo_copy, "--check")[0] == 0


def test_check_names_every_path_a_hand_edit_left_unowned(repo_copy: Path) -> None:
    codeowners(repo_copy)
    path = repo_copy / "CODEOWNERS"
    text = path.read_text().replace(
        "*                                   @example-org/platform\n", ""
    )
    path.write_text(text + "/tenants/team-b/\n")
    code, out = codeowners(repo_copy, "--check")
    assert code == 1
    assert "codeowners-stale" in out
    assert (
        "clusters/gpu-prod/clusterqueues.yaml has no owner in CODEOWNERS (no line matches it)"
        in (" ".join(out.split()))
    )
    assert (
        "tenants/team-b/gpu-prod/localqueues.yaml has no owner in CODEOWNERS (line 7 un-owns it)"
        in (" ".join(out.split()))
    )
    assert "tenants/team-a/gpu-prod/localqueues.yaml has no owner" not in out


def test_a_tenant_moved_to_kustomize_owns_its_folders_and_the_dead_line_is_flagged(
    repo_copy: Path,
) -> None:
    assert codeowners(repo_copy)[0] == 0
    folders = sorted((repo_copy / "tenants/team-a").glob("*/"))
    assert folders
    for folder in folders:  # team-a's queues are now built by kustomize from queues.yaml
        (folder / "localqueues.yaml").rename(folder / "queues.yaml")
        names = sorted(p.name for p in folder.glob("*.yaml"))
        (folder / "kustomization.yaml").write_text(f"resources: [{', '.join(names)}]\n")
    code, out = codeowners(repo_copy, "--check")
    assert code == 1
    assert "line 6 (/tenants/team-a/*/localqueues.yaml) matches no file of the repository" in out, (
        out
    )
    assert codeowners(repo_copy)[0] == 0
    lines = [ln.split() for ln in (repo_copy / "CODEOWNERS").read_text().splitlines()]
    owned = [ln for ln in lines if ln and not ln[0].startswith("#")]
    assert owned == [
        ["*", "@example-org/platform"],
        *([f"/tenants/team-a/{f.name}/", "@example-org/team-a"] for f in folders),
        ["/tenants/team-b/*/localqueues.yaml", "@example-org/team-b"],
    ]
    assert codeowners(repo_copy, "--check") == (
        0,
        "codeowners: clean: 0 error(s), 0 warning(s)\n",
    )


def test_check_flags_a_hand_written_line_that_matches_no_file(repo_copy: Path) -> None:
    assert codeowners(repo_copy)[0] == 0
    path = repo_copy / "CODEOWNERS"
    path.write_text(path.read_text() + "/tenants/team-z/  @example-org/team-z\n")
    code, out = codeowners(repo_copy, "--check")
    assert code == 1 and "(/tenants/team-z/) matches no file" in out
    assert "codeowners-no-match" in out
