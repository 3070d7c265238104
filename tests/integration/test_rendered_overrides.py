"""An estate laid out by its Argo CD objects only (tests/data/overrides): one chart released
for three teams, each Application setting the same keys its own way (nlp: value files and a
`helm.parameters` entry; vision: `valuesObject`; speech: a `values` text), team folders synced
as plain directories into the team's namespace, the roles built by kustomize. `validate -o json`
as a user runs it: every planted finding is at the line a person edits to fix it.

The planted problems (each team may use only its own ClusterQueue, `<team>-cq`):
- nlp's parameter points its `jobs` queue at vision-cq (its value files say nlp-cq);
- nlp's first value file points `night` at vision-cq (its `batch` there is vision-cq too, but
  the cluster's own file, later, wins with nlp-cq);
- vision's valuesObject leaves `scratch` without a ClusterQueue: the template's default
  shared-cq (a `{{- range }}` with one `---` document per queue);
- vision's valuesObject binds its group to the built-in `edit`;
- speech's values text points `spare` at vision-cq, and makes its own group the namespace admins;
- speech's folder points its research queue at vision-cq.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from auditor.render import tools
from tests.integration.rendered import ROOT, validate, where

ESTATE = ROOT / "tests" / "data" / "overrides"
NOT_AUTHORISED = "lq-cluster-queue-not-authorised"
NOT_SELECTED = "lq-namespace-not-selected"  # vision-cq admits vision's namespace only
LOCALQUEUES = "charts/team-space/templates/localqueues.yaml"
AIMED_AT_VISION = {
    ("apps/nlp.yaml", 19),  # the parameter's value
    ("environments/nlp.yaml", 8),  # night, not batch (line 6): the later file set batch
    ("apps/speech.yaml", 19),  # in the values text
    ("teams/speech/research.yaml", 8),  # in the namespace of the folder's Application
}
PLANTED = {
    *((rule, "north", file, line) for file, line in AIMED_AT_VISION
      for rule in (NOT_AUTHORISED, NOT_SELECTED)),
    (NOT_AUTHORISED, "north", LOCALQUEUES, 10),  # the template's default, below range + ---
    ("rbac-tenant-power", "north", "apps/vision.yaml", 19),  # the role valuesObject chose
    ("rbac-tenant-power", "north", "apps/speech.yaml", 20),  # the subject the text chose
}  # fmt: skip

RENDERERS = pytest.mark.usefixtures("renderers")  # the pinned renderers, built


def _estate(tmp_path: Path) -> Path:
    repo = tmp_path / "platform"
    shutil.copytree(ESTATE, repo)
    return repo


@RENDERERS
def test_every_planted_finding_is_at_the_line_that_set_it(tmp_path: Path) -> None:
    code, findings = validate(_estate(tmp_path))
    assert code == 1
    assert where(findings) == PLANTED, json.dumps(findings, indent=1)
    jobs = next(f for f in findings if f["file"] == "apps/nlp.yaml")
    assert (jobs["namespace"], jobs["name"], jobs["path"]) == ("nlp", "jobs", "spec.clusterQueue")


@RENDERERS
def test_a_fixed_override_clears_its_finding_and_no_other(tmp_path: Path) -> None:
    repo = _estate(tmp_path)
    app = repo / "apps/nlp.yaml"
    app.write_text(app.read_text().replace("value: vision-cq", "value: nlp-cq"))
    code, findings = validate(repo)
    assert code == 1
    assert where(findings) == PLANTED - {
        (NOT_AUTHORISED, "north", "apps/nlp.yaml", 19),
        (NOT_SELECTED, "north", "apps/nlp.yaml", 19),
    }


def test_without_renderers_each_folder_is_one_finding_and_nothing_it_would_define_is_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git alone on PATH: no kustomize, no helm, and no kubectl (whose kustomize would render)
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    monkeypatch.setenv("PATH", str(bare))
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "empty-cache"))
    tools.find.cache_clear()
    try:
        code, findings = validate(_estate(tmp_path))
    finally:
        tools.find.cache_clear()
    assert code == 1
    assert where(findings) == {
        # three Applications render the chart: one finding for its folder
        ("renderer-unavailable", "north", "charts/team-space/Chart.yaml", 1),
        # the roles the team folders bind are defined here: no binding is judged unknown
        ("renderer-unavailable", "north", "platform/rbac/kustomization.yaml", 1),
        (NOT_AUTHORISED, "north", "teams/speech/research.yaml", 8),
    }, json.dumps(findings, indent=1)
