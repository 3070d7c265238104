"""Right after an import, drift reports differences only: a power the repository grants is
validate's finding, and power over the platform's objects is judged for every subject.

On a real API server: its own `edit` ClusterRole (aggregated by its controller), a tenant bound to
it in the repository, and a group outside the platform's identities bound in the repository to a
ClusterRole defined only on the cluster that lets it patch every ClusterQueue (the authorizer
agrees, by SubjectAccessReview)."""

from __future__ import annotations

import typing as t
from pathlib import Path

from auditor.sandbox import Sandbox
from tests.conftest import run_line
from tests.integration.drift_live import CLUSTER, drift_json, servable_repo, sync

RBAC = f"clusters/{CLUSTER}/rbac.yaml"
TENANT_RBAC = f"tenants/team-a/{CLUSTER}/rbac.yaml"
EDITORS = """---
# Imported as it ran: team-a's people edit their namespace with Kubernetes' own role.
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: team-a-editors
  namespace: team-a
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: edit
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: Group
    name: example-org:team-a
"""
LEADS = """---
# Imported as it ran: the NLP leads tune their queues. queue-tuner is defined on the cluster only.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: nlp-leads-queues
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: queue-tuner
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: Group
    name: oidc:nlp-leads
"""
QUEUE_TUNER: dict[str, t.Any] = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "queue-tuner"},
    "rules": [
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["clusterqueues"],
            "verbs": ["get", "list", "update", "patch"],
        }
    ],
}


def may(box: Sandbox, group: str, verb: str, resource: str, group_name: str) -> bool:
    """The API server's own answer (SubjectAccessReview) for a member of `group`."""
    answer = box.connect().create(
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": "probe",
                "groups": [group],
                "resourceAttributes": {"verb": verb, "group": group_name, "resource": resource},
            },
        }
    )
    return bool(answer["status"].get("allowed"))


def test_drift_after_an_import_names_only_what_validate_cannot_see(
    fresh_sandbox: Sandbox, tmp_path: Path
) -> None:
    repo = servable_repo(tmp_path / "repo", fresh_sandbox.connect())
    (repo / TENANT_RBAC).write_text((repo / TENANT_RBAC).read_text() + EDITORS)
    (repo / RBAC).write_text((repo / RBAC).read_text() + LEADS)
    sync(fresh_sandbox, repo)
    fresh_sandbox.connect().create(QUEUE_TUNER)
    assert may(fresh_sandbox, "oidc:nlp-leads", "patch", "clusterqueues", "kueue.x-k8s.io")

    code, report = drift_json(repo, fresh_sandbox.kubeconfig)
    rules = [f["rule"] for f in report["findings"]]
    # The tenants' edit is in the repository, and validate names it: no drift of its own.
    assert "rbac-tenant-power-granted" not in rules
    [granted] = [f for f in report["findings"] if f["rule"] == "rbac-platform-power-granted"]
    assert (granted["file"], granted["subject"]) == (RBAC, "Group oidc:nlp-leads")
    assert granted["powers"] == [
        "patch clusterqueues.kueue.x-k8s.io cluster-wide",
        "update clusterqueues.kueue.x-k8s.io cluster-wide",
    ]
    assert (
        "ClusterRoleBinding nlp-leads-queues -> ClusterRole queue-tuner -> rules[0]"
        in (granted["message"])
    )
    assert (code, [r for r in rules if r != "rbac-platform-power-granted"]) == (1, [])

    # validate names the tenants' edit; with queue-tuner written into the repository, validate
    # judges the leads' power, and drift has nothing left to say about either.
    validated = run_line(["kueue-gitops", "--repo", str(repo), "validate", "--cluster", CLUSTER])
    assert "[rbac-builtin-role]" in validated.stdout
    tuner = (
        "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n"
        "metadata:\n  name: queue-tuner\nrules:\n  - apiGroups: [kueue.x-k8s.io]\n"
        "    resources: [clusterqueues]\n    verbs: [get, list, update, patch]\n"
    )
    (repo / RBAC).write_text((repo / RBAC).read_text() + tuner)
    validated = run_line(["kueue-gitops", "--repo", str(repo), "validate", "--cluster", CLUSTER])
    assert "lets Group oidc:nlp-leads, none of gpu-prod's platformIdentities" in validated.stdout
    assert "[rbac-platform-power]" in validated.stdout
    code, report = drift_json(repo, fresh_sandbox.kubeconfig)
    assert (code, report["findings"]) == (0, [])
