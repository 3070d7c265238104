"""Kubernetes and Kueue facts written once: each in its home module, named from there elsewhere.

A second spelling of Kueue's namespace or of an API group is how one of them drifts from the
other; prose (docstrings, messages) may name them, code takes the constant. Only string literals
that are a fact whole, or its group/version, count: a message that mentions one is prose.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from auditor.k8s import objects
from auditor.kueue import NAMESPACE

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "auditor").rglob("*.py"))

# fact -> its home; the value is read from the home, so the test follows a rename
FACTS = {
    NAMESPACE: "auditor/kueue/__init__.py",
    objects.RBAC_GROUP: "auditor/k8s/objects.py",
    objects.SCHEDULING_GROUP: "auditor/k8s/objects.py",
    objects.KUEUE_GROUP: "auditor/k8s/objects.py",
}


@functools.cache
def literals(path: Path) -> list[tuple[int, str]]:
    """Every string literal of a module that is code, not a docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


@pytest.mark.parametrize("fact", FACTS)
def test_a_fact_is_spelled_only_in_its_home(fact: str) -> None:
    whole = re.compile(re.escape(fact) + r"(/v\w+)?")  # the fact, or its group/version
    elsewhere = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in SOURCES
        if path.relative_to(ROOT).as_posix() != FACTS[fact]
        for line, value in literals(path)
        if whole.fullmatch(value)
    ]
    assert elsewhere == [], f"{fact!r} is spelled again; import it from {FACTS[fact]}"


def test_the_check_finds_a_second_spelling(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Names rbac.authorization.k8s.io in prose."""\nA = "rbac.authorization.k8s.io/v1"\n'
    )
    assert literals(module) == [(2, "rbac.authorization.k8s.io/v1")]
