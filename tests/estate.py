"""The tests' own estate: a frozen copy of a kueue-gitops repository (tests/data/estate/).

Tests read and change this snapshot, never the repository's live clusters/ and tenants/: those
are the product's content, and a tenant's pull request to its LocalQueue must not break the
tool's tests. The live folders are checked in one place only (tests/acceptance/test_live_estate.py);
tests/unit/test_frozen_estate.py fails when any other test reaches for them."""

from __future__ import annotations

import shutil
from pathlib import Path

ESTATE = Path(__file__).resolve().parent / "data" / "estate"


def copy_estate(dest: Path, *folders: str) -> Path:
    """Copy the frozen estate's `folders` (clusters/ and tenants/ unless named; a file such as
    CODEOWNERS too) into `dest`, and return `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in folders or ("clusters", "tenants"):
        if (ESTATE / name).is_file():
            shutil.copy2(ESTATE / name, dest / name)
        else:
            shutil.copytree(ESTATE / name, dest / name)
    return dest
