"""Kueue's meaning, without I/O: quota cells, cohort trees, Workload states, API versions."""

from __future__ import annotations

from auditor.k8s.objects import KUEUE_GROUP

__all__ = ["KUEUE_GROUP"]
