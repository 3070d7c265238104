"""kueue-gitops as a platform team gets it: this tree released as VERSION the way a maintainer
releases it (CONTRIBUTING.md), its wheel built and checked as the release workflow does, and
installed without extras in a fresh virtualenv. Session fixtures, shared by the package tests
(tests/acceptance/test_package.py) and the adopter's path (tests/integration/test_adopter.py),
so the wheel is built and installed once per run.

Commands run with `run`: in a folder of their own, without this checkout's virtualenv or
PYTHONPATH, as a user's shell would.
"""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PACKAGE = (
    "pyproject.toml",
    "setup.py",
    "README.md",
    "LICENSE",
    "CHANGELOG.md",
    ".pre-commit-hooks.yaml",
    "auditor",
    "testenv",
    "scripts/release_check.py",
    "packages/kueue-gitops-sim",  # the simulator's wheel (tests/integration/test_sim_wheel.py)
)
# The release these tests make of the package, as a maintainer does (CONTRIBUTING.md): the
# changelog's Unreleased section becomes the release's, then the annotated tag.
VERSION = "9.9.9"
IGNORED = shutil.ignore_patterns("__pycache__", "build", "*.egg-info")  # what a build leaves


def run(argv: list[str], cwd: Path, **kw: t.Any) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    return subprocess.run(
        argv, cwd=cwd, capture_output=True, text=True, timeout=600, env=env | kw.pop("env", {})
    )


def git(cwd: Path, *argv: str) -> None:
    user = ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", *user, *argv], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="session")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package as a git repository of its own, released as VERSION: what pip and
    pre-commit are given."""
    out = tmp_path_factory.mktemp("kueue-gitops-src")
    for name in PACKAGE:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, out / name, ignore=IGNORED)
        else:
            shutil.copy(ROOT / name, out / name)
    changelog = out / "CHANGELOG.md"
    today = datetime.date.today().isoformat()
    changelog.write_text(
        changelog.read_text().replace("## [Unreleased]", f"## [{VERSION}] - {today}", 1)
    )
    git(out, "init", "-q", "-b", "main")
    git(out, "add", ".")
    git(out, "commit", "-qm", "kueue-gitops")
    git(out, "tag", "-a", f"v{VERSION}", "-m", f"kueue-gitops {VERSION}")
    return out


@pytest.fixture(scope="session")
def wheel(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel a user installs, built from the sdist as pip and `python -m build` do, and
    checked as the release workflow checks it before publishing."""
    out = tmp_path_factory.mktemp("release") / "dist"
    built = run([sys.executable, "-m", "build", "--outdir", str(out)], source)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    check = [sys.executable, "scripts/release_check.py", f"v{VERSION}", str(out)]
    checked = run(check, source)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    notes = (out.parent / "release-notes.md").read_text()
    assert notes.startswith("A reorganisation") or "### Added" in notes
    [found] = out.glob("kueue_gitops-*.whl")
    return found


@pytest.fixture(scope="session")
def base_install(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip install kueue-gitops` into a fresh virtualenv: no extras. Returns its command."""
    venv = tmp_path_factory.mktemp("venv-base")
    assert run([sys.executable, "-m", "venv", str(venv)], venv).returncode == 0
    installed = run([str(venv / "bin/pip"), "install", "--quiet", str(wheel)], venv)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return venv / "bin/kueue-gitops"
