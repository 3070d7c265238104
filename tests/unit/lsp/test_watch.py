"""Which files changed (auditor/lsp/watch.py), told by inotify and, without it, by walking the
tree: each kind of change a person makes to a working tree, the same answer both ways."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from auditor.lsp import watch


@pytest.fixture(params=["inotify", "walking"])
def files(request: pytest.FixtureRequest, tmp_path: Path) -> watch.Files:
    root = tmp_path / "repo"
    (root / "tenants/a").mkdir(parents=True)
    (root / "tenants/a/ns.yaml").write_text("a: 1\n")
    (root / ".git").mkdir()
    (root / ".git/index").write_text("x")
    found = watch.Files(str(root))
    found.watching = request.param == "inotify"
    assert found.look() == {"tenants/a/ns.yaml"}
    assert (found.inotify is not None) == found.watching
    request.addfinalizer(found.close)
    return found


def test_each_change_is_told(files: watch.Files) -> None:
    root = Path(files.root)
    assert files.look() == set()
    (root / "tenants/a/ns.yaml").write_text("a: 2\n")  # same size, maybe the same tick
    assert files.look() == {"tenants/a/ns.yaml"}
    (root / "tenants/b/x").mkdir(parents=True)
    (root / "tenants/b/x/q.yaml").write_text("q: 1\n")
    assert files.look() == {"tenants/b/x/q.yaml"}
    (root / ".git/index").write_text("y")  # git's own files are not the tree's
    (root / "tenants/b/x/q.yaml").unlink()
    assert files.look() == {"tenants/b/x/q.yaml"}
    (root / "tenants/b/x/r.yaml").write_text("r: 1\n")
    assert files.look() == {"tenants/b/x/r.yaml"}
    os.rename(root / "tenants/b", root / "tenants/c")
    assert files.look() == {"tenants/b/x/r.yaml", "tenants/c/x/r.yaml"}
    shutil.rmtree(root / "tenants/c")
    assert files.look() == {"tenants/c/x/r.yaml"}
    assert set(files.files) == {"tenants/a/ns.yaml"}


def test_a_linked_folder_is_told_under_both_paths(files: watch.Files) -> None:
    root = Path(files.root)
    (root / "tenants/link").symlink_to(root / "tenants/a", target_is_directory=True)
    (root / "tenants/loop").symlink_to(root / "tenants", target_is_directory=True)
    assert files.look() >= {"tenants/link/ns.yaml"}
    (root / "tenants/a/ns.yaml").write_text("a: 3\n")
    assert {"tenants/a/ns.yaml", "tenants/link/ns.yaml"} <= files.look()
