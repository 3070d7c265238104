#!/usr/bin/env bash
# The demo: the estate on three Kueue releases (gpu-staging v0.19.2, gpu-prod v0.17.0, gpu-legacy
# v0.9.1), each sandbox running its own, synced from this repository by a real Argo CD, shown live.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUEUE_GITOPS_SANDBOXES="${KUEUE_GITOPS_SANDBOXES:-${TMPDIR:-/tmp}/kueue-gitops-demo}"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
trap 'step "stopping the sandboxes"; kueue-gitops sandbox down' EXIT

step "building the control plane (Kueue v0.17.0), Kueue v0.19.2 and v0.9.1, kwok and Argo CD (cached after the first run), starting gpu-staging on v0.19.2"
kueue-gitops sandbox build --tool argocd
kueue-gitops sandbox up --with-kueue gpu-staging   # Kueue and kwok's node pools: verify probes them

step "starting gpu-prod with Argo CD: argocd/'s ApplicationSets make an Application per folder and sync both"
kueue-gitops sandbox up --with-argocd gpu-prod
eval "$(kueue-gitops sandbox env)"   # each sandbox answers to its cluster profile's context

for cluster in gpu-prod gpu-staging; do
  step "what $cluster holds now, as Argo CD synced it"
  kueue-gitops status --cluster "$cluster"
done

step "import: gpu-staging as it runs, into an empty repository (the way in for a team that already runs Kueue): validate names what the estate breaks, drift is clean"
IMPORTED="$(mktemp -d)"
git -C "$IMPORTED" init -q
# The sandbox runs Kueue as a process, not as upstream's Deployment: its release is named.
kueue-gitops --repo "$IMPORTED" import --cluster gpu-staging --kueue-version v0.19.2 \
  --tenants-by label=platform.example.com/tenant --owner @example-org/platform || echo "(import exited $?)"
kueue-gitops --repo "$IMPORTED" validate --cluster gpu-staging || echo "(validate exited $?: the estate's own problems, and no alerts or admission policies yet)"
kueue-gitops --repo "$IMPORTED" drift --cluster gpu-staging || echo "(drift exited $?)"

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

step "Jobs on gpu-staging's GPU pool (one node per flavor, simulated by kwok: no container runs): team-a borrows at batch-low, team-b reclaims at batch-standard, the victim comes back"
python - <<'PY'
import time

from auditor.live.kube import KubeCluster

cluster = KubeCluster.connect("gpu-staging", context="gpu-staging")


def job(ns: str, name: str, level: str, gpus: int, seconds: int) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": name, "namespace": ns,
        "labels": {"kueue.x-k8s.io/queue-name": "batch", "kueue.x-k8s.io/priority-class": level},
        "annotations": {"kueue-gitops.io/checkpoint": f"s3://checkpoints/{ns}/{name}/latest"}},
        "spec": {"suspend": True, "backoffLimit": 3, "template": {
            "metadata": {"annotations": {"kueue-gitops.io/sandbox-run-for": f"{seconds}s"}},
            "spec": {"restartPolicy": "Never", "containers": [{
                "name": "train", "image": "registry.k8s.io/e2e-test-images/busybox:1.36.1-1",
                "command": ["sleep", str(seconds)],
                "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}}}


def pods() -> str:
    found = cluster.list_in("v1", "Pod", "team-a") + cluster.list_in("v1", "Pod", "team-b")
    return ", ".join(sorted(f"{p['metadata']['name'].rsplit('-', 1)[0]}@{p['spec'].get('nodeName')}"
                            f"={p['status'].get('phase')}" for p in found))


for i in range(6):  # team-a-cq: 4 GPUs nominal, 2 borrowed from the cohort
    cluster.create(job("team-a", f"train-{i}", "batch-low", 1, 15))
time.sleep(3)
print("team-a running:", pods())
cluster.create(job("team-b", "urgent", "batch-standard", 3, 4))
made = [("team-a", f"train-{i}") for i in range(6)] + [("team-b", "urgent")]
seen, started = "", time.monotonic()
while time.monotonic() - started < 120:
    now = pods()
    if now != seen:
        print(f"{time.monotonic() - started:5.1f}s", now)
        seen = now
    done = [n for ns, n in made
            if (cluster.get("batch/v1", "Job", n, ns).get("status") or {}).get("succeeded")]
    if len(done) == len(made):
        break
    time.sleep(1)
print(f"all {len(made)} Jobs completed, each exactly once")
PY

step "the preemption ledger of gpu-staging: victim, queue, priority, preemptor, reason, recovery point"
kueue-gitops preemptions --cluster gpu-staging --since 1h -o markdown

step "starting gpu-legacy on Kueue v0.9.1 (v1beta1 only, built from its own pinned module) and syncing it"
kueue-gitops sandbox up --with-kueue gpu-legacy
eval "$(kueue-gitops sandbox env)"
kueue-gitops sandbox apply --cluster gpu-legacy
kueue-gitops status --cluster gpu-legacy

step "upgrade-check: gpu-legacy to v0.17.0 lists what changes; gpu-staging back to v0.9.1 is refused"
kueue-gitops upgrade-check --cluster gpu-legacy --to v0.17.0 || echo "(upgrade-check exited $?)"
kueue-gitops upgrade-check --cluster gpu-staging --to v0.9.1 || echo "(upgrade-check exited $?: refused)"

step "the fleet on three releases: each cluster's Kueue, what its CRDs serve and store, and who runs behind"
kueue-gitops drift --fleet || echo "(drift exited $?)"
REPORTS="$PWD/demo-reports"   # the pages the demo draws (-o html), named at the end
mkdir -p "$REPORTS"
kueue-gitops drift --fleet -o html > "$REPORTS/fleet.html" || true

step "drift on gpu-prod right after the sync: nothing differs (exit 0)"
kueue-gitops drift --cluster gpu-prod

step "a commit flowing: team-a's a100 GPU quota 16 -> 20, pushed to the repository Argo CD reads"
WORK="$(mktemp -d)/repo"
python - "$WORK" <<'PY'
import sys
import time
from pathlib import Path

from auditor.sandbox import Sandbox, argocd, argocd_control

host, work = Sandbox("gpu-prod"), Path(sys.argv[1])
served = argocd.state(host)
assert served is not None


def raise_quota(tree: Path) -> None:
    path = tree / "clusters/gpu-prod/clusterqueues.yaml"
    team_a, rest = path.read_text().split("\n---\n", 1)  # team-a-cq is the first document
    path.write_text(team_a.replace('nominalQuota: "16"', 'nominalQuota: "20"', 1) + "\n---\n" + rest)


commit = argocd_control.push(served, work, "Raise team-a's a100 GPU quota to 20", raise_quota)
started = time.monotonic()
argocd_control.refresh(host, "gpu-prod-platform")  # a webhook would; otherwise Argo CD polls
argocd_control.wait_for(
    host,
    lambda apps: apps["gpu-prod-platform"]["status"]["sync"].get("revision") == commit
    and argocd_control.sync_status(apps["gpu-prod-platform"]) == ("Synced", "Healthy"),
    timeout=180,
    what="the commit synced",
)
print(f"commit {commit[:12]} synced to gpu-prod by Argo CD in {time.monotonic() - started:.1f}s")
PY
step "drift of gpu-prod against that commit: the cluster is what the repository says (exit 0)"
kueue-gitops --repo "$WORK" drift --cluster gpu-prod

step "a change freeze on the platform's Applications: a deny sync window (Argo CD compares, syncs nothing)"
python -c 'from auditor.sandbox import Sandbox, argocd_control; argocd_control.hold_syncs(Sandbox("gpu-prod"), "kueue-platform")'

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
print("raised team-a-cq's a100 GPU quota from 20 to 24")
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

step "Argo CD's view: the quota edit is OutOfSync; the hold, the namespace and the binding it does not see"
python - <<'PY'
from auditor.sandbox import Sandbox, argocd_control

app = "gpu-prod-platform"
status = argocd_control.compare_now(Sandbox("gpu-prod"), [app])[app]["status"]
seen = [f"{r['kind']} {r['name']}" for r in status["resources"] if r.get("status") == "OutOfSync"]
print(f"{app}: {status['sync']['status']}; OutOfSync: {', '.join(seen) or 'nothing'}")
PY

step "drift on gpu-prod: every change, its category, who made it, and what Argo CD will do about it (exit 1)"
kueue-gitops --repo "$WORK" drift --cluster gpu-prod || echo "(drift exited $?: drift found)"

step "the freeze ends: Argo CD's selfHeal puts the quota back; what it cannot see stays"
python - <<'PY'
import time

from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox, argocd_control

host, app = Sandbox("gpu-prod"), "gpu-prod-platform"
cluster = KubeCluster.connect("gpu-prod", context="gpu-prod")


def quota() -> str:
    cq = cluster.get("kueue.x-k8s.io/v1beta2", "ClusterQueue", "team-a-cq")
    a100 = next(f for f in cq["spec"]["resourceGroups"][0]["flavors"] if f["name"] == "a100")
    return str(next(r for r in a100["resources"] if r["name"] == "nvidia.com/gpu")["nominalQuota"])


argocd_control.release_syncs(host, "kueue-platform")
argocd_control.refresh(host, app)
started = time.monotonic()
while quota() == "24" and time.monotonic() - started < 120:
    time.sleep(0.5)
print(f"Argo CD put team-a-cq's a100 quota back to {quota()} in {time.monotonic() - started:.1f}s")
PY

step "drift on gpu-prod now: the rest, each finding saying Argo CD will not heal it (exit 1)"
kueue-gitops --repo "$WORK" drift --cluster gpu-prod || echo "(drift exited $?: drift found)"

step "the same report as markdown, the body of the scheduled drift issue"
kueue-gitops --repo "$WORK" drift --cluster gpu-prod -o markdown || true

step "plan by replay: a pull request halving team-a's a100 GPUs on gpu-staging, the same trace through both engines: Kueue's scheduler simulated (sim), then the real Kueue on sandboxes (kueue)"
kueue-gitops sandbox down   # the replay's sandboxes get the machine to themselves: timing is measured
REPLAY="$(mktemp -d)/repo"
mkdir -p "$REPLAY" && cp -r clusters tenants schemas "$REPLAY"/ && ln -s "$PWD/testenv" "$REPLAY/testenv"
git -C "$REPLAY" init -q -b main
git -C "$REPLAY" -c user.name=demo -c user.email=demo@example.com add -A
git -C "$REPLAY" -c user.name=demo -c user.email=demo@example.com commit -qm base
python - "$REPLAY/clusters/gpu-staging/clusterqueues.yaml" <<'PY'
import sys
from pathlib import Path

path = Path(sys.argv[1])
team_a, rest = path.read_text().split("\n---\n", 1)  # team-a-cq is the first document
halved = team_a.replace('nominalQuota: "4"', 'nominalQuota: "2"', 1)
path.write_text(halved + "\n---\n" + rest)
PY
git -C "$REPLAY" -c user.name=demo -c user.email=demo@example.com commit -qam "Halve team-a's a100 GPUs"
kueue-gitops --repo "$REPLAY" trace generate --cluster gpu-staging --workloads 24 --hours 0.5 \
  --median-run 900 --seed 11 --tenant team-a:batch-low:0.65 --tenant team-b:batch-standard:0.35 \
  --out "$REPLAY/../trace.json"
started=$(date +%s.%N)
kueue-gitops --repo "$REPLAY" plan replay "$REPLAY/../trace.json" --base HEAD~1 --head HEAD \
  --cluster gpu-staging --engine sim || echo "(plan replay --engine sim exited $?: a tenant waits longer)"
sim_took=$(python -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$started")
started=$(date +%s.%N)
kueue-gitops --repo "$REPLAY" plan replay "$REPLAY/../trace.json" --base HEAD~1 --head HEAD \
  --cluster gpu-staging --engine kueue --speed 40 || echo "(plan replay --engine kueue exited $?: a tenant waits longer)"
real_took=$(python -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$started")
echo "base+head, the same trace and change: --engine sim ${sim_took}s, --engine kueue ${real_took}s"

step "the simulated day and the fleet as pictures (-o html: one self-contained page each)"
kueue-gitops --repo "$REPLAY" plan replay "$REPLAY/../trace.json" --base HEAD~1 --head HEAD \
  --cluster gpu-staging --engine sim --timeline "$REPORTS/replay-day.csv" -o html \
  > "$REPORTS/replay.html" || true
echo "the replay's page: $REPORTS/replay.html (its day as rows: $REPORTS/replay-day.csv)"
echo "the fleet's page:  $REPORTS/fleet.html"
