"""Run checks the way `validate` does, on a repository folder, and compare findings tersely."""

from __future__ import annotations

import datetime
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path

from auditor.k8s.objects import ResourceKey
from auditor.model import Finding, Resource
from auditor.repo.layout import Repository
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.validator import ClusterValidator
from auditor.validate import checks
from auditor.validate.checks import CheckContext
from auditor.validate.engine import why_invalid
from tests.estate import ESTATE


def context(
    repo: Path, cluster: str = "gpu-prod", today: datetime.date | None = None
) -> CheckContext:
    repository = Repository.open(repo)
    loaded = repository.load([cluster])
    assert loaded.findings == [], [f.message for f in loaded.findings]
    return CheckContext(
        repo=repository,
        cluster=repository.cluster(cluster),
        resources=tuple(loaded.for_cluster(cluster)),
        tenants=repository.tenants,
        today=today or datetime.date.today(),
        invalid=Invalid(loaded.for_cluster(cluster), cluster),
    )


class Invalid(Mapping[ResourceKey, Finding]):
    """What validate keeps out of the checks for a type error, with why, judged against the
    committed schemas on first use (only checks that follow references ask). The objects stay
    in `resources` too, so each check's own tests see them as before."""

    def __init__(self, resources: list[Resource], cluster: str) -> None:
        self.resources, self.cluster = resources, cluster

    @functools.cached_property
    def _found(self) -> dict[ResourceKey, Finding]:
        validator = ClusterValidator(SchemaCatalog(ESTATE / "schemas", self.cluster))
        judged = ((r, *validator.check(r)) for r in self.resources)
        return {r.key: why_invalid(found) for r, found, ok in judged if found and not ok}

    def __getitem__(self, key: ResourceKey) -> Finding:
        return self._found[key]

    def __iter__(self) -> Iterator[ResourceKey]:
        return iter(self._found)

    def __len__(self) -> int:
        return len(self._found)


def run_check(
    repo: Path, check_id: str, cluster: str = "gpu-prod", today: datetime.date | None = None
) -> list[Finding]:
    return checks.run(context(repo, cluster, today), only=[check_id])


def write(repo: Path, path: str, text: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text)


def edit(repo: Path, path: str, old: str, new: str) -> None:
    """Replace `old` (which must be there) by `new` in one file of the repository copy."""
    text = (repo / path).read_text()
    assert old in text, f"{old!r} not in {path}"
    (repo / path).write_text(text.replace(old, new, 1))


def line_of(repo: Path, path: str, needle: str, nth: int = 1) -> int:
    """The 1-based line of the nth line containing `needle`."""
    hits = [i for i, line in enumerate((repo / path).read_text().splitlines(), 1) if needle in line]
    return hits[nth - 1]


def assert_findings(
    findings: list[Finding], *expected: tuple[str, str, str, int | None], contains: str = ""
) -> None:
    """Each finding as (rule, severity, file, line), in any order; every message has `contains`."""
    got = sorted((f.rule.id, str(f.severity), f.file or "", f.line) for f in findings)
    assert got == sorted(expected), "\n".join(f"{f.file}:{f.line} {f.message}" for f in findings)
    for f in findings:
        assert contains in f.message, f.message
