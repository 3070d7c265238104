"""The rule catalogue: every rule ID the tool can report, with its severity and documentation.

A Finding takes its severity from here (auditor.model), so a rule's severity is decided in one
place, and a finding with a rule this catalogue lacks cannot be made. `kueue-gitops rules`,
`kueue-gitops explain`, SARIF's rule metadata and docs/rules.md are all generated from it.
Adding a rule: write it in the module of the stage that reports it, with a passing and a failing
example (a manifest where one can show it: the tests run every one).
"""

from __future__ import annotations

import difflib

from auditor.rules import (
    alerts,
    boundaries,
    drift,
    ownership,
    plan,
    queues,
    quota,
    reading,
    schema,
    tenancy,
    upgrade,
    verify,
    webhook,
)
from auditor.rules.rule import DOCS_URL, REPO_URL, Example, Rule, Severity

__all__ = [
    "CATALOGUE",
    "DOCS_URL",
    "REPO_URL",
    "STAGES",
    "Example",
    "Rule",
    "Severity",
    "UnknownRule",
    "get",
]

# The parts of the tool that report findings: (title, what reports them), in pipeline order.
STAGES: dict[str, tuple[str, str]] = {
    "input": (
        "Reading the repository",
        "Every command that reads the repository (validate, drift, plan) reports these.",
    ),
    "schema": (
        "Schemas, API versions and the API server",
        "`validate`, against each cluster's committed schemas/ (and, with `--server-side`, "
        "its API server).",
    ),
    "policy": (
        "Policy checks",
        "`validate`: the platform's rules for tenants, queues, quota and alerts "
        "(auditor/validate/checks/).",
    ),
    "drift": ("Drift", "`drift`: the live clusters against the repository."),
    "plan": ("Change plans", "`plan`: what a change from base to head would do."),
    "verify": ("Live verification", "`verify`: probe Jobs on a live cluster."),
    "upgrade": (
        "Upgrades and rollbacks",
        "`upgrade-check`: a live cluster and the repository against a Kueue release's CRDs.",
    ),
    "ownership": ("Code ownership", "`codeowners --check`."),
}

_ALL: tuple[Rule, ...] = (
    *reading.RULES,
    *schema.RULES,
    *tenancy.RULES,
    *queues.RULES,
    *quota.RULES,
    *webhook.RULES,
    *alerts.RULES,
    *boundaries.RULES,
    *drift.RULES,
    *plan.RULES,
    *verify.RULES,
    *upgrade.RULES,
    *ownership.RULES,
)
CATALOGUE: dict[str, Rule] = {r.id: r for r in _ALL}


class UnknownRule(LookupError):
    """A rule ID the catalogue does not have: a typo by a user, or a rule added to the code
    without its entry here."""

    def __init__(self, rule_id: str) -> None:
        close = difflib.get_close_matches(rule_id, CATALOGUE, n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        super().__init__(f"no rule {rule_id!r} in the catalogue{hint}")
        self.rule_id = rule_id
        self.suggestions = close


def get(rule_id: str) -> Rule:
    try:
        return CATALOGUE[rule_id]
    except KeyError:
        raise UnknownRule(rule_id) from None


def _check_catalogue() -> None:
    """Rules are written by hand: catch a repeated ID or an unknown stage when imported."""
    if len(CATALOGUE) != len(_ALL):
        repeated = sorted({r.id for r in _ALL if [x.id for x in _ALL].count(r.id) > 1})
        raise AssertionError(f"rule IDs defined twice: {repeated}")
    stray = sorted({r.stage for r in _ALL} - set(STAGES))
    if stray:
        raise AssertionError(f"rules with unknown stages: {stray}")


_check_catalogue()
