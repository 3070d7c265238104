"""An estate as `kueue-gitops import` leaves it: a cluster configured by hand, read into a
repository by import's own writer (auditor/onboard/estate.py, importing.write_whole), with none
of what `init` writes (no argocd/, no alerts, no CODEOWNERS, no admission policies).

Its habits are not the tool's: tenants are the namespaces labelled `company.io/team`, the
ClusterQueues admit namespaces labelled `company.io/gpu-access: "true"`, each tenant submits
through a LocalQueue named `jobs` and the ClusterRole `company:batch-user` its RoleBinding binds.
"""

from __future__ import annotations

import typing as t
from pathlib import Path

import yaml

from auditor.onboard import estate as onboard_estate
from auditor.onboard import importing
from auditor.repo.profiles import export_schemas

CLUSTER = "gpu-east"
API = "kueue.x-k8s.io/v1beta2"
RBAC = "rbac.authorization.k8s.io"
ACCESS = {"company.io/gpu-access": "true"}
ROLE = "company:batch-user"
TEAMS = ("nlp", "vision")
REPO_URL = "https://git.example.com/company/kueue-estate.git"


def _obj(kind: str, name: str, namespace: str | None = None, **body: t.Any) -> dict[str, t.Any]:
    api = {"Namespace": "v1", "ClusterRole": f"{RBAC}/v1", "RoleBinding": f"{RBAC}/v1"}
    meta: dict[str, t.Any] = {"name": name, "uid": f"uid-{name}", "resourceVersion": "7"}
    meta |= body.pop("metadata", {})
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api.get(kind, API), "kind": kind, "metadata": meta, **body}


def _queue(team: str) -> dict[str, t.Any]:
    cells = {"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"}
    return _obj(
        "ClusterQueue",
        f"{team}-gpus",
        spec={
            "cohortName": "research",
            "namespaceSelector": {"matchLabels": dict(ACCESS)},
            "resourceGroups": [
                {
                    "coveredResources": list(cells),
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [{"name": r, "nominalQuota": q} for r, q in cells.items()],
                        }
                    ],
                }
            ],
        },
    )


def _team(team: str) -> list[dict[str, t.Any]]:
    labels = {"company.io/team": team, **ACCESS}
    return [
        _obj("Namespace", team, metadata={"labels": labels}),
        _queue(team),
        _obj("LocalQueue", "jobs", team, spec={"clusterQueue": f"{team}-gpus"}),
        _obj(
            "RoleBinding",
            f"{team}-batch",
            team,
            roleRef={"apiGroup": RBAC, "kind": "ClusterRole", "name": ROLE},
            subjects=[{"apiGroup": RBAC, "kind": "Group", "name": f"oidc:{team}"}],
        ),
    ]


CONFIGURATION = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
metrics:
  enableClusterQueueResources: true
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels: {company.io/gpu-access: "true"}
integrations:
  frameworks: [batch/job]
"""
NODE = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "a100-0", "labels": {"company.io/pool": "a100"}},
    "status": {"allocatable": {"cpu": "256", "memory": "2Ti", "nvidia.com/gpu": "32"}},
}


def estate() -> onboard_estate.Estate:
    objects = [
        _obj("ResourceFlavor", "a100", spec={"nodeLabels": {"company.io/pool": "a100"}}),
        _obj("Cohort", "research"),
        _obj("WorkloadPriorityClass", "research-low", value=100),
        _obj("WorkloadPriorityClass", "research-high", value=1000),
        _obj(
            "ClusterRole",
            ROLE,
            rules=[
                {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", "get"]},
                {"apiGroups": ["kueue.x-k8s.io"], "resources": ["localqueues"], "verbs": ["get"]},
            ],
        ),
        *(o for team in TEAMS for o in _team(team)),
        _obj(
            "ConfigMap",
            "kueue-manager-config",
            "kueue-system",
            data={"controller_manager_config.yaml": CONFIGURATION},
        )
        | {"apiVersion": "v1"},
    ]
    return onboard_estate.Estate(CLUSTER, "v0.19.2", API, objects, nodes=[NODE])


def imported(dest: Path) -> Path:
    """`dest` as `kueue-gitops import gpu-east --tenants-by label=company.io/team` leaves it."""
    dest.mkdir(parents=True, exist_ok=True)
    rule = onboard_estate.TenantRule.parse("label=company.io/team")
    options = onboard_estate.Options(rule, ("@company/platform",), CLUSTER)
    made = onboard_estate.files(estate(), options, importing.tenant_profiles(dest))
    importing.write_whole(dest, CLUSTER, made.files, None)
    export_schemas(dest)
    return dest


def warn_first(root: Path) -> None:
    """The step before the first `generate policies` on an adopted estate: each cluster
    profile's admission policies in Warn until nothing running is refused, which import
    writes itself (the cluster runs work)."""
    for path in sorted(root.glob("clusters/*/profile.yaml")):
        spec = yaml.safe_load(path.read_text())["spec"]
        assert spec["admissionPolicies"] == {"enforcement": "Warn"}, path
