"""The language server on a repository of kustomize overlays synced by its own ApplicationSets
(tests/data/rendered/kustomize): typing a negative quota into an overlay's patch shows the
finding on that patch's line, and taking it back clears it."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from auditor.sandbox.build import TOOLS, ensure_tool
from tests.acceptance import lsp_editor
from tests.acceptance.lsp_editor import Editor

ROOT = Path(__file__).resolve().parents[2]
PATCH = "queues/overlays/east/quotas.yaml"


def test_an_overlay_patch_shows_its_finding_as_one_types(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for tool in ("kustomize", "helm"):
        ensure_tool(ROOT / "testenv", tool, TOOLS[tool], log=print)
    repo = tmp_path / "platform"
    shutil.copytree(ROOT / "tests/data/rendered/kustomize", repo)
    monkeypatch.setattr(lsp_editor, "LQ", PATCH)  # the file the editor's settling hover asks about
    original = (repo / PATCH).read_text()

    async def session() -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
        editor = Editor(repo)
        await editor.start()
        try:
            await editor.type(PATCH, original.replace('value: "128"', 'value: "-8"'))
            planted = [
                (json.loads(json.dumps(d.data))["rule"], d.range.start.line + 1)
                for d in editor.diagnostics.get(editor.uri(PATCH), [])
            ]
            await editor.type(PATCH, original)
            cleared = [
                (json.loads(json.dumps(d.data))["rule"], d.range.start.line + 1)
                for d in editor.diagnostics.get(editor.uri(PATCH), [])
            ]
        finally:
            await editor.stop()
        return planted, cleared

    planted, cleared = asyncio.run(session())
    assert planted == [("quantity-negative", 4)]
    assert cleared == []
