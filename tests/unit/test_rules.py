"""The rule catalogue: complete, consistent with the code that reports findings, its examples
true, and docs/rules.md generated from it."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest
import yaml

from auditor import rules
from auditor.model import Finding, Severity
from auditor.repo import manifests
from auditor.repo.layout import Repository
from auditor.rules import render
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.validator import ClusterValidator
from auditor.validate import checks
from tests.conftest import ROOT

SOURCE = ROOT / "auditor"
ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


@pytest.mark.parametrize("rule", rules.CATALOGUE.values(), ids=rules.CATALOGUE.keys())
def test_each_rule_is_documented(rule: rules.Rule) -> None:
    assert ID.fullmatch(rule.id)
    assert rule.stage in rules.STAGES and isinstance(rule.severity, Severity)
    assert rule.summary.endswith(".") and "\n" not in rule.summary and len(rule.summary) < 120
    assert len(rule.help) > len(rule.summary) and rule.help.endswith(".")
    assert rule.passes.text.strip() and rule.fails.text.strip()
    assert rule.passes != rule.fails
    assert rule.anchor == f"docs/rules.md#{rule.id}"


def test_an_unknown_rule_is_refused_with_a_suggestion() -> None:
    with pytest.raises(rules.UnknownRule, match="did you mean flavor-missing"):
        rules.get("flavour-missing")
    with pytest.raises(rules.UnknownRule) as caught:
        rules.get("no-such-thing-at-all")
    assert caught.value.suggestions == []


def test_a_finding_takes_its_severity_from_the_catalogue_and_refuses_anything_else() -> None:
    assert Finding("borrowing-over-lendable", "m", "quota").severity is Severity.WARNING
    assert Finding("capacity-exceeded", "m", "quota").severity is Severity.ERROR
    with pytest.raises(rules.UnknownRule):
        Finding("quota-too-high", "m", "quota")
    with pytest.raises(ValueError, match="category 'quota'"):
        Finding("capacity-exceeded", "m", "rbac")
    with pytest.raises(ValueError, match="severity 'error'"):
        Finding("capacity-exceeded", "m", "quota", severity=Severity.WARNING)


# --- The code reports exactly the catalogued rules --------------------------------------------


def _rule_params(tree: ast.Module) -> dict[str, int]:
    """Functions and classes of a module taking a `rule` argument, with its position."""
    found = {"Finding": 0, "about": 1}  # Finding(rule, ...), Finding.about(resource, rule, ...)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            init = node
            if isinstance(node, ast.ClassDef):
                inits = [n for n in node.body if isinstance(n, ast.FunctionDef)]
                init = next((n for n in inits if n.name == "__init__"), node)
            if isinstance(init, ast.FunctionDef):
                names = [a.arg for a in init.args.args if a.arg not in ("self", "cls")]
                if "rule" in names:
                    found[node.name] = names.index("rule")
    return found


def _constants(tree: ast.Module) -> dict[str, str]:
    """A module's top-level `NAME = "text"` constants."""
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _values(node: ast.expr, constants: dict[str, str]) -> list[str]:
    """The rule IDs an argument can be: literals and module constants, either branch of
    `a if c else b`, and an f-string's constant head followed by `*` (a family: drift-*)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name) and node.id in constants:
        return [constants[node.id]]
    if isinstance(node, ast.IfExp):
        return _values(node.body, constants) + _values(node.orelse, constants)
    if isinstance(node, ast.JoinedStr) and isinstance(node.values[0], ast.Constant):
        return [f"{node.values[0].value!s}*"]
    return []


@functools.cache
def emitted_literals() -> dict[str, set[str]]:
    """Each rule ID passed as a literal (or a module constant) to Finding, Finding.about or a
    helper taking `rule`, or assigned to a variable `rule`, with the files that do it."""
    out: dict[str, set[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        if path.is_relative_to(SOURCE / "rules"):
            continue
        tree = ast.parse(path.read_text(), str(path))
        takes, constants = _rule_params(tree), _constants(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "rule" for target in node.targets
            ):
                for value in _values(node.value, constants):
                    out.setdefault(value, set()).add(str(path.relative_to(ROOT)))
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            func = call.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            args = [k.value for k in call.keywords if k.arg == "rule"]
            if name in takes and len(call.args) > takes[name]:
                args.append(call.args[takes[name]])
            for arg in args:
                for value in _values(arg, constants):
                    out.setdefault(value, set()).add(str(path.relative_to(ROOT)))
    return out


def drift_categories() -> set[str]:
    """What drift's classify.category can return: its return literals and OBJECT_CATEGORY."""
    from auditor.drift import classify

    tree = ast.parse((SOURCE / "drift/classify.py").read_text())
    [function] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "category"]
    returned = {
        node.value.value
        for node in ast.walk(function)
        if isinstance(node, ast.Return)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }
    return returned | set(classify.OBJECT_CATEGORY.values())


def verify_checks() -> dict[str, str]:
    """Each verify check's name and category, from the `Check(name, category, ...)` calls."""
    out: dict[str, str] = {}
    for path in (SOURCE / "verify").glob("*.py"):
        for call in ast.walk(ast.parse(path.read_text())):
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "Check":
                name, category = (a.value for a in call.args[:2] if isinstance(a, ast.Constant))
                out[str(name)] = str(category)
    return out


@functools.cache
def families() -> dict[str, set[str]]:
    """The rule IDs behind each f-string family found in the source."""
    return {
        "drift-*": {f"drift-{c}" for c in drift_categories()},
        "verify-*": {f"verify-{name}" for name in verify_checks()},
    }


def emitted() -> set[str]:
    """Every rule the code can report: literals, the f-string families, the checks' RULES."""
    found: set[str] = set()
    for value in emitted_literals():
        found |= families().get(value, {value})
    return found | {r for module in checks.CHECKS.values() for r in module.RULES}


def test_the_source_scan_sees_the_ways_findings_are_made() -> None:
    literals = emitted_literals()
    for rule_id in ("yaml-syntax", "stray-manifest", "version-deprecated", "schema-drift"):
        assert rule_id in literals  # through _Problem/_finding helpers, Finding(rule=...), about
    assert {"drift-version", "drift-admission-label"} <= set(literals)  # rule = "..."
    assert {"plan-removes-queue-in-use", "plan-admission-in-use"} <= set(literals)  # if/else
    assert {"drift-*", "verify-*"} <= set(literals)
    assert {"drift-quota", "drift-label", "drift-stop-policy"} <= families()["drift-*"]
    assert {"verify-cleanup", "verify-nominal-quota"} <= families()["verify-*"]


def test_every_rule_the_code_reports_is_in_the_catalogue() -> None:
    where = emitted_literals()
    unknown = {
        r: sorted(where.get(r, {"a check's RULES"})) for r in emitted() - set(rules.CATALOGUE)
    }
    assert unknown == {}, "add these rules to auditor/rules/"
    unresolved = {r for r in where if r.endswith("*")} - set(families())
    assert unresolved == set(), "a new f-string rule family: resolve it in families()"


def test_the_catalogue_has_no_rule_that_nothing_reports() -> None:
    assert set(rules.CATALOGUE) - emitted() == set()


def test_rule_families_keep_the_category_in_their_name() -> None:
    for category in drift_categories():
        assert rules.get(f"drift-{category}").category == category
    for name, category in verify_checks().items():
        assert rules.get(f"verify-{name}").category == category


# --- The examples do what they say (the checks' own: tests/unit/validate/checks/) ---------------

RUN_HERE = ("input", "schema")


def examples(stage: str) -> list[tuple[rules.Rule, rules.Example, bool]]:
    return [
        (r, example, fails)
        for r in rules.CATALOGUE.values()
        if r.stage == stage
        for example, fails in ((r.passes, False), (r.fails, True))
        if example.file is not None
    ]


def _id(case: tuple[rules.Rule, rules.Example, bool]) -> str:
    return f"{case[0].id}-{'fails' if case[2] else 'passes'}"


def test_every_manifest_example_is_run_by_a_test() -> None:
    run = {"policy", *RUN_HERE}
    with_files = {r.stage for r in rules.CATALOGUE.values() if r.passes.file or r.fails.file}
    assert with_files <= run


@pytest.mark.parametrize("case", examples("input"), ids=_id)
def test_reading_examples(repo_copy: Path, case: tuple[rules.Rule, rules.Example, bool]) -> None:
    rule, example, fails = case
    assert example.file
    target = repo_copy / example.file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(example.text)
    found = Repository.open(repo_copy).load().findings
    if fails:
        assert rule.id in {f.rule for f in found}, [(f.rule, f.message) for f in found]
    else:
        assert found == [], [(f.rule, f.message) for f in found]


@pytest.mark.parametrize("case", examples("schema"), ids=_id)
def test_schema_examples(case: tuple[rules.Rule, rules.Example, bool]) -> None:
    rule, example, fails = case
    assert example.file
    resources, problems = manifests.load_text(example.text, example.file)
    assert problems == [] and len(resources) == 1
    cluster = example.file.split("/")[1]
    found, _ = ClusterValidator(SchemaCatalog(ROOT / "schemas", cluster)).check(resources[0])
    if fails:
        assert rule.id in {f.rule for f in found}, [(f.rule, f.message) for f in found]
    else:
        assert found == [], [(f.rule, f.message) for f in found]


def test_manifest_examples_are_yaml_a_reader_can_copy() -> None:
    for rule in rules.CATALOGUE.values():
        for example in (rule.passes, rule.fails):
            broken_on_purpose = {"yaml-syntax", "yaml-duplicate-key", "yaml-bad-key"}
            if example.file and not (example is rule.fails and rule.id in broken_on_purpose):
                assert list(yaml.safe_load_all(example.text)), rule.id


# --- Documentation ---------------------------------------------------------------------------


def test_docs_rules_md_is_generated_from_the_catalogue() -> None:
    current = (ROOT / "docs/rules.md").read_text()
    assert current == render.markdown(), f"docs/rules.md is stale: run `{render.REGENERATE}`"


def github_anchor(heading: str) -> str:
    """The id GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_rule_has_its_own_anchor_in_the_docs() -> None:
    headings = re.findall(r"^#+ (.+)$", render.markdown(), re.M)
    anchors = [github_anchor(h) for h in headings]
    assert len(anchors) == len(set(anchors)), "two headings share an anchor"
    assert set(rules.CATALOGUE) <= set(anchors)


def test_the_docs_url_is_this_repositorys() -> None:
    apps = (ROOT / "argocd/applicationsets.yaml").read_text()
    assert f"repoURL: {rules.REPO_URL}.git" in apps
    assert f"{rules.REPO_URL}/blob/main/docs/rules.md" == rules.DOCS_URL
