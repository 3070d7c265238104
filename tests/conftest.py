"""Fixtures shared by every test: the CLI runner and, for integration tests, real sandboxes."""

from __future__ import annotations

import hashlib
import json
import os
import typing as t
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from auditor.cli.main import cli
from auditor.repo.gitsource import GitTree
from auditor.repo.tree import WorkTree
from auditor.report import contract
from auditor.sandbox import Sandbox, Toolchain, ensure_built
from tests.estate import copy_estate
from tests.installed import base_install, source, wheel  # noqa: F401 - session fixtures

ROOT = Path(__file__).resolve().parent.parent
LIVE_ESTATE_CHECK = ROOT / "tests/acceptance/test_live_estate.py"


def run_line(argv: list[str], **kw: t.Any) -> Result:
    """Run one shell-like line, e.g. run_line(["kueue-gitops", "validate"]).

    Every JSON report a line writes is held to the report contract (report.schema.json)."""
    assert argv[0] == "kueue-gitops"
    result = CliRunner().invoke(cli, argv[1:], catch_exceptions=False, **kw)
    if _asks_for_json(argv) and result.stdout.startswith("{"):
        assert_report(json.loads(result.stdout))
    return result


def own_context(kubeconfig: Path | str) -> list[str]:
    """--kubeconfig F --context C, C being F's current context: a sandbox's (or a test's own)
    kubeconfig is not named like the repo's cluster, so a one-cluster command names it, as a
    person with such a file would (without --context, the cluster profile's context is used)."""
    doc = yaml.safe_load(Path(kubeconfig).read_text())
    return ["--kubeconfig", str(kubeconfig), "--context", str(doc["current-context"])]


def _asks_for_json(argv: list[str]) -> bool:
    pairs = zip(argv, [*argv[1:], ""], strict=True)
    return any(a in ("-o", "--output") and b == "json" for a, b in pairs) or any(
        a in ("-ojson", "--output=json") for a in argv
    )


def assert_report(doc: t.Any) -> None:
    """Fail the test when `doc` breaks the JSON report contract."""
    problems = contract.problems(doc)
    assert not problems, "the JSON report breaks report.schema.json:\n" + "\n".join(problems)


@pytest.fixture(autouse=True)
def frozen_estate_only(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail a test that opens this checkout as a repository (its live clusters/ and tenants/),
    however it got there (--repo, the working directory, a path walked up): tests use the
    frozen estate (tests/estate.py); only LIVE_ESTATE_CHECK reads the live one. A BaseException,
    so the CLI's internal-error handler does not turn it into an exit 3 a test might expect."""
    if request.node.path == LIVE_ESTATE_CHECK:
        return
    work_tree, git_tree = WorkTree.__init__, GitTree.__init__

    def refuse(where: Path | str | None) -> None:
        if where is not None and Path(where).resolve() == ROOT:
            pytest.fail(f"read the live estate at {ROOT}: use tests/estate.py", pytrace=True)

    def open_work_tree(self: WorkTree, root: Path) -> None:
        refuse(root)
        work_tree(self, root)

    def open_git_tree(self: GitTree, repo: t.Any, rev: str, prefix: str = "") -> None:
        refuse(None if prefix.strip("/") else repo.working_tree_dir)
        git_tree(self, repo, rev, prefix)

    monkeypatch.setattr(WorkTree, "__init__", open_work_tree)
    monkeypatch.setattr(GitTree, "__init__", open_git_tree)


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    """A private copy of the frozen estate's clusters/ and tenants/ to change freely."""
    return copy_estate(tmp_path)


@pytest.fixture(scope="session")
def toolchain() -> Toolchain:
    return ensure_built(ROOT / "testenv", log=print)


@pytest.fixture(scope="session")
def sandboxes_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sandboxes")


def start_sandbox(toolchain: Toolchain, root: Path, name: str) -> Sandbox:
    """Start a sandbox or fail the test loudly: integration tests never skip for lack of one."""
    box = Sandbox(name, root=root)
    try:
        box.up(toolchain)
    except Exception as exc:
        pytest.fail(f"the sandbox {name} could not start: {exc}", pytrace=False)
    return box


@pytest.fixture(scope="session")
def sandbox(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[Sandbox]:
    """One real etcd + kube-apiserver with Kueue's CRDs, shared by the session."""
    box = start_sandbox(toolchain, sandboxes_dir, f"gpu-prod-{os.getpid()}")
    yield box
    box.down()


@pytest.fixture
def fresh_sandbox(
    toolchain: Toolchain, sandboxes_dir: Path, request: pytest.FixtureRequest
) -> t.Iterator[Sandbox]:
    """A sandbox of the test's own, for tests that change or stop the cluster."""
    # The name is short (it names the sandbox's folder and processes) yet each test's own: a
    # parametrized test's cases share their first 20 characters, so a hash of the id parts them.
    tag = hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:6]
    box = start_sandbox(
        toolchain,
        sandboxes_dir,
        f"t{os.getpid()}-{request.node.name[:20]}-{tag}".replace("[", "-").replace("]", "").lower(),
    )
    yield box
    box.down()
