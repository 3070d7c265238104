"""Corrupted copies of this repository, through `validate` and `drift`: never a traceback, only a
documented exit code, every finding at a file (and a line), in bounded time and memory.

A case corrupts one file of a private copy of the repository (see corrupt.py), runs `validate`
for that file's cluster through the CLI and `drift` against a cluster that holds the clean
repository, checks both, and puts the file back. The budget is fixed and the seed too, so CI
sees the same cases every run; tests/fuzz/README.md has the longer run and what it found.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import typing as t
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, seed, settings

from auditor.cli.main import cli
from auditor.drift import audit
from auditor.repo.layout import Repository
from tests.conftest import assert_report
from tests.estate import copy_estate
from tests.fuzz import regressions
from tests.fuzz.corrupt import Corruption, corruptions
from tests.unit.drift.repo_as_live import RepoAsLive

EXAMPLES = int(os.environ.get("KUEUE_GITOPS_FUZZ_EXAMPLES", "40"))
SEED = os.environ.get("KUEUE_GITOPS_FUZZ_SEED")  # unset: Hypothesis derandomized, fixed cases
CASE_SECONDS = 20.0  # far above the slowest case seen (README.md)
MAX_RSS_MB = 1024  # the whole test process, high-water mark
# Findings about a folder, or a CRD against schemas/<cluster>/index.json, have no line.
NO_LINE = {"unknown-cluster-folder", "schema-drift"}


class Workspace:
    def __init__(self, root: Path) -> None:
        self.repo = root / "repo"
        self.outside = root / "outside"
        self.outside.mkdir()
        (self.outside / "secret.yaml").write_text(
            "apiVersion: v1\nkind: Secret\nmetadata: {name: stolen, namespace: team-a}\n"
        )
        copy_estate(self.repo, "clusters", "tenants", "schemas")
        with_schemas = {p.parent.name for p in (self.repo / "schemas").glob("*/index.json")}
        self.files = sorted(
            str(p.relative_to(self.repo))
            for folder in ("clusters", "tenants")
            for p in (self.repo / folder).rglob("*.yaml")
            if cluster_of(str(p.relative_to(self.repo))) in with_schemas
        )
        clean = Repository.open(self.repo)
        self.live = {c: [r.body for r in clean.load([c]).for_cluster(c)] for c in clean.clusters}
        self.worst = (0.0, "")
        warm = ["--repo", str(self.repo), "validate", "--cluster", "gpu-prod"]
        assert CliRunner().invoke(cli, warm).exit_code == 0  # CEL's first use, out of any case


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("fuzz"))


def cluster_of(file: str) -> str:
    parts = file.split("/")
    return parts[1] if parts[0] == "clusters" else parts[2] if len(parts) > 3 else "gpu-prod"


def check(ws: Workspace, corruption: Corruption) -> None:
    """Apply `corruption`, judge what validate and drift make of it, undo it."""
    original = (ws.repo / corruption.file).read_bytes()
    corruption.apply(ws.repo, ws.outside)
    started = time.monotonic()
    limit = sys.getrecursionlimit()
    try:
        judge_validate(ws, corruption)
        judge_drift(ws, corruption)
    finally:
        corruption.restore(ws.repo, original)
        # The CEL library raises the limit for each environment it makes; Hypothesis takes a
        # limit changed by a case for a mistake.
        sys.setrecursionlimit(limit)
    seconds = time.monotonic() - started
    ws.worst = max(ws.worst, (seconds, repr(corruption)))
    assert seconds < CASE_SECONDS, f"{corruption} took {seconds:.1f}s"
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert rss_mb < MAX_RSS_MB, f"{corruption}: the process reached {rss_mb:.0f} MB"


def judge_validate(ws: Workspace, corruption: Corruption) -> None:
    cluster = cluster_of(corruption.file)
    argv = ["--repo", str(ws.repo), "validate", "--cluster", cluster, "--jobs", "1", "-o", "json"]
    result = CliRunner().invoke(cli, argv)
    said = f"{corruption}: exit {result.exit_code}\n{result.stderr}"
    assert result.exception is None or isinstance(result.exception, SystemExit), said
    assert "Traceback" not in result.output + result.stderr, said
    if corruption.file.endswith("profile.yaml") and result.exit_code == 2:
        # a profile is configuration: exit 2 and one line saying where
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: "), said
        assert corruption.file.split("/")[0] in result.stderr or "profile" in result.stderr, said
        return
    assert result.exit_code in (0, 1), said  # 3 here would be a bug: nothing live is read
    report = json.loads(result.stdout)
    assert_report(report)
    assert [c for c in report["clusters"] if c["status"] != "ok"] == [], said
    for finding in report["findings"]:
        assert finding["file"], (said, finding)
        assert finding["line"] or finding["rule"] in NO_LINE, (said, finding)


def judge_drift(ws: Workspace, corruption: Corruption) -> None:
    cluster = cluster_of(corruption.file)
    try:
        repo = Repository.open(ws.repo)
        report = audit.audit(
            repo,
            [cluster],
            lambda p: RepoAsLive(p.name, ws.live[p.name]),
            schemas_root=ws.repo / "schemas",
        )
    except Exception as exc:  # only our own errors are allowed out, and only for profiles
        from auditor.errors import ConfigError

        assert isinstance(exc, ConfigError) and corruption.file.endswith("profile.yaml"), (
            f"{corruption}: drift raised {exc!r}"
        )
        return
    assert not report.incomplete, f"{corruption}: {report.clusters}"
    for f in report.findings:
        if f.change in ("modified", "missing") or f.category in ("input", "layout"):
            assert f.file and (f.line or f.rule.id in NO_LINE), f"{corruption}: {f}"


def _settings() -> t.Callable[[t.Any], t.Any]:
    config = settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=SEED is None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    return config if SEED is None else lambda f: config(seed(int(SEED))(f))


@pytest.mark.parametrize("corruption", regressions.CASES, ids=repr)
def test_the_cases_the_fuzzer_once_failed_on(workspace: Workspace, corruption: Corruption) -> None:
    check(workspace, corruption)


def test_corrupted_repositories_are_judged_never_crashed_on(workspace: Workspace) -> None:
    @_settings()
    @given(corruption=corruptions(workspace.files))
    def case(corruption: Corruption) -> None:
        check(workspace, corruption)

    started = time.monotonic()
    case()
    print(
        f"\nfuzz: {EXAMPLES} cases in {time.monotonic() - started:.0f}s; slowest "
        f"{workspace.worst[0]:.2f}s ({workspace.worst[1]}); max RSS "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
    )
