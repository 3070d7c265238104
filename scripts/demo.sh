#!/usr/bin/env bash
# The demo: two sandbox clusters, synced from this repository as Argo CD would, then shown live.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUEUE_GITOPS_SANDBOXES="${KUEUE_GITOPS_SANDBOXES:-${TMPDIR:-/tmp}/kueue-gitops-demo}"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
trap 'step "stopping the sandboxes"; kueue-gitops sandbox down' EXIT

step "building the control plane (cached after the first run) and starting gpu-prod and gpu-staging"
kueue-gitops sandbox build
kueue-gitops sandbox up gpu-prod
kueue-gitops sandbox up --with-kueue gpu-staging   # Kueue itself runs here: verify probes it
eval "$(kueue-gitops sandbox env)"   # each sandbox answers to its cluster profile's context

for cluster in gpu-prod gpu-staging; do
  step "syncing clusters/$cluster and tenants/*/$cluster with server-side apply"
  kueue-gitops sandbox apply --cluster "$cluster"
  step "what $cluster holds now"
  kueue-gitops status --cluster "$cluster"
done

step "as a member of team-a on gpu-staging: the API server refuses a Job without a queue name, and one asking for batch-critical"
python - <<'PY'
from auditor.errors import ClusterAccessError
from auditor.live.kube import KubeCluster

admin = KubeCluster.connect("gpu-staging", context="gpu-staging")
alice = admin.impersonating("alice@example.org", ["example-org:team-a"])  # acts as team-a
for name, labels in [
    ("no-queue", {}),
    ("critical", {"kueue.x-k8s.io/queue-name": "batch",
                  "kueue.x-k8s.io/priority-class": "batch-critical"}),
]:
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": name, "namespace": "team-a", "labels": labels},
           "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
               {"name": "main", "image": "registry.k8s.io/pause:3.10"}]}}}}
    try:  # a dry run: even if the boundary did not hold, nothing would be left behind
        alice.request("POST", alice.path("batch/v1", "Job", "team-a"),
                      query=[("dryRun", "All")], body=job)
        print(f"Job {name} with labels {labels}: ACCEPTED (the boundary does not hold)")
    except ClusterAccessError as exc:
        print(f"Job {name} with labels {labels}:\n  refused: {str(exc).split('): ', 1)[-1]}")
PY

step "verify on gpu-staging: probe Jobs against the real Kueue (quota, borrowing, preemption, labels, Hold), then the tenant boundaries probed as team-a"
kueue-gitops verify --cluster gpu-staging

step "drift on gpu-prod right after the sync: nothing differs (exit 0)"
kueue-gitops drift --cluster gpu-prod

step "injecting drift into gpu-prod through the API, the way hand edits happen"
python - <<'PY'
from auditor.live.kube import KubeCluster

cluster = KubeCluster.connect("gpu-prod", context="gpu-prod")
KUEUE, RBAC = "kueue.x-k8s.io/v1beta2", "rbac.authorization.k8s.io/v1"
cq = cluster.get(KUEUE, "ClusterQueue", "team-a-cq")
groups = cq["spec"]["resourceGroups"]
a100 = next(f for f in groups[0]["flavors"] if f["name"] == "a100")
next(r for r in a100["resources"] if r["name"] == "nvidia.com/gpu")["nominalQuota"] = "24"
cluster.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {"resourceGroups": groups}},
              manager="kubectl-edit")
print("raised team-a-cq's a100 GPU quota from 16 to 24")
cluster.patch(KUEUE, "ClusterQueue", "team-b-cq", {"spec": {"stopPolicy": "Hold"}},
              manager="kubectl-edit")
print("held team-b-cq by hand (stopPolicy: Hold)")
cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {
    "name": "scratch", "labels": {"platform.example.com/kueue": "enabled"}}})
print("created namespace scratch with the admission label")
cluster.create({"apiVersion": RBAC, "kind": "ClusterRole", "metadata": {"name": "cq-tweaker"},
                "rules": [{"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"],
                           "verbs": ["patch"]}]})
cluster.create({"apiVersion": RBAC, "kind": "ClusterRoleBinding",
                "metadata": {"name": "team-a-cq-tweakers"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                            "name": "cq-tweaker"},
                "subjects": [{"kind": "Group", "name": "example-org:team-a"}]})
print("let group example-org:team-a patch ClusterQueues")
PY

step "drift on gpu-prod now: each change, its category, and who made it (exit 1)"
kueue-gitops drift --cluster gpu-prod || echo "(drift exited $?: drift found)"

step "the same report as markdown, the body of the scheduled drift issue"
kueue-gitops drift --cluster gpu-prod -o markdown || true
