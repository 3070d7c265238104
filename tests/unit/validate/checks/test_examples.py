"""Each check's rules, as the catalogue documents them: the examples do what they say."""

from __future__ import annotations

import re
import typing as t
from pathlib import Path
from types import ModuleType

import pytest

from auditor import rules
from auditor.model import Severity
from auditor.validate import checks
from tests.conftest import ROOT
from tests.unit.validate.checks.helpers import context, run_check, write

CHECK_OF = {rule_id: check_id for check_id, m in checks.CHECKS.items() for rule_id in m.RULES}
POLICY = {r.id for r in rules.catalogue().values() if r.stage == "policy"}


def cluster_of(file: str) -> str:
    """The cluster a repository file is synced to (a tenant profile: the first one)."""
    parts = file.split("/")
    if parts[0] == "clusters" or (parts[0] == "tenants" and len(parts) == 4):
        return parts[1] if parts[0] == "clusters" else parts[2]
    return "gpu-prod"


@pytest.mark.parametrize("check_id", sorted(checks.CHECKS))
def test_each_check_declares_its_rules_and_names_itself_after_its_module(check_id: str) -> None:
    module = checks.get(check_id)
    assert module.RULES and len(set(module.RULES)) == len(module.RULES)
    assert all(r.stage == "policy" for r in module.RULES.values())
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", check_id)
    assert t.cast(ModuleType, module).__name__.endswith(check_id.replace("-", "_"))


def test_the_catalogues_policy_rules_are_exactly_the_checks_rules() -> None:
    declared = [r for m in checks.CHECKS.values() for r in m.RULES]
    assert len(declared) == len(set(declared)), "a rule is declared by two checks"
    assert set(declared) == POLICY


@pytest.mark.parametrize("rule_id", sorted(CHECK_OF))
def test_the_passing_example_passes_its_check(repo_copy: Path, rule_id: str) -> None:
    example = rules.get(rule_id).passes
    assert example.file is not None, "a policy rule's examples are manifests, run here"
    write(repo_copy, example.file, example.text)
    findings = run_check(repo_copy, CHECK_OF[rule_id], cluster_of(example.file), example.today)
    assert findings == [], [f"{f.rule.id}: {f.message}" for f in findings]


@pytest.mark.parametrize("rule_id", sorted(CHECK_OF))
def test_the_failing_example_fails_with_its_rule(repo_copy: Path, rule_id: str) -> None:
    rule = rules.get(rule_id)
    example = rule.fails
    assert example.file is not None, "a policy rule's examples are manifests, run here"
    write(repo_copy, example.file, example.text)
    findings = run_check(repo_copy, CHECK_OF[rule_id], cluster_of(example.file), example.today)
    found = [f for f in findings if f.rule is rule]
    assert found, [f"{f.rule.id}: {f.message}" for f in findings]
    for finding in found:  # each points somewhere in the repository
        assert finding.file and finding.line and (repo_copy / finding.file).exists()


def test_the_repository_itself_passes_every_check_without_errors() -> None:
    for cluster in ("gpu-prod", "gpu-staging"):
        findings = checks.run(context(ROOT, cluster))
        errors = [f for f in findings if f.severity is Severity.ERROR]
        assert errors == [], [f.message for f in errors]
