"""The plan's cohort tree as a mermaid diagram in the PR comment, checked by mermaid's own parser
(the mermaid package from the npm registry, run with node, as GitHub's renderer would parse it)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
import subprocess
import typing as t
from pathlib import Path

import pytest

from auditor.sandbox.build import cache_root
from tests.conftest import ROOT, run_line
from tests.unit.conftest import Revisions

CHECKER = ROOT / "tests/data/mermaid"
CQS = "clusters/gpu-prod/clusterqueues.yaml"


@pytest.fixture(scope="session")
def mermaid_parse() -> Path:
    """The parse script, its node_modules installed once (by the lock file's hash) in the cache."""
    for tool in ("node", "npm"):
        assert shutil.which(tool), f"{tool} is needed to check diagrams with mermaid's parser"
    lock = (CHECKER / "package-lock.json").read_bytes()
    home = cache_root() / "mermaid" / hashlib.sha256(lock).hexdigest()[:16]
    home.mkdir(parents=True, exist_ok=True)
    with (home.parent / ".lock").open("w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)  # one installer at a time, the others find it done
        if not (home / "node_modules/mermaid/package.json").is_file():
            for name in ("package.json", "package-lock.json"):
                shutil.copy(CHECKER / name, home / name)
            done = subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=home,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, done.stderr
    shutil.copy(CHECKER / "parse.mjs", home / "parse.mjs")
    return home / "parse.mjs"


@pytest.fixture
def revs(repo_copy: Path) -> t.Iterator[Revisions]:
    """The repository in git, its first commit tagged `base`."""
    revisions = Revisions(repo_copy)
    revisions.commit("base")
    revisions.repo.create_tag("base")
    yield revisions
    revisions.repo.close()


def parse(script: Path, diagrams: list[str]) -> list[str | None]:
    done = subprocess.run(
        ["node", str(script)],
        input=json.dumps(diagrams),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return list(json.loads(done.stdout))


def mermaid_blocks(markdown: str) -> list[str]:
    return re.findall(r"```mermaid\n(.*?)```", markdown, re.S)


def test_the_parser_is_real_and_refuses_a_broken_diagram(mermaid_parse: Path) -> None:
    ok, broken = parse(mermaid_parse, ["flowchart TD\n  a --> b\n", 'flowchart TD\n  a["x --> \n'])
    assert ok is None and broken and "Parse error" in broken


def test_the_plan_comment_draws_each_touched_cohort_tree_before_and_after(
    revs: Revisions, mermaid_parse: Path
) -> None:
    revs.edit(CQS, 'nominalQuota: "16"', 'nominalQuota: "24"')  # team-a's a100 GPUs
    revs.edit(
        "clusters/gpu-staging/clusterqueues.yaml",
        "cohortName: ai-shared",
        "cohortName: ai-burst",
        count=2,
    )
    with (revs.root / "clusters/gpu-staging/cohorts.yaml").open("a") as cohorts:
        cohorts.write("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\n")
        cohorts.write("metadata: {name: ai-burst}\nspec: {parentName: example-org}\n")
    head = revs.commit("more gpus for team-a; staging queues move to ai-burst")
    argv = [
        "kueue-gitops",
        "--repo",
        str(revs.root),
        "plan",
        "diff",
        "--base",
        "base",
        "--head",
        head,
    ]
    result = run_line([*argv, "-o", "markdown"])
    assert result.exit_code in (0, 1), result.output
    blocks = mermaid_blocks(result.output)
    assert len(blocks) == 2  # one per cluster whose cohort trees change
    assert parse(mermaid_parse, blocks) == [None, None]

    prod, staging = blocks
    assert "ClusterQueue team-a-cq<br/>a100 nvidia.com/gpu: nominal 16 → 24" in prod
    assert "Cohort ai-shared" in prod and "ClusterQueue team-b-cq" in prod  # the whole tree
    assert "Cohort ai-burst (added)" in staging
    assert staging.count("-. before .->") == 2  # both queues left ai-shared
    assert "class " in staging and "added" in staging
