"""Tests share helpers through helper modules and conftest.py, never by importing a test module:
an imported test module runs its module fixtures and collection twice, and the next engineer
who edits a test cannot see that another module leans on it."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

TESTS = ROOT / "tests"


def _imported_modules(node: ast.Import | ast.ImportFrom, path: Path) -> list[str]:
    """The dotted names an import statement brings in (`from a import b` may import module a.b)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:  # relative: resolved against the importing file's package
        package = path.parent.relative_to(ROOT).parts
        base = ".".join([*package[: len(package) - node.level + 1], *filter(None, [base])])
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def _names_a_test_module(dotted: str) -> bool:
    return any(part.startswith("test_") for part in dotted.split("."))


def _imports_of_test_modules() -> list[str]:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            names = _imported_modules(node, path)
            tests = [n for n in names if n.startswith("tests.") and _names_a_test_module(n)]
            if tests:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {tests[0]}")
    return found


def test_no_test_module_imports_another_test_module() -> None:
    assert _imports_of_test_modules() == [], (
        "move what is shared into a helper module or the nearest conftest.py"
    )
