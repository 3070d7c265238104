"""Reporters only format a Report; they never decide severity or exit codes.

Add a format by adding a module and one entry in REPORTER_BY_NAME.
"""

from __future__ import annotations

import typing as t

from auditor.report import github, junit, markdown, sarif, text
from auditor.report import json_ as json

Reporter = t.Callable[[t.Any, t.TextIO], None]

REPORTER_BY_NAME: dict[str, Reporter] = {
    "text": text.write,
    "json": json.write,
    "markdown": markdown.write,
    "sarif": sarif.write,
    "junit": junit.write,
    "github": github.write,
}

__all__ = ["REPORTER_BY_NAME", "Reporter"]
