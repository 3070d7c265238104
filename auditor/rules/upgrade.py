"""Rules of `upgrade-check`: is a cluster's Kueue ready to be upgraded or rolled back to a
release, given its CRD bundle (auditor/upgrade/)."""

from __future__ import annotations

from auditor.rules.rule import Rule, rule, said

FIX = """`kueue-gitops upgrade-check --cluster C --to TARGET` reads the live cluster and the
target release's CRDs and webhook configurations. Fix what it names before changing the
controller or the CRDs; the README's upgrade and rollback procedure says in which order."""


def _rule(name: str, severity: str, summary: str, why: str, passes: str, fails: str) -> Rule:
    return rule(
        f"upgrade-{name}",
        severity,
        "upgrade",
        "upgrade",
        summary,
        f"{why} {FIX}",
        said(passes),
        said(fails),
    )


RULES = (
    _rule(
        "controller-not-ready",
        "error",
        "Kueue's controller is not running, or has not reconciled the latest ClusterQueues.",
        "A controller that is down or behind cannot take a Hold, release quota or show that "
        "the new release works; an upgrade then starts from an unknown state.",
        "Every ClusterQueue's Active condition was written for its current generation.",
        "team-a-cq's spec changed a minute ago and its conditions still describe the old one.",
    ),
    _rule(
        "webhook-down",
        "error",
        "A Kueue admission webhook does not answer: a server-side dry-run create failed.",
        "Kueue's webhooks fail closed: while one does not answer, nothing of its kind can be "
        "created or changed, including the Hold an upgrade starts with.",
        "A dry-run create of a ClusterQueue, ResourceFlavor, Cohort and Workload goes through.",
        "Kueue is stopped: creating a ClusterQueue fails calling vclusterqueue.kb.io.",
    ),
    _rule(
        "conversion-failing",
        "error",
        "The CRD conversion webhook does not answer: stored objects cannot be read in every "
        "served version.",
        "Clients read Kueue's objects in any version it serves; when conversion fails, reading "
        "in a non-storage version fails, and so will the upgrade's storage migration.",
        "Every ClusterQueue, LocalQueue and Workload reads back in v1beta1 and v1beta2.",
        "LIST clusterqueues in v1beta1 fails: conversion webhook for kueue.x-k8s.io/v1beta2 "
        "failed.",
    ),
    _rule(
        "stored-version-unserved",
        "error",
        "A version in a Kueue CRD's status.storedVersions is not served by the target release.",
        "etcd may hold objects in every stored version. A release whose CRDs do not serve one "
        "of them cannot read those objects: the API server refuses such a CRD, and a "
        "controller rolled back to it strands every queue. Migrate the objects to a version "
        "the target serves and drop the old one from status.storedVersions first.",
        "Rolling v0.9.1 forward: v0.17.0 serves v1beta1, the version stored.",
        "Rolling v0.17.0 back to v0.9.1: v1beta2 is stored and v0.9.1 serves v1beta1 only.",
    ),
    _rule(
        "stored-objects-to-migrate",
        "warning",
        "Objects stored in a version the target deprecates or does not store in.",
        "They keep working, but stay in the old version in etcd until rewritten; the old "
        "version can only be removed from the CRDs after a storage migration.",
        "Every ClusterQueue is stored in the target's storage version.",
        "4 ClusterQueues are stored as v1beta1; v0.17.0 stores v1beta2.",
    ),
    _rule(
        "repo-version-unserved",
        "error",
        "A manifest of the cluster is written in an apiVersion the target release does not serve.",
        "After the change Argo CD cannot sync it: rewrite it in a version the target serves "
        "in the same pull request as the upgrade.",
        "The legacy cluster's ClusterQueues are v1beta1, which v0.17.0 still serves.",
        "gpu-prod's ClusterQueues are v1beta2; v0.9.1 serves v1beta1 only.",
    ),
    _rule(
        "repo-version-deprecated",
        "warning",
        "A manifest of the cluster uses an apiVersion the target release deprecates.",
        "It still syncs, but the next release may drop it: rewrite it for the target's "
        "storage version (its fields too, not only the apiVersion).",
        "The cluster's manifests are written in the target's storage version.",
        "clusterqueues.yaml writes kueue.x-k8s.io/v1beta1; v0.17.0 deprecates it for v1beta2.",
    ),
    _rule(
        "repo-invalid",
        "error",
        "A manifest of the cluster does not validate against the target release's schemas.",
        "A field the target does not know is dropped or refused after the change.",
        "Every ClusterQueue validates against the target's CRD schema.",
        "A v1beta1 ClusterQueue uses a field v0.9.1 does not have.",
    ),
    _rule(
        "running-without-recovery",
        "error",
        "A rollback would disturb admitted Workloads that have no recovery evidence.",
        "A rollback restarts the controller on an older release; admitted Jobs may be "
        "evicted. Each needs a checkpoint reference on its Job (annotation "
        "kueue-gitops.io/checkpoint) or its tenant's checkpointing evidence in its profile, "
        "or it must be finished or held first.",
        "Every admitted Workload's Job names its checkpoint.",
        "team-a/train-7 is admitted, carries no checkpoint and team-a has no evidence.",
    ),
)
