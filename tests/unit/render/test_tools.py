"""Which kustomize or helm renders: the release the cluster's Argo CD runs, else another on PATH
(noted by the caller), never one of another release when exact renderers are asked for."""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest

from auditor.render import tools


def test_the_releases_follow_the_argo_cd_release_named_else_the_pinned_one() -> None:
    assert tools.wanted("kustomize", None) == ("v5.8.1", "v3.5.7")
    assert tools.wanted("helm", "v3.4.14") == ("v3.19.4", "v3.4.14")
    # a patch release not listed: the nearest listed one of its minor below it
    assert tools.wanted("kustomize", "v3.3.7") == ("v5.8.0", "v3.3.7, as v3.3.0")
    assert tools.wanted("helm", "v2.14.0") == ("v4.2.1", "v3.5.7")  # a minor not listed


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> t.Iterator[Path]:
    """A kustomize that says it is v5.7.1, alone on PATH, and an empty cache."""
    fake = tmp_path / "bin" / "kustomize"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho v5.7.1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    tools.find.cache_clear()
    yield fake
    tools.find.cache_clear()


def test_a_renderer_of_another_release_on_path_is_taken_and_says_so(on_path: Path) -> None:
    found = tools.find("kustomize")
    assert (found.binary, found.version, found.wanted, found.differs) == (
        str(on_path), "v5.7.1", "v5.8.1", True
    )  # fmt: skip
    assert tools.find("kustomize", False, "v3.3.0").wanted == "v5.8.0"


def test_exact_renderers_refuse_another_release(on_path: Path) -> None:
    with pytest.raises(tools.Unavailable, match=r"is v5\.7\.1\), and exact renderers are asked"):
        tools.find("kustomize", True)
