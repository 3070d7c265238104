"""argocd/ read as the repository keeps it: each tenant's AppProject matches its profile, and
`retarget` points the objects at another repository URL without touching anything else."""

from __future__ import annotations

import typing as t

from auditor.repo import argocd
from auditor.repo.layout import Repository
from tests.estate import ESTATE

COMMITTED = "https://github.com/example-org/kueue-gitops.git"
CLONE = "file:///srv/clone.git"


def projects(repo: Repository) -> dict[str, dict[str, t.Any]]:
    return {d.name: d.body for d in argocd.documents(repo) if d.kind == "AppProject"}


def test_tenant_projects_confine_each_tenant_to_its_profiles_namespaces() -> None:
    repo = Repository.open(ESTATE)
    found = projects(repo)
    for tenant, profile in repo.tenants.items():
        spec = found[f"tenant-{tenant}"]["spec"]
        reach = {(d["name"], d["namespace"]) for d in spec["destinations"]}
        assert reach == {
            (cluster, ns) for cluster, tc in profile.clusters.items() for ns in tc.namespaces
        }
        namespaces = {ns for tc in profile.clusters.values() for ns in tc.namespaces}
        assert all(
            item["kind"] == "Namespace" and item.get("name") in namespaces
            for item in spec["clusterResourceWhitelist"]
        )


def test_retarget_changes_the_committed_url_and_nothing_else() -> None:
    found = argocd.documents(Repository.open(ESTATE))
    assert argocd.repo_urls(found) == {COMMITTED}
    moved = argocd.retarget(found, CLONE)
    assert CLONE in str(moved) and COMMITTED not in str(moved)
    assert [swap_back(m) for m in moved] == [d.body for d in found]


def swap_back(node: t.Any) -> t.Any:
    if isinstance(node, dict):
        return {k: swap_back(v) for k, v in node.items()}
    if isinstance(node, list):
        return [swap_back(v) for v in node]
    return COMMITTED if node == CLONE else node
