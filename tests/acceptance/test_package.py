"""kueue-gitops as another team gets it: a wheel built from this tree and installed in a fresh
virtualenv, and the pre-commit hooks this repository offers, run with `pre-commit try-repo`.

Both install the package the ordinary way, its dependencies from the package index, into
environments of their own, and run it on a repository that holds only clusters/, tenants/,
schemas/ (and CODEOWNERS for the codeowners hook).
"""

from __future__ import annotations

import email
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import typing as t
import zipfile
from pathlib import Path

import pytest

from auditor.rules import catalogue
from tests.conftest import ROOT

PACKAGE = ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml", "auditor")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def run(argv: list[str], cwd: Path, **kw: t.Any) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=600, env=env | kw.pop("env", {})
    )


def git(cwd: Path, *argv: str) -> None:
    user = ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *user, *argv], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package as a git repository of its own: what pip and pre-commit are given."""
    out = tmp_path_factory.mktemp("kueue-gitops-src")
    for name in PACKAGE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, out / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, out / name)
    git(out, "init", "-q", "-b", "main")
    git(out, "add", ".")
    git(out, "commit", "-qm", "kueue-gitops")
    return out


def user_repo(dest: Path) -> Path:
    """A platform team's repository: clusters/, tenants/, schemas/ and CODEOWNERS, nothing else
    (as committed: work in progress in this tree is not part of it)."""
    archive = subprocess.run(
        ["git", "archive", "HEAD", "clusters", "tenants", "schemas", "CODEOWNERS"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def test_the_wheel_installs_in_a_fresh_venv_and_validates_a_bare_repository(
    source: Path, tmp_path: Path
) -> None:
    built = run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path)], source)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    [wheel] = tmp_path.glob("kueue_gitops-*.whl")
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

    venv = tmp_path / "venv"
    assert run([sys.executable, "-m", "venv", str(venv)], tmp_path).returncode == 0
    installed = run([str(venv / "bin/pip"), "install", "--quiet", str(wheel)], tmp_path)
    assert installed.returncode == 0, installed.stderr[-3000:]
    cli = str(venv / "bin/kueue-gitops")
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
    from_env = run([cli, "codeowners", "--check"], tmp_path, env={"KUEUE_GITOPS_REPO": str(repo)})
    assert from_env.returncode == 0, from_env.stderr


def test_pre_commit_try_repo_runs_the_offered_hooks(source: Path, tmp_path: Path) -> None:
    repo = user_repo(tmp_path / "platform")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "platform")
    env = {"PRE_COMMIT_HOME": str(tmp_path / "pre-commit-cache")}

    def hook(name: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "pre_commit", "try-repo", str(source), name, "--all-files"]
        return run(argv, repo, env=env)

    for name in ("kueue-gitops-validate", "kueue-gitops-codeowners"):
        ok = hook(name)
        assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-3000:]
        assert "Passed" in ok.stdout

    # A tenant's profile gains an owner CODEOWNERS does not know, and a queue a bad strategy.
    profile = repo / "tenants/team-a/profile.yaml"
    profile.write_text(profile.read_text().replace('"@example-org/team-a"', '"@example-org/ml"'))
    queues = repo / "clusters/gpu-prod/clusterqueues.yaml"
    queues.write_text(queues.read_text().replace("BestEffortFIFO", "Fastest", 1))
    git(repo, "add", ".")
    for name, says in (
        ("kueue-gitops-validate", "queueingStrategy"),
        ("kueue-gitops-codeowners", "CODEOWNERS"),
    ):
        failed = hook(name)
        assert failed.returncode == 1, failed.stdout[-3000:]
        assert "Failed" in failed.stdout and says in failed.stdout


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
