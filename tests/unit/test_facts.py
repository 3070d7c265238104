"""Facts written once: each in its home, named from there elsewhere.

A second spelling of Kueue's namespace, an API group or a quota field is how one of them drifts
from the other; prose (docstrings, messages) may name them, code takes the constant. Only string
literals that are a fact whole, or its group/version, count, and in an f-string a part that is
the fact beside a placeholder (`f"{kind}.kueue.x-k8s.io"`): a message that mentions one is prose.
Beside the spellings: no object rebuilt field by field from another (a field added later is
dropped), a trace's JSON read in one place, the list of reporting commands and the field-path
alias written once.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from auditor.k8s import objects
from auditor.kueue import NAMESPACE, quota
from auditor.report import contract

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "auditor").rglob("*.py"))

# fact -> its home; the value is read from the home, so the test follows a rename
FACTS = {
    NAMESPACE: "auditor/kueue/__init__.py",
    objects.RBAC_GROUP: "auditor/k8s/objects.py",
    objects.SCHEDULING_GROUP: "auditor/k8s/objects.py",
    objects.KUEUE_GROUP: "auditor/k8s/objects.py",
    **{field: "auditor/kueue/quota.py" for field in quota.QUOTA_FIELDS},
}


@functools.cache
def tree_of(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def literals(path: Path) -> list[tuple[int, str]]:
    """Every string literal of a module that is code, not a docstring; an f-string's parts
    between placeholders with a mark (FSTRING) before them."""
    tree = tree_of(path)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    parts = {
        id(value)
        for node in ast.walk(tree)
        if isinstance(node, ast.JoinedStr)
        for value in node.values
        if isinstance(value, ast.Constant)
    }
    return [
        (node.lineno, FSTRING * (id(node) in parts) + node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


FSTRING = "\0f:"  # no source literal starts so


def spelled(fact: str, value: str) -> bool:
    """Whether a literal is `fact` whole (or its group/version); an f-string's part, also with
    a separator where a placeholder joins it (`.`, `/`, `:`, `=`)."""
    if value.startswith(FSTRING):
        around = r"[./:=]?"
        pattern = around + re.escape(fact) + r"(/v\w+)?" + around
        return re.fullmatch(pattern, value[len(FSTRING) :]) is not None
    return re.fullmatch(re.escape(fact) + r"(/v\w+)?", value) is not None


@pytest.mark.parametrize("fact", FACTS)
def test_a_fact_is_spelled_only_in_its_home(fact: str) -> None:
    elsewhere = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in SOURCES
        if path.relative_to(ROOT).as_posix() != FACTS[fact]
        for line, value in literals(path)
        if spelled(fact, value)
    ]
    assert elsewhere == [], f"{fact!r} is spelled again; import it from {FACTS[fact]}"


def test_the_check_finds_a_second_spelling(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Names rbac.authorization.k8s.io in prose."""\nA = "rbac.authorization.k8s.io/v1"\n'
    )
    assert literals(module) == [(2, "rbac.authorization.k8s.io/v1")]
    assert [spelled(objects.RBAC_GROUP, v) for _, v in literals(module)] == [True]


def test_the_check_finds_a_fact_in_an_f_string_and_leaves_prose(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        'a = f"{kind}.kueue.x-k8s.io"\n'
        'b = f"kueue.x-k8s.io/{version}"\n'
        'c = f"{q} borrowingLimit {limit} is more than its nominalQuota {n}"\n'
    )
    found = [(line, fact) for fact in FACTS for line, v in literals(module) if spelled(fact, v)]
    assert sorted(found) == [(1, objects.KUEUE_GROUP), (2, objects.KUEUE_GROUP)]


def rebuilt(path: Path, least: int = 4) -> list[str]:
    """Calls that copy `least` or more fields of one object by name (`X(a=o.a, b=o.b, ...)`):
    a field added to the object later is silently dropped. `dataclasses.replace`, or a copy
    method in the object's own class (`self` may name its fields), says it once."""
    found = []
    for node in ast.walk(tree_of(path)):
        if not isinstance(node, ast.Call):
            continue
        copied: dict[str, int] = {}
        for kw in node.keywords:
            value = kw.value
            if (
                isinstance(value, ast.Attribute)
                and value.attr == kw.arg
                and isinstance(value.value, ast.Name)
                and value.value.id != "self"
            ):
                copied[value.value.id] = copied.get(value.value.id, 0) + 1
        found += [f"{path.name}:{node.lineno} {ast.unparse(node.func)} of {o}" for o, n in
                  copied.items() if n >= least]  # fmt: skip
    return found


def test_no_object_is_rebuilt_field_by_field() -> None:
    assert [hit for path in SOURCES for hit in rebuilt(path)] == []


def test_the_rebuild_check_finds_a_copy_field_by_field(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "x = Finding(r, m, kind=f.kind, name=f.name, file=f.file, line=f.line)\n"
        "y = replace(f, rule=r)\n"
    )
    assert rebuilt(module) == ["m.py:1 Finding of f"]


TRACE_HOME = "auditor/replay/trace.py"
TRACE_KEYS = {"localQueue", "podCount", "submittedAt", "runSeconds", "stillRunning"}


def json_reads(path: Path, keys: set[str]) -> list[int]:
    """The lines that read one of `keys` out of a mapping (`w["podCount"]`, `w.get(...)`)."""
    lines = []
    for node in ast.walk(tree_of(path)):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            key = node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            key = node.args[0]
        else:
            continue
        if isinstance(key, ast.Constant) and key.value in keys:
            lines.append(node.lineno)
    return lines


def test_a_traced_workloads_json_is_read_in_one_place() -> None:
    replay = sorted((ROOT / "auditor/replay").glob("*.py"))
    elsewhere = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in replay
        if path.relative_to(ROOT).as_posix() != TRACE_HOME
        for line in json_reads(path, TRACE_KEYS)
    ]
    assert elsewhere == [], f"read a traced workload with TracedWorkload.from_json ({TRACE_HOME})"


def test_the_field_path_alias_is_declared_once() -> None:
    alias = "tuple[str | int, ...]"
    declared = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in SOURCES
        for node in tree_of(path).body
        if isinstance(node, ast.Assign) and ast.unparse(node.value) == alias
    ]
    assert declared == ["auditor/k8s/objects.py:" + str(_line_of_field_path())]


def _line_of_field_path() -> int:
    source = (ROOT / "auditor/k8s/objects.py").read_text().splitlines()
    return next(i for i, line in enumerate(source, 1) if line.startswith("FieldPath = "))


# The commands that report are the JSON report's `command` enum (auditor/report/report.schema.json):
# a line naming five or more of them elsewhere is a second list of them.
REPORTING = contract.schema()["properties"]["command"]["enum"]
LISTED_FILES = [
    *SOURCES,
    *(ROOT / "auditor").rglob("*.json"),
    *(ROOT / "docs").rglob("*.md"),
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    *(ROOT / "tests").rglob("*.py"),
]


NAMED = re.compile(
    r"(?<![\w./-])(" + "|".join(re.escape(c) for c in sorted(REPORTING, key=len, reverse=True))
    + r")(?![\w/-])"
)  # fmt: skip


def lists_reporting(line: str) -> bool:
    return len(set(NAMED.findall(line))) >= 5


def test_the_reporting_commands_are_listed_once() -> None:
    home = ROOT / "auditor/report/report.schema.json"
    schema = home.read_text().splitlines()
    (start,) = [i for i, line in enumerate(schema) if '"enum": [' in line and "command" in
                schema[i - 2]]  # fmt: skip
    end = next(i for i in range(start, len(schema)) if schema[i].strip().startswith("]"))
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in LISTED_FILES
        if "data" not in path.relative_to(ROOT).parts and path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if lists_reporting(line) and not (path == home and start < number <= end + 1)
    ]
    assert found == [], "name the schema's `command` enum instead of listing the commands"


def test_the_list_check_finds_a_second_list() -> None:
    assert lists_reporting("every command that reports: validate, drift, plan, verify, status")
    assert not lists_reporting("validate, drift and plan report; status shows")
    assert not lists_reporting(
        "`auditor.validate`, `auditor.drift`, `auditor.plan`, `auditor.verify`, `auditor.status`"
    )
