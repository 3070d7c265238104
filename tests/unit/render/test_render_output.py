"""What a renderer prints is bounded: a chart or kustomization that makes more than Argo CD
syncs of a folder is stopped by the kernel at MAX_OUTPUT, and the render is a finding at its
file; its output never lands in memory whole. The renderer here is a script of the test's own
(a real chart looping without end only takes longer to say the same)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.render import folder as render_folder
from auditor.render import tools
from auditor.render.source import Source
from auditor.repo.tree import WorkTree

FLOOD = f"yes 'kind: ConfigMap' | head -c {10 * 2**20 + 4096}"  # past the documented bound


def test_a_renderer_printing_past_the_bound_is_stopped_and_its_output_not_kept(
    tmp_path: Path,
) -> None:
    ran = tools.run(["sh", "-c", f"{FLOOD}; echo still here >&2"], cwd=tmp_path)
    assert ran.overflow
    assert ran.stdout == ""
    fits = tools.run(["sh", "-c", "echo 'kind: ConfigMap'"], cwd=tmp_path)
    assert (fits.returncode, fits.stdout, fits.overflow) == (0, "kind: ConfigMap\n", False)


def test_a_render_printing_past_the_bound_is_a_finding_at_its_kustomization(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    floods = tmp_path / "bin/kustomize"
    floods.parent.mkdir()
    floods.write_text(f'#!/bin/sh\n[ "$1" = build ] || exit 0\n{FLOOD}\n')
    floods.chmod(0o755)
    at = tools.Renderer(str(floods), tools.pinned("kustomize"), tools.pinned("kustomize"))
    monkeypatch.setattr(tools, "find", lambda *_: at)
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    (repo / "team").mkdir(parents=True)
    (repo / "team/kustomization.yaml").write_text("resources: []\n")
    source = Source("team", "east", "team", json.dumps({}), app="app.yaml")
    rendered = render_folder.build(WorkTree(repo), source)
    assert rendered.resources == []
    assert [(f.rule.id, f.file, f.line) for f in rendered.findings] == [
        ("render-failed", "team/kustomization.yaml", 1)
    ]
    assert "more than 10 MiB" in rendered.findings[0].message
