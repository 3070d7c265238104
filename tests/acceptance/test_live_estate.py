"""The repository's own clusters/ and tenants/ (the product's content, changed by the platform
team and by tenants' pull requests): the one place a test reads them.

Every other test works on the frozen estate (tests/estate.py), so a tenant's change to its
LocalQueue can fail this check, and nothing else; tests/unit/test_frozen_estate.py keeps it so."""

from __future__ import annotations

import json

from tests.conftest import ROOT, run_line


def test_the_repositorys_own_estate_validates_clean_with_its_codeowners_current() -> None:
    result = run_line(["kueue-gitops", "--repo", str(ROOT), "validate", "-o", "json"])
    report = json.loads(result.stdout)
    unsuppressed = [f for f in report["findings"] if not f.get("suppressed")]
    assert (result.exit_code, unsuppressed) == (0, []), result.stderr
    assert sorted(c["name"] for c in report["clusters"]) == sorted(
        p.name for p in (ROOT / "clusters").iterdir()
    )
    owners = run_line(["kueue-gitops", "--repo", str(ROOT), "codeowners", "--check"])
    assert (owners.exit_code, owners.output) == (0, "codeowners: clean: 0 error(s), 0 warning(s)\n")
