"""Rules: each declared once beside the code that raises it, well formed, taken by that code,
its examples true, and docs/rules.md generated from them."""

from __future__ import annotations

import functools
import importlib
import pickle
import pkgutil
import re
from pathlib import Path

import pytest
import yaml

import auditor
from auditor import rules
from auditor.drift import classify
from auditor.model import Finding, Severity
from auditor.repo import manifests
from auditor.repo.layout import Repository
from auditor.rules import declarations, render
from auditor.validate.engine import validator_of
from tests.conftest import ROOT

ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
CATALOGUE = rules.catalogue()


@pytest.mark.parametrize("rule", CATALOGUE.values(), ids=CATALOGUE.keys())
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


def test_code_asking_for_a_rule_its_rules_file_lacks_is_told_which_file() -> None:
    with pytest.raises(rules.UnknownRule, match=r"auditor/drift/rules\.yaml; did you mean"):
        rules.of("auditor.drift.engine")["drift-quotas"]
    with pytest.raises(
        rules.RulesFileError, match=r"write auditor/status\.rules\.yaml or auditor/rules\.yaml"
    ):
        rules.of("auditor.status")


def test_a_finding_carries_its_rules_id_severity_and_category() -> None:
    warning, error = rules.get("borrowing-over-lendable"), rules.get("capacity-exceeded")
    assert (warning.severity, error.severity) == (Severity.WARNING, Severity.ERROR)
    doc = Finding(warning, "m", cluster="gpu-prod").to_json()
    assert (doc["rule"], doc["severity"], doc["category"]) == (warning.id, "warning", "quota")


def test_a_rule_is_never_compared_with_its_id_by_mistake() -> None:
    rule = rules.get("yaml-syntax")
    with pytest.raises(TypeError, match=r"compare a rule's \.id"):
        assert rule != "yaml-syntax"
    assert rule.id == "yaml-syntax"


def test_a_rule_pickles_as_its_declaration() -> None:
    """validate's workers and cache carry findings between processes: the rule comes back as
    the same object, and its pickle names the rule, not its documentation."""
    rule = rules.get("drift-quota")
    data = pickle.dumps(rule)
    assert pickle.loads(data) is rule
    assert len(data) < 200 and rule.help.encode() not in data


# --- Where rules are declared, and who takes them -------------------------------------------


def test_rules_files_sit_beside_a_module_or_in_a_package() -> None:
    for path in declarations.files():
        if path.name == declarations.PACKAGE_FILE:
            assert (path.parent / "__init__.py").is_file(), path
        else:
            module = path.name.removesuffix(declarations.MODULE_FILE)
            assert (path.parent / f"{module}.py").is_file(), path


@functools.cache
def bound() -> dict[str, set[str]]:
    """Each rule some module of the package holds at its top level, with those modules."""
    out: dict[str, set[str]] = {}
    for info in pkgutil.walk_packages(auditor.__path__, "auditor."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, rules.Rule):
                out.setdefault(value.id, set()).add(info.name)
    return out


def test_every_rule_is_taken_by_code_beside_its_declaration() -> None:
    """What the old source scanner checked, without scanning: a module takes its rules when it
    is imported (`rules.of(__name__)[...]`), so a rule nothing takes is documentation of nothing,
    and one taken elsewhere than beside its rules file is declared in the wrong place."""
    assert set(CATALOGUE) - set(bound()) == set(), "declared, but no module takes them"
    for rule_id, modules in bound().items():
        beside = {
            m for m in modules if declarations.file_of(m) == ROOT / CATALOGUE[rule_id].declared_in
        }
        assert beside, (
            f"{rule_id} is declared in {CATALOGUE[rule_id].declared_in}, taken by {modules}"
        )


def test_drift_rules_are_named_after_their_category() -> None:
    assert len(classify.CATEGORIES) == len({r.category for r in classify.CATEGORIES})
    for rule in classify.CATEGORIES:
        assert rule.id == f"drift-{rule.category}" and rule.stage == "drift"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("stage: policy\n", "needs `stage` and `rules`"),
        ("stage: nowhere\nrules: {}\n", "stage 'nowhere' is none of"),
        ("stage: policy\nrules:\n  Bad_ID: {}\n", "rule Bad_ID: an ID is lower-case"),
        ("stage: policy\nrules:\n  a-rule: {severity: error}\n", "needs exactly severity"),
        (
            "stage: policy\nrules:\n  a-rule: {severity: fatal, category: quota, summary: s., "
            "help: h., passes: p., fails: f.}\n",
            "severity is error or warning",
        ),
        (
            "stage: policy\nrules:\n  a-rule: {severity: error, category: quota, summary: s., "
            "help: h., passes: {file: x.yaml}, fails: f.}\n",
            "passes is a sentence, or file and manifest",
        ),
    ],
)
def test_a_malformed_rules_file_is_refused_naming_it(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "broken.rules.yaml"
    path.write_text(text)
    with pytest.raises(rules.RulesFileError, match=re.escape(says)) as caught:
        declarations._read(path)
    assert str(path) in str(caught.value)


def test_a_shared_paragraph_is_written_once_and_joined_into_each_help() -> None:
    fix = yaml.safe_load((ROOT / "auditor/drift/rules.yaml").read_text())["paragraphs"]["fix"]
    quota, cohort = rules.get("drift-quota"), rules.get("drift-cohort")
    assert quota.help.endswith(" ".join(fix.split())) and cohort.help.endswith(
        " ".join(fix.split())
    )
    assert quota.help.startswith("This rule covers nominalQuota")


# --- The examples do what they say (the checks' own: tests/unit/validate/checks/) ---------------

RUN_HERE = ("input", "schema")


def examples(stage: str) -> list[tuple[rules.Rule, rules.Example, bool]]:
    return [
        (r, example, fails)
        for r in CATALOGUE.values()
        if r.stage == stage
        for example, fails in ((r.passes, False), (r.fails, True))
        if example.file is not None
    ]


def _id(case: tuple[rules.Rule, rules.Example, bool]) -> str:
    return f"{case[0].id}-{'fails' if case[2] else 'passes'}"


def test_every_manifest_example_is_run_by_a_test() -> None:
    run = {"policy", *RUN_HERE}
    with_files = {r.stage for r in CATALOGUE.values() if r.passes.file or r.fails.file}
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
        assert rule in [f.rule for f in found], [(f.rule.id, f.message) for f in found]
    else:
        assert found == [], [(f.rule.id, f.message) for f in found]


@pytest.mark.parametrize("case", examples("schema"), ids=_id)
def test_schema_examples(case: tuple[rules.Rule, rules.Example, bool]) -> None:
    rule, example, fails = case
    assert example.file
    resources, problems = manifests.load_text(example.text, example.file)
    assert problems == [] and len(resources) == 1
    cluster = example.file.split("/")[1]
    found, _ = validator_of(Repository.open(ROOT), ROOT / "schemas", cluster).check(resources[0])
    if fails:
        assert rule in [f.rule for f in found], [(f.rule.id, f.message) for f in found]
    else:
        assert found == [], [(f.rule.id, f.message) for f in found]


def test_manifest_examples_are_yaml_a_reader_can_copy() -> None:
    for rule in CATALOGUE.values():
        for example in (rule.passes, rule.fails):
            broken_on_purpose = {"yaml-syntax", "yaml-duplicate-key", "yaml-bad-key"}
            if example.file and not (example is rule.fails and rule.id in broken_on_purpose):
                assert list(yaml.safe_load_all(example.text)), rule.id


# --- Documentation ---------------------------------------------------------------------------


def test_docs_rules_md_is_generated_from_the_rules() -> None:
    current = (ROOT / "docs/rules.md").read_text()
    assert current == render.markdown(), f"docs/rules.md is stale: run `{render.REGENERATE}`"


def test_the_usage_guides_rules_tables_are_generated_from_the_rules() -> None:
    """upgrade-check's and verify's tables in docs/usage.md: a rule declared is a row there."""
    current = (ROOT / "docs/usage.md").read_text()
    stages = [m[2] for m in render.STAGE_TABLE.finditer(current)]
    assert stages == ["upgrade", "verify"]
    assert current == render.with_stage_tables(current), (
        f"docs/usage.md's rules tables are stale: run `{render.REGENERATE_TABLES}`"
    )


def test_a_rules_table_rows_are_its_stages_rules_linked_to_their_docs() -> None:
    marked = (
        "a\n<!-- rules of stage runbook: generated by `make docs` -->\n"
        "STALE ROW\n<!-- end of rules -->\nb"
    )
    made = render.with_stage_tables(marked)
    rows = [line for line in made.splitlines() if line.startswith("| [`")]
    runbook = [r.id for r in CATALOGUE.values() if r.stage == "runbook"]
    assert [row.split("`")[1] for row in rows] == runbook
    assert "STALE ROW" not in made and made.startswith("a\n") and made.endswith("\nb")
    assert f"(rules.md#{runbook[0]})" in rows[0]
    with pytest.raises(ValueError, match="no stage 'nothing'"):
        render.with_stage_tables(marked.replace("runbook", "nothing"))


def github_anchor(heading: str) -> str:
    """The id GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_rule_has_its_own_anchor_in_the_docs() -> None:
    headings = re.findall(r"^#+ (.+)$", render.markdown(), re.M)
    anchors = [github_anchor(h) for h in headings]
    assert len(anchors) == len(set(anchors)), "two headings share an anchor"
    assert set(CATALOGUE) <= set(anchors)


def test_the_docs_url_is_this_repositorys() -> None:
    apps = (ROOT / "argocd/applicationsets.yaml").read_text()
    assert f"repoURL: {rules.REPO_URL}.git" in apps
    assert f"{rules.REPO_URL}/blob/main/docs/rules.md" == rules.DOCS_URL
