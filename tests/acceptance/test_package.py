"""kueue-gitops as another team gets it: a wheel built from this tree and installed in a fresh
virtualenv, and the pre-commit hooks this repository offers, run with `pre-commit try-repo`.

Both install the package the ordinary way, its dependencies from the package index, into
environments of their own, and run it on a repository that holds only clusters/, tenants/,
schemas/ (and CODEOWNERS for the codeowners hook).
"""

from __future__ import annotations

import email
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from auditor.rules import catalogue
from tests.acceptance.user_repos import user_repo
from tests.conftest import ROOT
from tests.installed import VERSION, git, run


def test_the_wheel_installs_in_a_fresh_venv_and_validates_a_bare_repository(
    wheel: Path, base_install: Path, tmp_path: Path
) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        meta = email.message_from_bytes(archive.read(f"kueue_gitops-{VERSION}.dist-info/METADATA"))
    assert f"kueue_gitops-{VERSION}.dist-info/licenses/LICENSE" in names
    assert meta["License-Expression"] == "Apache-2.0"
    assert "Typing :: Typed" in meta.get_all("Classifier", [])
    assert any(u.startswith("Issues, ") for u in meta.get_all("Project-URL", []))
    crypto = [r for r in meta.get_all("Requires-Dist", []) if r.startswith("cryptography")]
    assert crypto and all('extra == "sandbox"' in r for r in crypto)  # only the sandbox needs it
    assert "auditor/repo/profile_schemas/clusterprofile.json" in names
    assert {"auditor/drift/rules.yaml", "auditor/validate/checks/quotas.rules.yaml"} <= set(names)

    cli = str(base_install)
    version = run([cli, "--version"], tmp_path)
    assert version.stdout.strip().endswith(VERSION)
    listed = run([cli, "rules"], tmp_path)  # every rule's declaration is shipped
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 1 + len(catalogue())

    repo = user_repo(tmp_path / "platform")
    checked = run([cli, "validate"], repo)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "validate: clean" in checked.stdout
    anywhere = run([cli, "validate", "--repo", str(repo), "-o", "junit"], tmp_path)
    assert anywhere.returncode == 0 and "<testsuites" in anywhere.stdout
    page = run([cli, "validate", "--repo", str(repo), "-o", "html"], tmp_path)  # pygal installed
    assert page.returncode == 0 and page.stdout.startswith("<!DOCTYPE html>"), page.stderr
    from_env = run([cli, "codeowners", "--check"], tmp_path, env={"KUEUE_GITOPS_REPO": str(repo)})
    assert from_env.returncode == 0, from_env.stderr


def test_a_repository_from_init_validates_with_the_packaged_schemas_and_no_go(
    wheel: Path, base_install: Path, tmp_path: Path
) -> None:
    """In an empty git repository: `init`, `cluster add` and `validate` with no schemas/
    folder, no Go on PATH and nothing built: the package's schemas of the cluster's Kueue
    release judge it, and the report says so."""
    with zipfile.ZipFile(wheel) as archive:
        packaged = [n for n in archive.namelist() if n.startswith("auditor/schemas/packaged/")]
    assert "auditor/schemas/packaged/v0.9.1.json" in packaged
    cli = str(base_install)
    path = f"{base_install.parent}:/usr/bin:/bin"
    assert shutil.which("go", path=path) is None
    env = {"PATH": path, "KUEUE_GITOPS_CACHE": str(tmp_path / "cache")}
    repo = tmp_path / "platform"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    url = "https://git.example.com/platform/kueue.git"
    owner = ["--owner", "@platform/kueue-admins"]
    started = run([cli, "init", "--cluster", "gpu-a", "--repo-url", url, *owner], repo, env=env)
    assert started.returncode == 0, started.stdout + started.stderr
    version = re.search(r"version: (v[0-9.]+)", (repo / "clusters/gpu-a/profile.yaml").read_text())
    assert version is not None
    assert not (repo / "schemas/gpu-a").exists()

    checked = run([cli, "validate"], repo, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "validate: clean" in checked.stdout
    assert (
        f"gpu-a: schemas from the package, those of Kueue {version[1]} (its profile's release)"
        in checked.stderr
    ), checked.stderr
    added = run([cli, "cluster", "add", "gpu-b", "--kueue-version", "v0.17.0"], repo, env=env)
    assert added.returncode == 0, added.stdout + added.stderr
    report = run([cli, "validate", "-o", "json"], repo, env=env)
    assert report.returncode == 0, report.stdout + report.stderr
    sources = {c["name"]: c["schemas"] for c in json.loads(report.stdout)["clusters"]}
    assert sources == {
        "gpu-a": {"source": "package", "kueue": version[1], "kubernetes": "v1.35.4"},
        "gpu-b": {"source": "package", "kueue": "v0.17.0", "kubernetes": "v1.35.4"},
    }

    # A release the package does not carry: the clear configuration error, naming the fix.
    b = repo / "clusters/gpu-b/profile.yaml"
    b.write_text(b.read_text().replace("version: v0.17.0", "version: v0.18.0"))
    refused = run([cli, "validate"], repo, env=env)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "no schemas for cluster gpu-b" in refused.stderr
    assert "kueue-gitops schemas fetch --cluster gpu-b" in refused.stderr


def test_the_release_check_refuses_what_does_not_match_the_tag(source: Path, wheel: Path) -> None:
    """A tag whose release the changelog does not describe, or whose build is not in dist/,
    is refused before anything is published."""
    dist = str(wheel.parent)
    for tag, says in (("v9.9.8", "no section `## [9.9.8]"), ("9.9.9", "not a release tag")):
        refused = run([sys.executable, "scripts/release_check.py", tag, dist], source)
        assert refused.returncode == 1 and says in refused.stderr, refused.stderr


def test_the_wheel_ships_every_pinned_go_module(wheel: Path) -> None:
    """The sandbox builds from the pins in the package when a repository has none: every file
    of testenv/ (each module and program, however many are added) is in the wheel, as is."""
    tracked = subprocess.run(
        ["git", "ls-files", "testenv"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert "testenv/go.mod" in tracked and "testenv/kueue-v0.9.1/go.mod" in tracked
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            n.removeprefix("auditor/"): archive.read(n)
            for n in archive.namelist()
            if n.startswith("auditor/testenv/")
        }
    assert set(shipped) == set(tracked)
    for name in tracked:
        assert shipped[name] == (ROOT / name).read_bytes(), name


def test_the_base_install_helps_and_completes_without_the_extras(
    base_install: Path, tmp_path: Path
) -> None:
    """Without [sandbox] and [lsp], every command lists, helps and completes; only starting a
    sandbox or the language server asks for its extra (a sandbox before building anything)."""
    cli = str(base_install)
    for argv, code in (([cli, "--help"], 0), ([cli, "-h"], 0), ([cli], 2)):  # bare: usage
        shown = run(argv, tmp_path)
        said = shown.stdout + shown.stderr
        assert shown.returncode == code, said
        assert "validate" in said and "sandbox" in said
        assert "Traceback" not in said and "extra" not in said
    listed = run([cli, "--help"], tmp_path).stdout
    commands = re.findall(r"^  ([a-z][a-z-]+)  ", listed, flags=re.M)
    assert len(commands) >= 20, listed
    for command in commands:
        helped = run([cli, command, "--help"], tmp_path)
        assert helped.returncode == 0, (command, helped.stderr)
        assert "extra" not in helped.stdout + helped.stderr, command

    completion = {"_KUEUE_GITOPS_COMPLETE": "bash_complete", "COMP_WORDS": "kueue-gitops ",
                  "COMP_CWORD": "1"}  # fmt: skip
    completed = run([cli], tmp_path, env=completion)
    assert completed.returncode == 0 and completed.stderr == ""
    assert "plain,validate" in completed.stdout.split() and "plain,sandbox" in completed.stdout

    crds = tmp_path / "crds.yaml"
    crds.write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: clusterqueues.kueue.x-k8s.io}\nspec:\n  group: kueue.x-k8s.io\n"
        "  versions: [{name: v1beta2, served: true, storage: true}]\n"
    )
    repo = user_repo(tmp_path / "platform")
    nowhere = tmp_path / "kubeconfig"
    nowhere.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    upgrade = run(
        [cli, "upgrade-check", "--cluster", "gpu-prod", "--to", str(crds),
         "--kubeconfig", str(nowhere)],
        repo,
    )  # fmt: skip
    # The CRDs were read; what stops it is the cluster's context, not a missing extra.
    assert upgrade.returncode == 2, upgrade.stdout + upgrade.stderr
    assert "cluster gpu-prod: no context gpu-prod of" in upgrade.stderr
    assert "extra" not in upgrade.stdout + upgrade.stderr

    started = run([cli, "sandbox", "up", "scratch"], tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert started.returncode == 2, started.stdout + started.stderr
    assert "pip install 'kueue-gitops[sandbox]'" in started.stderr
    assert "building" not in started.stderr

    served = run([cli, "lsp"], repo)  # the language server runs on pygls, the [lsp] extra
    assert served.returncode == 2, served.stdout + served.stderr
    assert "pip install 'kueue-gitops[lsp]'" in served.stderr and served.stdout == ""


def verdicts(output: str) -> dict[str, tuple[str, str]]:
    """pre-commit's run, by hook name: its verdict (Passed, Failed) and what it printed."""
    heads = list(re.finditer(r"^(kueue-gitops [^\n]*?)\.{3,}(Passed|Failed)$", output, re.M))
    ends = [h.start() for h in heads[1:]] + [len(output)]
    return {h[1]: (h[2], output[h.end() : end]) for h, end in zip(heads, ends, strict=True)}


def test_pre_commit_try_repo_runs_the_offered_hooks(source: Path, tmp_path: Path) -> None:
    """Every hook .pre-commit-hooks.yaml offers, as a user's `pre-commit try-repo` runs them
    (one hook environment a run, shared by the hooks, as in a user's repository)."""
    repo = user_repo(tmp_path / "platform")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "platform")
    env = {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache")}
    argv = [sys.executable, "-m", "pre_commit", "try-repo", str(source), "--all-files"]
    validate, codeowners = "kueue-gitops validate", "kueue-gitops codeowners --check"

    ok = run(argv, repo, env=env)
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-3000:]
    said = verdicts(ok.stdout)
    assert {name: verdict for name, (verdict, _) in said.items()} == {
        validate: "Passed",
        codeowners: "Passed",
    }

    # A tenant's profile gains an owner CODEOWNERS does not know, and a queue a bad strategy.
    profile = repo / "tenants/team-a/profile.yaml"
    profile.write_text(profile.read_text().replace('"@example-org/team-a"', '"@example-org/ml"'))
    queues = repo / "clusters/gpu-prod/clusterqueues.yaml"
    queues.write_text(queues.read_text().replace("BestEffortFIFO", "Fastest", 1))
    git(repo, "add", ".")
    failed = run(argv, repo, env=env)
    assert failed.returncode == 1, failed.stdout[-3000:]
    said = verdicts(failed.stdout)
    assert said[validate][0] == "Failed" and "queueingStrategy" in said[validate][1]
    assert said[codeowners][0] == "Failed" and "CODEOWNERS" in said[codeowners][1]


def test_the_repositorys_own_hooks_are_the_offered_ones() -> None:
    import yaml

    offered = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    own = {h["id"]: h for r in config["repos"] for h in r["hooks"] if h["id"] in offered}
    assert set(own) == set(offered)
    for hook_id, hook in own.items():
        want = offered[hook_id]
        assert hook["entry"] == f".venv/bin/{want['entry']}"  # this checkout's own install
        for key in ("name", "files", "pass_filenames"):
            assert hook[key] == want[key], (hook_id, key)
