from __future__ import annotations

import shutil
from pathlib import Path

from tests.estate import ESTATE
from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check

CQS = "clusters/gpu-prod/clusterqueues.yaml"
LQS = "tenants/team-a/gpu-prod/localqueues.yaml"
NS = "tenants/team-a/gpu-prod/namespace.yaml"
GUARD = "argocd.argoproj.io/sync-options: Prune=false,Delete=false  # never deleted by a sync\n"
APPSETS = "argocd/applicationsets.yaml"


def test_every_committed_queue_and_admitted_namespace_is_guarded(repo_copy: Path) -> None:
    assert run_check(repo_copy, "prune-guard") == []
    shutil.copytree(ESTATE / "argocd", repo_copy / "argocd")
    assert run_check(repo_copy, "prune-guard", "gpu-staging") == []


def test_dropping_the_sync_options_from_a_cluster_queue_is_an_error(repo_copy: Path) -> None:
    edit(repo_copy, CQS, "  annotations:\n    " + GUARD, "")
    assert_findings(
        run_check(repo_copy, "prune-guard"),
        ("prune-unguarded", "error", CQS, line_of(repo_copy, CQS, "metadata:")),
        contains="ClusterQueue team-a-cq lacks Prune=false, Delete=false in "
        "argocd.argoproj.io/sync-options (no ApplicationSet in argocd/ says its Application "
        "does not prune): a sync could delete it, and with it what it admitted",
    )


def test_a_local_queue_needs_delete_false_too(repo_copy: Path) -> None:
    edit(repo_copy, LQS, "Prune=false,Delete=false", "Prune=false")
    assert_findings(
        run_check(repo_copy, "prune-guard"),
        ("prune-unguarded", "error", LQS, line_of(repo_copy, LQS, "sync-options")),
        contains="LocalQueue batch lacks Delete=false",
    )


def test_only_admitted_namespaces_must_be_guarded(repo_copy: Path) -> None:
    edit(repo_copy, NS, "Prune=false,Delete=false", "Prune=true")
    [finding] = run_check(repo_copy, "prune-guard")
    assert finding.message.startswith("admitted namespace team-a lacks Prune=false, Delete=false")
    edit(repo_copy, NS, "platform.example.com/kueue: enabled", "platform.example.com/kueue: off")
    assert run_check(repo_copy, "prune-guard") == []


def test_prune_false_is_not_needed_where_the_application_set_does_not_prune(
    repo_copy: Path,
) -> None:
    shutil.copytree(ESTATE / "argocd", repo_copy / "argocd")
    edit(repo_copy, LQS, "Prune=false,Delete=false", "Delete=false")
    [finding] = run_check(repo_copy, "prune-guard")
    assert finding.message.startswith(
        "LocalQueue batch lacks Prune=false in argocd.argoproj.io/sync-options (ApplicationSet "
        "kueue-tenants prunes its folder)"
    )
    text = (repo_copy / APPSETS).read_text()
    tenants = text.index("name: kueue-tenants")
    text = text[:tenants] + text[tenants:].replace("prune: true", "prune: false", 1)
    (repo_copy / APPSETS).write_text(text)
    assert run_check(repo_copy, "prune-guard") == []
