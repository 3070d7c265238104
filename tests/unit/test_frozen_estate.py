"""No test but the one self-check reads the repository's live clusters/ or tenants/.

They are the product's content: a tenant's pull request to its LocalQueue must not break the
tool's tests. Tests build their estate from tests/data/estate/ (tests/estate.py) or inline; the
live folders are read by tests/acceptance/test_live_estate.py alone. Two guards keep it so: this
scan of tests/ for the ways a test names, opens or copies them from the checkout's root (ROOT),
which sees subprocesses too; and tests/conftest.py's `frozen_estate_only`, which fails a test
whose command opens the checkout as a repository however it found it (--repo, the working
directory, a folder walked up from)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from auditor.repo.layout import Repository
from tests.conftest import ROOT, run_line
from tests.estate import ESTATE

SELF_CHECK = ROOT / "tests/acceptance/test_live_estate.py"
LIVE = r"""["'](?:\./)?(?:clusters|tenants)\b"""
REACHES = re.compile(
    "|".join(
        (
            rf"ROOT\s*/\s*{LIVE}",  # ROOT / "clusters/gpu-prod/..."
            rf"ROOT\.r?glob\(\s*{LIVE}",  # ROOT.glob("clusters/*/profile.yaml")
            r"Repository\.open\(\s*ROOT\s*\)",  # the live repository, read
            r"""["']--repo["'],\s*str\(\s*ROOT\s*\)""",  # a command run on it
            r"--repo[= ]\{ROOT\}",  # f"kueue-gitops --repo {ROOT} ..."
            r"KUEUE_GITOPS_REPO\W+str\(\s*ROOT\s*\)",
            r"chdir\(\s*ROOT\s*\)",  # a command run inside it
            rf"\([^()\n]*{LIVE}[^()\n]*\):\s*\n[^\n]*\bROOT\s*/\s*\w",  # for f in (...): ROOT / f
            rf"""["']archive["'],\s*["']HEAD["'][^\]]*{LIVE}""",  # git archive HEAD clusters ...
        )
    )
)


def reaches(text: str) -> list[str]:
    """The lines of `text` (a test module) that reach the live clusters/ or tenants/."""
    return [
        text.splitlines()[text.count("\n", 0, m.start())].strip() for m in REACHES.finditer(text)
    ]


def test_no_test_but_the_self_check_reads_the_live_clusters_or_tenants() -> None:
    found = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path not in (SELF_CHECK, Path(__file__).resolve())
        for lines in [reaches(path.read_text())]
        if lines
    }
    assert found == {}, "use the frozen estate (tests/estate.py), not the live folders"


def test_the_self_check_is_found_by_the_scan() -> None:
    assert reaches(SELF_CHECK.read_text())  # the scan sees the one test allowed to read them


@pytest.mark.parametrize(
    "line",
    [
        'shutil.copytree(ROOT / "clusters", tmp_path / "clusters")',
        'text = (ROOT / "tenants/team-a/gpu-prod/localqueues.yaml").read_text()',
        'profiles = ROOT.glob("clusters/*/profile.yaml")',
        "repo = Repository.open(ROOT)",
        'run_line(["kueue-gitops", "--repo", str(ROOT), "validate"])',
        'complete(f"kueue-gitops --repo {ROOT} drift --cluster gpu-")',
        'env={"KUEUE_GITOPS_REPO": str(ROOT)}',
        "monkeypatch.chdir(ROOT)",
        'for folder in ("clusters", "tenants"):\n    shutil.copytree(ROOT / folder, dest / folder)',
        'for folder in ("deploy", "tenants"):\n    for here, _, files in os.walk(ROOT / folder):',
        '["git", "archive", "HEAD", "clusters", "schemas"]',
    ],
)
def test_each_way_of_reaching_them_is_caught(line: str) -> None:
    assert reaches(line)


@pytest.mark.parametrize(
    "line",
    [
        'shutil.copytree(ESTATE / "clusters", tmp_path / "clusters")',
        'testenv = ROOT / "testenv"',
        'corpus = ROOT / "tests/data/cel"',
        "repo = Repository.open(ESTATE)",
        'for name in ("auditor", "testenv"):\n    shutil.copytree(ROOT / name, out / name)',
    ],
)
def test_the_tools_own_files_and_the_frozen_estate_are_not(line: str) -> None:
    assert not reaches(line)


def test_a_command_that_opens_the_checkout_fails_the_test(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(pytest.fail.Exception, match="read the live estate"):
        Repository.open(ROOT / "auditor")  # found by walking up
    monkeypatch.chdir(ROOT)
    with pytest.raises(pytest.fail.Exception, match="read the live estate"):
        run_line(["kueue-gitops", "validate", "--cluster", "gpu-prod"])  # the working directory
    assert set(Repository.open(ESTATE).clusters) == {"gpu-legacy", "gpu-prod", "gpu-staging"}
