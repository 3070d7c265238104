"""Every registered check is a `protocol.Check` and stands alone: the import-linter contract
that keeps the check modules from importing each other names each of them, and no other."""

from __future__ import annotations

import tomllib
import typing as t
from pathlib import Path
from types import ModuleType

from auditor.validate import checks
from auditor.validate.checks import protocol

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = "Each policy check stands alone"


def _independent() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    [contract] = [
        c for c in config["tool"]["importlinter"]["contracts"] if c["name"].startswith(CONTRACT)
    ]
    assert contract["type"] == "independence"
    return set(contract["modules"])


def test_the_independence_contract_names_every_check_module() -> None:
    registered = {t.cast(ModuleType, m).__name__ for m in checks.CHECKS.values()}
    assert _independent() == registered


def test_each_check_says_how_an_edit_reruns_it() -> None:
    reruns = {m.ID: m.RERUN for m in checks.CHECKS.values()}
    assert all(isinstance(r, protocol.Rerun) for r in reruns.values())
    assert reruns["quantities"] == protocol.PER_OBJECT
    assert reruns["tenant-rbac"].per_object_of == {"RoleBinding"}
    assert reruns["cohort-tree"] == protocol.CLUSTER
