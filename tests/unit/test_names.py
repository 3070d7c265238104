"""Names say what they hold: an import alias may only qualify a module's name, never rename it.

`from auditor.kueue import workloads as kueue_workloads` says which `workloads` it is; `as wl`
meant three different modules once. Allowed besides: the standard library's customary short
names, and a private binding (`as _BaseLoader`) that picks one of two implementations.
"""

from __future__ import annotations

import ast
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CUSTOMARY = {("typing", "t"), ("datetime", "dt"), ("ElementTree", "ET"), ("strategies", "st")}
SOURCES = sorted(p for top in ("auditor", "tests", "bench") for p in (ROOT / top).rglob("*.py"))


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def renaming_aliases(source: str) -> list[str]:
    """Each `X as Y` of `source` where Y neither is X nor qualifies it as `<package>_X`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            pairs = [(f"{node.module}.{a.name}", a.name, a.asname) for a in node.names]
        elif isinstance(node, ast.Import):
            pairs = [(a.name, a.name.rsplit(".", 1)[-1], a.asname) for a in node.names]
        else:
            continue
        for full, name, alias in pairs:
            if alias is None or alias == name or (name, alias) in CUSTOMARY:
                continue
            package = full.rsplit(".", 2)[-2] if full.count(".") else ""
            if alias == f"{package}_{name}" and _is_module(full):
                continue
            if alias.startswith("_") and not full.startswith("auditor."):
                continue
            found.append(f"line {node.lineno}: {name} as {alias}")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_alias_renames(path: pathlib.Path) -> None:
    assert renaming_aliases(path.read_text()) == []


def test_the_check_catches_a_rename_and_lets_a_qualifier_through() -> None:
    assert renaming_aliases("from auditor.kueue import workloads as wl\n") == [
        "line 1: workloads as wl"
    ]
    assert renaming_aliases("from auditor.validate.engine import validate as run\n") == [
        "line 1: validate as run"
    ]
    assert renaming_aliases("from auditor.kueue import workloads as kueue_workloads\n") == []
    # A qualifier only for a module: a function keeps its own name.
    assert renaming_aliases("from auditor.kueue.workloads import state as workloads_state\n") == [
        "line 1: state as workloads_state"
    ]
