"""A platform team's repository of Helm releases, checked by the installed wheel: the pinned
renderers' releases ship in the package (auditor/testenv/tools/), the team's repository is an
empty git repository holding its own chart and ApplicationSet, nothing of this checkout is on
the path, and the finding names the team's values file and line in SARIF as in text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from auditor.sandbox.build import TOOLS, ensure_tool
from tests.installed import git, run

ROOT = Path(__file__).resolve().parents[2]


def test_the_installed_wheel_renders_a_chart_and_names_the_values_file(
    base_install: Path, tmp_path: Path
) -> None:
    ensure_tool(ROOT / "testenv", "helm", TOOLS["helm"])  # in the user cache, as `sandbox build`
    repo = tmp_path / "platform"
    shutil.copytree(ROOT / "tests/data/rendered/helm", repo)
    values = repo / "environments/south/robotics.yaml"
    values.write_text(values.read_text().replace("robotics-cq", "nlp-cq"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "platform")
    cli = str(base_install)
    text = run([cli, "validate", "--cluster", "south"], repo)
    assert text.returncode == 1, text.stdout + text.stderr
    assert "environments/south/robotics.yaml:3 LocalQueue robotics/jobs" in text.stdout
    sarif = json.loads(run([cli, "validate", "--cluster", "south", "-o", "sarif"], repo).stdout)
    located = {
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in sarif["runs"][0]["results"]
    }
    assert ("lq-cluster-queue-not-authorised", "environments/south/robotics.yaml", 3) in located
