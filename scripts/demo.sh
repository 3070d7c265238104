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

step "verify on gpu-staging: probe Jobs against the real Kueue (quota, borrowing, preemption, labels, Hold)"
kueue-gitops verify --cluster gpu-staging
