"""Which testenv/ the sandbox builds from: the repository's own, else the package's."""

from __future__ import annotations

from pathlib import Path

from auditor.sandbox import pins
from tests.conftest import ROOT


def test_this_checkout_builds_from_its_own_testenv() -> None:
    assert pins.testenv(ROOT / "testenv") == ROOT / "testenv"


def test_a_repository_without_testenv_builds_from_the_shipped_pins(tmp_path: Path) -> None:
    (tmp_path / "clusters").mkdir()
    shipped = pins.shipped()
    assert pins.testenv(tmp_path) == shipped
    assert (shipped / "go.mod").read_bytes() == (ROOT / "testenv/go.mod").read_bytes()


def test_a_repository_with_its_own_testenv_builds_from_it(tmp_path: Path) -> None:
    (tmp_path / "clusters").mkdir()
    (tmp_path / "testenv").mkdir()
    (tmp_path / "testenv/go.mod").write_text("module example.org/pins\n")
    assert pins.testenv(tmp_path / "clusters") == tmp_path / "testenv"


def test_outside_any_repository_the_shipped_pins_are_used(tmp_path: Path) -> None:
    assert pins.testenv(tmp_path) == pins.shipped()
