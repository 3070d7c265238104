"""Kueue's meaning, without I/O: quota cells, cohort trees, Workload states, API versions."""

from __future__ import annotations

from auditor.k8s.objects import KUEUE_GROUP

# Where upstream's install puts Kueue: its namespace, and the Deployment and ServiceAccount
# (one name) of its controller.
NAMESPACE = "kueue-system"
CONTROLLER = "kueue-controller-manager"

__all__ = ["CONTROLLER", "KUEUE_GROUP", "NAMESPACE"]
