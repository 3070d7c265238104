"""`sandbox build --tool NAME` builds the tools named and nothing else: a team that wants the
renderers does not wait for a control plane and three Kueue releases (many minutes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_line


def test_building_one_tool_on_an_empty_cache_builds_that_tool_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)  # no repository here: the pins shipped with the package
    result = run_line(["kueue-gitops", "sandbox", "build", "--tool", "kustomize"])
    assert result.exit_code == 0, result.output
    built = sorted(
        p.relative_to(cache).parts for p in cache.rglob("*") if p.is_file() and p.name != ".lock"
    )
    assert len(built) == 1 and built[0][:2] == ("tools", "kustomize"), built
    assert built[0][-1] == "kustomize"
    assert "kustomize: ready" in result.stdout and "control-plane" not in result.output
