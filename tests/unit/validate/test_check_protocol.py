"""Every registered check is a `protocol.Check` and stands alone: the import-linter contract
that keeps the check modules from importing each other covers each of them by a wildcard, so
the list of checks is written once (`_MODULES`), never again in pyproject.toml."""

from __future__ import annotations

import tomllib
import typing as t
from pathlib import Path
from types import ModuleType

from auditor.validate import checks
from auditor.validate.checks import protocol

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = "Each policy check stands alone"


PACKAGE = "auditor.validate.checks"


def _contract() -> dict[str, t.Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    [contract] = [
        c for c in config["tool"]["importlinter"]["contracts"] if c["name"].startswith(CONTRACT)
    ]
    assert contract["type"] == "independence"
    return t.cast(dict[str, t.Any], contract)


def test_the_independence_contract_covers_every_check_module_without_listing_them() -> None:
    contract = _contract()
    assert contract["modules"] == [f"{PACKAGE}.*"], "a second list of checks drifts from _MODULES"
    registered = {t.cast(ModuleType, m).__name__ for m in checks.CHECKS.values()}
    assert {name.rpartition(".")[0] for name in registered} == {PACKAGE}  # one level: `*`
    shared = {rule.split(" -> ")[1] for rule in contract["ignore_imports"]}
    assert shared == {f"{PACKAGE}.{m}" for m in ("_common", "_embedded", "protocol")}
    assert not shared & registered  # a check is never a shared module the others may import


def test_each_check_says_how_an_edit_reruns_it() -> None:
    reruns = {m.ID: m.RERUN for m in checks.CHECKS.values()}
    assert all(isinstance(r, protocol.Rerun) for r in reruns.values())
    assert reruns["quantities"] == protocol.PER_OBJECT
    assert reruns["tenant-rbac"].per_object_of == {"RoleBinding"}
    assert reruns["cohort-tree"] == protocol.CLUSTER
