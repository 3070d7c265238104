"""The development environment is pinned once: requirements-dev.lock holds a version of every
package pyproject.toml asks for, within its range, and pre-commit lints with the venv's own
tools (those pins), not copies of its own at other versions."""

from __future__ import annotations

import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT

LINTERS = ("ruff", "mypy", "lint-imports")


def locked() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements-dev.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[str(canonicalize_name(name))] = version
    return pins


def test_the_lock_pins_every_requirement_within_its_range() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    pins = locked()
    for text in wanted:
        req = Requirement(text)
        name = str(canonicalize_name(req.name))
        if name in ("kueue-gitops", "kueue-gitops-sim"):
            continue  # the project itself, installed editable, and its simulator, built from it
        assert name in pins, f"{req.name} is not in requirements-dev.lock (`make lock`)"
        assert req.specifier.contains(pins[name], prereleases=True), (text, pins[name])


def test_pre_commit_lints_with_the_venvs_pinned_tools() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    remote = {r["repo"] for r in config["repos"] if r["repo"] != "local"}
    assert not any("ruff" in r or "mypy" in r for r in remote), remote
    entries = [h["entry"] for r in config["repos"] if r["repo"] == "local" for h in r["hooks"]]
    for tool in LINTERS:
        assert any(e.startswith(f".venv/bin/{tool}") for e in entries), tool
