"""The cache home (auditor/cache.py): keys, atomic writes, size limits, and `cache clean`."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor import cache
from auditor.cli.main import cli


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(cache.ROOT_ENV, str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "_trimmed", set())
    return tmp_path / "cache"


def test_a_key_is_the_content_of_its_inputs_and_the_tool_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one = cache.key("helm", 3, files=[("a.yaml", b"x"), ("b.yaml", b"y")])
    assert one == cache.key("helm", "3", files=[("b.yaml", b"y"), ("a.yaml", b"x")])
    assert one != cache.key("helm", 3, files=[("a.yaml", b"x"), ("b.yaml", b"z")])
    assert one != cache.key("helm", 3, files=[("a.yaml", b"x"), ("c.yaml", b"y")])
    assert one != cache.key("helm", 4, files=[("a.yaml", b"x"), ("b.yaml", b"y")])
    monkeypatch.setattr(cache, "version", lambda: "another release")
    assert one != cache.key("helm", 3, files=[("a.yaml", b"x"), ("b.yaml", b"y")])


def test_every_client_keeps_its_entries_under_the_one_root(root: Path) -> None:
    from auditor.render import cache as render_cache
    from auditor.repo import cache as repo_cache
    from auditor.sandbox import build

    render_cache.put("ab12", "kind: A\n")
    assert render_cache.get("ab12") == "kind: A\n"
    assert [p.relative_to(root).parts[0] for p in root.rglob("*.yaml")] == ["render"]
    assert repo_cache.validate_cache_root() == root / "validate"
    assert build.cache_root() == root  # the builds keep their paths: testenv/, tools/, ...


def test_a_write_is_whole_or_absent(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = cache.area("render") / "ab" / "x.yaml"
    assert cache.write(target, b"first")
    real = os.replace

    def interrupted(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", interrupted)
    assert not cache.write(target, b"second")
    monkeypatch.setattr(os, "replace", real)
    assert cache.read(target) == b"first"
    assert [p.name for p in target.parent.iterdir()] == ["x.yaml"]  # no temporary file left


def test_a_read_only_cache_is_no_error(root: Path) -> None:
    root.mkdir()
    (root / "render").write_text("a file where the area's folder should be")
    assert not cache.write(cache.area("render") / "ab" / "x.yaml", b"data")
    assert cache.read(cache.area("render") / "ab" / "x.yaml") is None


def _aged(path: Path, age: int, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    os.utime(path, (1_000_000 + age, 1_000_000 + age))


def test_an_area_past_its_limit_loses_its_least_recently_written_files(root: Path) -> None:
    for age in range(5):
        _aged(cache.area("render") / "ab" / f"{age}.yaml", age, 100)
    gone = cache.trim("render", limit=250)
    assert sorted(e.path.name for e in gone) == ["0.yaml", "1.yaml", "2.yaml"]
    assert sorted(p.name for p in (cache.area("render") / "ab").iterdir()) == ["3.yaml", "4.yaml"]


def test_a_write_holds_its_area_to_the_declared_limit(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(cache.AREAS, "render", cache.Area("render", "test", limit=250))
    for age in range(3):
        _aged(cache.area("render") / "ab" / f"{age}.yaml", age, 100)
    cache.write(cache.area("render") / "ab" / "new.yaml", b"y" * 100)
    assert sorted(p.name for p in (cache.area("render") / "ab").iterdir()) == ["2.yaml", "new.yaml"]


def test_an_area_is_measured_at_most_once_an_hour_across_processes(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(cache.AREAS, "render", cache.Area("render", "test", limit=150))
    folder = cache.area("render") / "ab"
    cache.write(folder / "first.yaml", b"y" * 100)  # measured: the area is under its limit
    for age in range(3):
        _aged(folder / f"{age}.yaml", age, 100)
    monkeypatch.setattr(cache, "_trimmed", set())  # another process, within the hour
    cache.write(folder / "second.yaml", b"y" * 10)
    assert len(list(folder.iterdir())) == 5  # not measured again: nothing removed
    past = time.time() - cache.TRIM_EVERY - 1
    os.utime(root / cache.STAMP.format("render", "render"), (past, past))
    monkeypatch.setattr(cache, "_trimmed", set())  # a process an hour later
    cache.write(folder / "third.yaml", b"y" * 10)
    assert sorted(p.name for p in folder.iterdir()) == ["first.yaml", "second.yaml", "third.yaml"]


def _filled(root: Path) -> None:
    for area in ("render", "validate", "validators", "testenv", "tools", "kueuesim", "kueue"):
        _aged(root / area / "entry", 0, 10)
    _aged(root / "sandboxes" / "east" / "state.json", 0, 10)  # `sandbox down`'s to remove
    _aged(root / "someone-else" / "keep", 0, 10)


def _left(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


def test_clean_removes_the_caches_and_keeps_the_builds(root: Path) -> None:
    _filled(root)
    freed = cache.clean()
    assert sorted(f.area.name for f in freed) == ["render", "validate", "validators"]
    assert _left(root) == ["kueue", "kueuesim", "sandboxes", "someone-else", "testenv", "tools"]


def test_clean_removes_the_builds_only_when_asked(root: Path) -> None:
    _filled(root)
    cache.clean(builds=True)
    assert _left(root) == ["sandboxes", "someone-else"]  # only the cache's own, never a sandbox


def test_clean_never_follows_a_link_out_of_the_root(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    _aged(elsewhere / "precious", 0, 10)
    root.mkdir()
    (root / "render").symlink_to(elsewhere, target_is_directory=True)
    _aged(root / "validate" / "link-inside", 0, 1)
    (root / "validate" / "out").symlink_to(elsewhere, target_is_directory=True)
    cache.clean(builds=True)
    assert (elsewhere / "precious").exists()


def test_cache_clean_lists_what_it_frees_and_a_dry_run_removes_nothing(root: Path) -> None:
    _filled(root)
    dry = CliRunner().invoke(cli, ["cache", "clean", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert _left(root) == [
        "kueue", "kueuesim", "render", "sandboxes", "someone-else", "testenv", "tools", "validate",
        "validators",
    ]  # fmt: skip
    listed = [line.split()[2] for line in dry.output.splitlines() if "MiB  " in line]
    assert listed == [str(root / a) for a in ("validate", "render", "validators")]
    assert "would free" in dry.output and "--builds removes them" in dry.output
    done = CliRunner().invoke(cli, ["cache", "clean", "--builds"])
    assert done.exit_code == 0, done.output
    assert _left(root) == ["sandboxes", "someone-else"]
    assert done.output.count("MiB  ") == 7
