"""An editor's session (auditor/validate/session.py) on a repository that renders
(tests/data/rendered/kustomize): an edit of a file a render reached renders that folder alone
again, for the clusters it feeds, and finds what a cold start finds; an edit of the Argo CD
objects, which say what syncs where, loads everything again."""

from __future__ import annotations

import shutil
import typing as t
from pathlib import Path

import pytest

from auditor.render import folder as render_folder
from auditor.render.source import Rendered, Source
from auditor.sandbox.build import TOOLS, ensure_tool
from auditor.validate.session import Session

ROOT = Path(__file__).resolve().parents[2]
PATCH = "queues/overlays/east/quotas.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ensure_tool(ROOT / "testenv", "kustomize", TOOLS["kustomize"], log=print)
    target = tmp_path / "platform"
    shutil.copytree(ROOT / "tests/data/rendered/kustomize", target)
    return target


def seen(session: Session) -> list[tuple[str, str | None, str | None, int | None]]:
    return sorted((f.rule.id, f.cluster, f.file, f.line) for f in session.findings)


def test_an_overlay_edit_renders_that_overlay_alone_and_finds_what_a_cold_start_finds(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[tuple[str, str]] = []
    real = render_folder.build

    def counted(tree: t.Any, source: Source) -> Rendered:
        builds.append((source.path, source.cluster))
        return real(tree, source)

    monkeypatch.setattr(render_folder, "build", counted)
    session = Session(repo)
    assert seen(session) == []
    assert len(builds) == 6  # two overlays, two teams on each of two clusters
    builds.clear()

    original = (repo / PATCH).read_text()
    negative = original.replace('value: "128"', 'value: "-8"').encode()
    session.edit(PATCH, negative)
    assert builds == [("queues/overlays/east", "east")]
    assert seen(session) == [("quantity-negative", "east", PATCH, 4)]
    (repo / PATCH).write_bytes(negative)
    assert seen(session) == seen(Session(repo))  # as a cold start

    builds.clear()
    session.edit(PATCH, original.encode())
    assert builds == [("queues/overlays/east", "east")]
    assert seen(session) == []

    builds.clear()
    base = "queues/base/clusterqueues.yaml"  # reached by both overlays
    session.edit(
        base,
        (repo / base)
        .read_text()
        .replace("nominalQuota: 256Gi", "nominalQuota: -256Gi", 1)
        .encode(),
    )
    assert sorted(builds) == [("queues/overlays/east", "east"), ("queues/overlays/west", "west")]
    # east's overlay patches that memory quota, so only west's is negative
    assert seen(session) == [("quantity-negative", "west", base, 17)]


def test_an_edit_of_the_application_sets_loads_everything_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session(repo)
    builds: list[str] = []
    real = render_folder.build

    def counted(tree: t.Any, source: Source) -> Rendered:
        builds.append(source.path)
        return real(tree, source)

    monkeypatch.setattr(render_folder, "build", counted)
    appsets = "argo/queues.yaml"
    session.edit(appsets, (repo / appsets).read_bytes() + b"# a comment\n")
    assert len(builds) == 6
    assert seen(session) == []
