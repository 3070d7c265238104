"""What the catalogue is made of: a rule, its severity, and its passing and failing examples."""

from __future__ import annotations

import datetime
import enum
import textwrap
from dataclasses import dataclass

# This repository, as argocd/applicationsets.yaml names it: where docs/rules.md is published.
REPO_URL = "https://github.com/example-org/kueue-gitops"
DOCS_URL = f"{REPO_URL}/blob/main/docs/rules.md"


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


def yaml(file: str, text: str, today: str | None = None) -> Example:
    """A manifest example; `text` may be indented like the code around it."""
    day = datetime.date.fromisoformat(today) if today else None
    return Example(textwrap.dedent(text).strip() + "\n", file, day)


def said(text: str) -> Example:
    return Example(" ".join(text.split()))


@dataclass(frozen=True)
class Rule:
    """One kind of finding: what it means, how bad it is, and what makes it go away."""

    id: str
    severity: Severity
    category: str  # the Finding's category: what the finding is about (quota, rbac, ...)
    stage: str  # which part of the tool reports it: a key of auditor.rules.STAGES
    summary: str  # one line
    help: str  # a paragraph: why it matters and how to fix it
    passes: Example
    fails: Example

    def __post_init__(self) -> None:
        object.__setattr__(self, "help", " ".join(self.help.split()))
        object.__setattr__(self, "summary", " ".join(self.summary.split()))

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


def rule(
    id: str,
    severity: str,
    category: str,
    stage: str,
    summary: str,
    help: str,
    passes: Example,
    fails: Example,
) -> Rule:
    """A Rule with its severity given as text, which keeps the catalogue's tables short."""
    return Rule(id, Severity(severity), category, stage, summary, help, passes, fails)
