"""After `import`, the tool's own path works on the repository it wrote: `init --adopt` writes
what the repository lacks and keeps what it has, `tenant add` follows the estate's ways and
refuses what a cluster lacks, and each hint names a command that works there."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest
import yaml

from tests import adopted
from tests.conftest import run_line

URL = adopted.REPO_URL
SPEECH = [
    *("tenant", "add", "speech", "--cluster", adopted.CLUSTER, "--owner", "@company/speech"),
    *("--group", "oidc:speech", "--quota", "a100.nvidia.com/gpu=2"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return adopted.imported(tmp_path / "estate")


def kg(repo: Path, *argv: str) -> tuple[int, str, str]:
    result = run_line(["kueue-gitops", "--repo", str(repo), *argv])
    return result.exit_code, result.stdout, result.stderr


def snapshot(repo: Path) -> dict[str, str]:
    return {
        p.relative_to(repo).as_posix(): p.read_text()
        for p in sorted(repo.rglob("*"))
        if p.is_file()
    }


def findings(repo: Path) -> list[tuple[str, str]]:
    code, out, _ = kg(repo, "validate", "-o", "json")
    found = [(f["rule"], f["message"]) for f in json.loads(out)["findings"]]
    assert code == (1 if found else 0)
    return found


def docs(path: Path) -> list[dict[str, t.Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_adopt_writes_what_the_import_lacks_and_keeps_every_imported_file(repo: Path) -> None:
    imported = snapshot(repo)
    code, out, err = kg(repo, "init", "--adopt", "--repo-url", URL)
    assert code == 0, err
    after = snapshot(repo)
    assert {p: after[p] for p in imported} == imported  # nothing imported was touched
    new = sorted(set(after) - set(imported))
    assert {f"wrote {p}" for p in new if p != "CODEOWNERS"} <= set(out.splitlines())
    for path in ("argocd/applicationsets.yaml", "argocd/projects.yaml", "CODEOWNERS",
                 f"clusters/{adopted.CLUSTER}/alerts.yaml", ".pre-commit-config.yaml",
                 ".github/workflows/pull-request.yml", *(f"argocd/tenants/{team}.yaml"
                 for team in adopted.TEAMS)):  # fmt: skip
        assert path in new, path
    sets = docs(repo / "argocd/applicationsets.yaml")
    assert {s["spec"]["template"]["spec"]["source"]["repoURL"] for s in sets} == {URL}
    [platform] = docs(repo / "argocd/projects.yaml")
    assert platform["spec"]["sourceRepos"] == [URL]
    [nlp] = docs(repo / "argocd/tenants/nlp.yaml")
    assert nlp["spec"]["destinations"] == [{"name": adopted.CLUSTER, "namespace": "nlp"}]
    assert "/tenants/nlp/*/localqueues.yaml" in (repo / "CODEOWNERS").read_text()
    # What validate still names is the admission policies (none yet, and their enforcement),
    # which the next steps write: Warn in the profiles first, then `generate policies`.
    rules = {rule for rule, _ in findings(repo)}
    assert "admission-policies-stale" in rules and "alert-missing" not in rules
    assert {r for r in rules if not r.startswith("admission-policies-")} == set()
    adopted.warn_first(repo)
    assert kg(repo, "generate", "policies")[0] == 0
    assert findings(repo) == []
    assert kg(repo, "codeowners", "--check")[0] == 0
    # Again: every file is there, so nothing is written.
    code, out, _ = kg(repo, "init", "--adopt", "--repo-url", URL)
    assert code == 0 and "wrote " not in out and "kept argocd/projects.yaml (it exists)" in out


def test_the_platform_project_allows_what_the_imported_cluster_folder_holds(repo: Path) -> None:
    rbac = repo / f"clusters/{adopted.CLUSTER}/rbac.yaml"
    rbac.write_text(
        rbac.read_text() + "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n"
        "  name: reader\n  namespace: batch-ops\nrules: []\n"
    )
    assert kg(repo, "init", "--adopt", "--repo-url", URL)[0] == 0
    [platform] = docs(repo / "argocd/projects.yaml")
    assert {"name": adopted.CLUSTER, "namespace": "batch-ops"} in platform["spec"]["destinations"]
    allowed = platform["spec"]["namespaceResourceWhitelist"]
    assert {"group": "rbac.authorization.k8s.io", "kind": "Role"} in allowed


def test_adopt_refuses_what_it_cannot_do_and_writes_nothing(repo: Path, tmp_path: Path) -> None:
    before = snapshot(repo)
    code, _, err = kg(repo, "init", "--adopt", "--repo-url", URL, "--cluster", "gpu-west")
    assert code == 2 and "--adopt takes the clusters from the repository's profiles" in err
    code, _, err = kg(repo, "init", "--adopt", "--repo-url", URL, "--cohort", "other")
    assert code == 2 and "--cohort" in err
    assert snapshot(repo) == before
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = kg(empty, "init", "--adopt", "--repo-url", URL)
    assert code == 2 and "import a cluster first" in err
    assert list(empty.iterdir()) == []


def test_init_and_tenant_add_in_an_imported_repository_name_the_adopt_command(
    repo: Path,
) -> None:
    code, _, err = kg(repo, "init", "--cluster", "gpu-west", "--repo-url", URL)
    assert code == 2 and "`kueue-gitops init --adopt --repo-url URL`" in err
    code, _, err = kg(repo, *SPEECH)
    assert code == 2 and "`kueue-gitops init --adopt --repo-url URL`" in err
    code, _, err = kg(repo, "generate", "argocd", "--repo-url", URL)
    assert code == 2 and "`kueue-gitops init --adopt --repo-url URL`" in err
    [alerts] = [m for rule, m in findings(repo) if rule == "alert-missing"]
    assert "`kueue-gitops init --adopt --repo-url URL`" in alerts
    # The command named works, and each of those steps then does.
    assert kg(repo, "init", "--adopt", "--repo-url", URL)[0] == 0
    assert "alert-missing" not in {rule for rule, _ in findings(repo)}
    assert kg(repo, *SPEECH)[0] == 0
    code, out, _ = kg(repo, "generate", "argocd", "--repo-url", "https://fork.example/e.git")
    assert code == 0 and "https://fork.example/e.git" in out


def test_tenant_add_follows_the_estates_role_and_queue_names(repo: Path) -> None:
    assert kg(repo, "init", "--adopt", "--repo-url", URL)[0] == 0
    adopted.warn_first(repo)
    code, _, err = kg(repo, *SPEECH, "--cohort", "research")
    assert code == 0, err
    folder = repo / f"tenants/speech/{adopted.CLUSTER}"
    [binding] = docs(folder / "rbac.yaml")
    assert binding["roleRef"]["name"] == adopted.ROLE  # the estate's, not tenant-submitter
    [local] = docs(folder / "localqueues.yaml")
    assert (local["metadata"]["name"], local["spec"]["clusterQueue"]) == ("jobs", "speech-gpus")
    queues = docs(repo / f"clusters/{adopted.CLUSTER}/clusterqueues.yaml")
    assert [q["metadata"]["name"] for q in queues][-1] == "speech-gpus"
    [namespace] = docs(folder / "namespace.yaml")
    assert namespace["metadata"]["labels"]["company.io/gpu-access"] == "true"
    assert kg(repo, "generate", "policies")[0] == 0
    assert findings(repo) == []  # its own output passes: no rbac-unresolved-role
    assert kg(repo, "codeowners", "--check")[0] == 0


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--quota", "h100.cpu=8"], "--quota flavor h100: no such flavor on cluster gpu-east "
         "(known: a100)"),
        (["--cohort", "reserach"], "--cohort reserach: no such cohort on cluster gpu-east "
         "(known: research)"),
        (["--role", "kueue-gitops:tenant-submitter"], "--role kueue-gitops:tenant-submitter: no "
         "such ClusterRole on cluster gpu-east (known: company:batch-user)"),
        (["--role", "edit"], "no such ClusterRole on cluster gpu-east"),
    ],
)  # fmt: skip
def test_tenant_add_refuses_what_the_cluster_lacks_before_writing(
    repo: Path, extra: list[str], says: str
) -> None:
    assert kg(repo, "init", "--adopt", "--repo-url", URL)[0] == 0
    before = snapshot(repo)
    code, _, err = kg(repo, *SPEECH, *extra)
    assert code == 2 and says in err and "nothing was written" in err, err
    assert snapshot(repo) == before


def test_tenant_add_refuses_a_cluster_queue_that_exists(repo: Path) -> None:
    assert kg(repo, "init", "--adopt", "--repo-url", URL)[0] == 0
    path = repo / f"clusters/{adopted.CLUSTER}/clusterqueues.yaml"
    path.write_text(path.read_text().replace("name: vision-gpus", "name: speech-gpus"))
    before = snapshot(repo)
    code, _, err = kg(repo, *SPEECH)
    assert code == 2 and "ClusterQueue speech-gpus exists already on cluster gpu-east" in err
    assert snapshot(repo) == before


def test_every_command_adopts_next_hint_names_runs_on_the_repository(repo: Path) -> None:
    code, out, _ = kg(repo, "init", "--adopt", "--repo-url", URL)
    assert code == 0
    hint = out[out.index("next:") :].splitlines()[1:]
    assert "enforcement: Warn" in hint[1]  # generate policies' step says to set it first
    adopted.warn_first(repo)
    filled = {"TEAM": "speech", "@ORG/TEAM": "@company/speech", "GROUP": "oidc:speech",
              "FLAVOR.RESOURCE=N": "a100.nvidia.com/gpu=2"}  # fmt: skip
    ran = []
    for line in hint:
        argv = line.split("   #")[0].split(" | ")[0].split()
        assert argv[0] == "kueue-gitops", line
        if argv[1] == "plan":
            continue  # reads git revisions and a live cluster: the integration tests run it
        code, _, err = kg(repo, *(filled.get(a, a) for a in argv[1:]))
        assert code in (0, 1), (line, err)  # runs (1: findings), never a usage error
        ran.append(argv[1])
    assert ran == ["validate", "generate", "tenant", "generate"]
    assert findings(repo) == []  # and, taken in that order, leave it clean


def test_tenant_add_in_an_estate_bound_to_a_built_in_role_says_what_to_define(
    repo: Path,
) -> None:
    assert kg(repo, "init", "--adopt", "--repo-url", URL)[0] == 0
    for path in repo.glob(f"tenants/*/{adopted.CLUSTER}/rbac.yaml"):
        path.write_text(path.read_text().replace(f"name: {adopted.ROLE}", "name: edit"))
    before = snapshot(repo)
    code, _, err = kg(repo, *SPEECH)
    assert code == 2
    assert "--role kueue-gitops:tenant-submitter: no such ClusterRole on cluster gpu-east" in err
    assert "the tenants bind edit, which clusters/gpu-east/ does not define" in err
    assert snapshot(repo) == before
    assert kg(repo, *SPEECH, "--role", adopted.ROLE)[0] == 0  # a role it defines, named


def test_tenant_add_shares_an_existing_cluster_queue_or_refuses_one_it_cannot_join(
    repo: Path,
) -> None:
    assert kg(repo, "init", "--adopt", "--repo-url", URL)[0] == 0
    adopted.warn_first(repo)
    joining = [*SPEECH[:-2], "--cluster-queue"]  # no --quota: the queue's own
    before = snapshot(repo)
    code, _, err = kg(repo, *joining, "nlp-gpu")
    assert code == 2 and "--cluster-queue nlp-gpu: no such ClusterQueue on cluster gpu-east" in err
    assert "(known: nlp-gpus, vision-gpus)" in err
    code, _, err = kg(repo, *SPEECH, "--cluster-queue", "nlp-gpus")
    assert code == 2 and "drop --quota and --cohort" in err
    path = repo / f"clusters/{adopted.CLUSTER}/clusterqueues.yaml"
    access = "company.io/gpu-access: 'true'"
    narrowed = path.read_text().replace(access, f"{access}\n      company.io/team: nlp")
    path.write_text(narrowed)
    code, _, err = kg(repo, *joining, "vision-gpus")
    assert code == 2 and "does not select the tenant's namespace" in err
    path.write_text(before[path.relative_to(repo).as_posix()])
    assert snapshot(repo) == before
    code, _, err = kg(repo, *joining, "vision-gpus")
    assert code == 0, err
    [local] = docs(repo / f"tenants/speech/{adopted.CLUSTER}/localqueues.yaml")
    assert local["spec"]["clusterQueue"] == "vision-gpus"
    assert path.read_text() == before[path.relative_to(repo).as_posix()]  # no queue added
    profile = docs(repo / "tenants/speech/profile.yaml")[0]["spec"]
    assert profile["clusters"][adopted.CLUSTER]["clusterQueues"] == ["vision-gpus"]
    assert profile["flavors"] == ["a100"]
    assert findings(repo) == []  # two tenants on one queue, each through its own LocalQueue
