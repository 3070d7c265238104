"""Rules: every kind of finding the tool can report, with its severity and documentation.

A rule is declared once, in the rules file beside the code that raises it
(auditor/rules/declarations.py says where and why), and that code raises the Rule object: a
Finding takes its severity and category from it, so they cannot disagree. `kueue-gitops rules`,
`kueue-gitops explain`, SARIF's rule metadata and docs/rules.md are all made from the rules.
"""

from __future__ import annotations

from auditor.rules.declarations import (
    Declared,
    RulesFileError,
    UnknownRule,
    catalogue,
    get,
    of,
)
from auditor.rules.rule import (
    DOCS_URL,
    REPO_URL,
    STAGES,
    VALIDATE_STAGES,
    Example,
    Rule,
    Severity,
)

__all__ = [
    "DOCS_URL",
    "REPO_URL",
    "STAGES",
    "VALIDATE_STAGES",
    "Declared",
    "Example",
    "Rule",
    "RulesFileError",
    "Severity",
    "UnknownRule",
    "catalogue",
    "get",
    "of",
]
