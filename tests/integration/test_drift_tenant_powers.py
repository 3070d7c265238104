"""drift judges what the repository grants tenants by the roles as the cluster defines them."""

from __future__ import annotations

from pathlib import Path

from auditor.sandbox import Sandbox
from tests.conftest import run_line
from tests.integration.drift_live import CLUSTER, drift_json, servable_repo, sync

RBAC = f"clusters/{CLUSTER}/rbac.yaml"
BINDING = """---
# Lets team-a label its namespaces? The repository does not say what ops-labeller allows.
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: team-a-ops
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: ops-labeller
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: Group
    name: example-org:team-a
"""


def test_a_repo_binding_to_a_role_defined_only_on_the_cluster_is_judged_as_it_is_live(
    fresh_sandbox: Sandbox, tmp_path: Path
) -> None:
    repo = servable_repo(tmp_path / "repo", fresh_sandbox.connect())
    (repo / RBAC).write_text((repo / RBAC).read_text() + BINDING)
    sync(fresh_sandbox, repo)
    fresh_sandbox.connect().create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "ops-labeller"},
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["patch"]}],
        }
    )
    code, report = drift_json(repo, fresh_sandbox.kubeconfig)
    assert code == 1
    [granted] = [f for f in report["findings"] if f["rule"] == "rbac-tenant-power-granted"]
    lines = (repo / RBAC).read_text().splitlines()
    api_version = lines.index("  name: team-a-ops") - 2  # 1-based: apiVersion, kind, metadata
    assert (granted["file"], granted["line"], granted["subject"], granted["powers"]) == (
        RBAC,
        api_version,
        "Group example-org:team-a",
        ["patch namespaces cluster-wide"],
    )
    assert (
        "through ClusterRoleBinding team-a-ops -> ClusterRole ops-labeller -> rules[0]"
        in (granted["message"])
    )
    # rbac-power trusts the repository's grant; validate cannot bound the role at all.
    assert [f for f in report["findings"] if f["rule"] == "rbac-power"] == []
    result = run_line(["kueue-gitops", "--repo", str(repo), "validate", "--cluster", CLUSTER])
    assert result.exit_code == 1 and "rbac-tenant-role-unknown" in result.output
