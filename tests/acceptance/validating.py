"""A private copy of the frozen estate, committed, and validate run on it through the CLI."""

from __future__ import annotations

import typing as t
from pathlib import Path

from tests.conftest import run_line
from tests.estate import copy_estate


def committed_repo(tmp_path: Path) -> Path:
    """A repository with clusters/, tenants/ and schemas/: a copy of the frozen estate."""
    return copy_estate(tmp_path, "clusters", "tenants", "schemas")


def validate(repo: Path, *args: str, **kw: t.Any) -> t.Any:
    return run_line(["kueue-gitops", "--repo", str(repo), "validate", *args], **kw)
