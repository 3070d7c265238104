"""kueue-gitops: validate, audit and operate a GitOps repository of Kueue quota."""

from __future__ import annotations

from auditor.errors import AuditorError, ClusterAccessError, ConfigError, ManifestError
from auditor.k8s.objects import ResourceKey
from auditor.model import Finding, Report, Resource, Severity

__all__ = [
    "AuditorError",
    "ClusterAccessError",
    "ConfigError",
    "Finding",
    "ManifestError",
    "Report",
    "Resource",
    "ResourceKey",
    "Severity",
]
