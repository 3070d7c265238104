"""A repository as another team holds it: only clusters/, tenants/, schemas/ and CODEOWNERS."""

from __future__ import annotations

from pathlib import Path

from tests.estate import copy_estate


def user_repo(dest: Path) -> Path:
    """A platform team's repository: clusters/, tenants/, schemas/ and CODEOWNERS, nothing else
    (the tests' frozen estate)."""
    return copy_estate(dest, "clusters", "tenants", "schemas", "CODEOWNERS")
