"""Drift reports and the metric samples expected of them."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from auditor import rules
from auditor.model import ClusterResult, Finding, Report

NOW = 1_790_000_000.0


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample as {(name, sorted labels): value}, parsed by prometheus_client's parser."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def drift_report(*, prod_ok: bool = True) -> Report:
    def finding(cluster: str, rule: str) -> Finding:
        return Finding(rules.get(rule), "m", cluster=cluster)

    return Report(
        "drift",
        findings=[
            finding("gpu-prod", "drift-quota"),
            finding("gpu-prod", "drift-quota"),
            finding("gpu-prod", "preemption-evidence-expiring"),  # a warning
            finding("gpu-staging", "drift-label"),
        ],
        clusters=[
            ClusterResult("gpu-prod", "ok" if prod_ok else "incomplete"),
            ClusterResult("gpu-staging"),
        ],
    )


def L(**labels: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))
