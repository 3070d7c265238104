"""What a rule is: its ID, severity, category, documentation and passing and failing examples."""

from __future__ import annotations

import datetime
import enum
import typing as t
from dataclasses import dataclass

# This repository, as argocd/applicationsets.yaml names it: where docs/rules.md is published.
REPO_URL = "https://github.com/example-org/kueue-gitops"
DOCS_URL = f"{REPO_URL}/blob/main/docs/rules.md"


# The parts of the tool that report findings: (title, what reports them), in pipeline order; a
# rules file names one of them (`stage:`), and docs/rules.md has a section per stage.
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
    "runbook": ("The stop-admission runbook", "`hold` and `resume`."),
    "github": ("GitHub steps", "`kueue-gitops github`, as the workflows run it."),
    "ownership": ("Code ownership", "`codeowners --check`."),
}
# The stages `validate` runs beside reading the repository (`input`): what `--only` names.
VALIDATE_STAGES = ("schema", "policy")


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Example:
    """A manifest written at `file` (relative to the repository), or, without a file, a
    sentence describing a situation no single file shows (a live cluster, a git history)."""

    text: str
    file: str | None = None
    today: datetime.date | None = None  # the day it is judged on, when its verdict depends on it


@dataclass(frozen=True, eq=False)
class Rule:
    """One kind of finding: what it means, how bad it is, and what makes it go away.

    Declared once, in the rules file beside the code that raises it (auditor.rules.of); there
    is one object per ID, so rules compare by identity, and a rule pickles as a reference to
    its declaration (validate's cache and workers carry findings between processes)."""

    id: str
    severity: Severity
    category: str  # what a finding of it is about (quota, rbac, ...)
    stage: str  # which part of the tool reports it: a key of auditor.rules.STAGES
    summary: str  # one line
    help: str  # a paragraph: why it matters and how to fix it
    passes: Example
    fails: Example
    declared_in: str  # its rules file, relative to the repository: auditor/drift/rules.yaml
    # A finding of it means something was not checked (a folder not rendered, an object not
    # compared, a schema missing): accepting it would stop the check for good, so a baseline
    # never holds one (auditor/repo/baseline.py) and --write-baseline refuses while one stands.
    unchecked: bool = False

    @property
    def anchor(self) -> str:
        """Its section in the repository's documentation."""
        return f"docs/rules.md#{self.id}"

    @property
    def url(self) -> str:
        return f"{DOCS_URL}#{self.id}"

    @property
    def name(self) -> str:
        """A CamelCase name, as SARIF viewers show rule names."""
        return "".join(part[:1].upper() + part[1:] for part in self.id.split("-"))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):  # `finding.rule == "some-id"` would be False, silently
            raise TypeError(f"compare a rule's .id with {other!r}, not the Rule")
        return self is other

    __hash__ = object.__hash__

    def __reduce__(self) -> tuple[t.Callable[[str, str], Rule], tuple[str, str]]:
        from auditor.rules import declarations  # it imports this module

        return declarations.declared_at, (self.declared_in, self.id)

    def __repr__(self) -> str:
        return f"Rule({self.id!r})"
