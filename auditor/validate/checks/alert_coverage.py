"""Every cluster carries the alert set, each alert has a runbook, thresholds stay in range.

The alert set tells flavor, quota, admission-check, webhook, stop-policy and drift failures
apart, and records the SLO signals (see the README's "Alerts and SLOs"). A cluster without one of
them fails silently on exactly that failure, so a missing rule is an error. The cluster profile's
`alerts` block bounds each alert's `for` and its numeric threshold (the first comparison with a
number in its expression), so a pull request cannot quietly make an alert deaf; and a rule that
selects `cluster="..."` must name its own cluster, not the one it was copied from. A rule that
reads the per-ClusterQueue quota gauges reads nothing unless Kueue's Configuration turns on
`metrics.enableClusterQueueResources`: the borrowing SLOs would stay silent.

Its rules, each with an example that passes and one that fails, are declared beside it in
alert_coverage.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import re
import typing as t

from auditor import rules
from auditor.k8s.objects import FieldPath
from auditor.kueue import config as kueue_config
from auditor.model import Finding, Resource
from auditor.repo import boundaries
from auditor.validate.checks import protocol
from auditor.validate.checks._common import kueue_configuration
from auditor.validate.checks._embedded import Embedded

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
ALERT_MISSING = RULES["alert-missing"]
ALERT_RUNBOOK_MISSING = RULES["alert-runbook-missing"]
ALERT_THRESHOLD_OUT_OF_RANGE = RULES["alert-threshold-out-of-range"]
ALERT_OTHER_CLUSTER = RULES["alert-other-cluster"]
ALERT_METRIC_NOT_EXPORTED = RULES["alert-metric-not-exported"]

ID = "alert-coverage"
RERUN = protocol.CLUSTER
GROUP = "monitoring.coreos.com"

ALERTS = (
    "KueueClusterQueueFlavorNotFound",
    "KueueClusterQueueAdmissionCheckMissing",
    "KueueWorkloadsPendingForQuota",
    "KueueAdmissionCheckFailing",
    "KueueAdmissionCheckStuck",
    "KueueWebhookUnavailable",
    "KueueWebhookRejecting",
    "KueueClusterQueueHeldTooLong",
    "KueueLocalQueueHeldTooLong",
    "KueueGitOpsDriftDetected",
    "KueueGitOpsAuditStale",
)
RECORDS = (
    "cluster_queue:kueue_admission_wait_time_seconds:histogram_quantile",
    "local_queue:kueue_local_queue_admission_wait_time_seconds:histogram_quantile",
    "cluster_queue_flavor_resource:kueue_borrowed_over_nominal:ratio",
    "local_queue_flavor_resource:kueue_borrowed_over_nominal:ratio",
    "cluster_queue_reason:kueue_evicted_workloads:rate5m",
    "local_queue_reason:kueue_local_queue_evicted_workloads:rate5m",
    "cluster_queue_reason:kueue_preempted_workloads:rate5m",
    "local_queue:kueue_local_queue_preempted_workloads:rate5m",
)

_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
_CLUSTER = re.compile(r'\bcluster\s*=\s*"([^"]*)"')
_METRIC = re.compile(r"\b(kueue_[a-z_]+)\b")
_THRESHOLD = re.compile(r"[<>]=?\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def seconds(duration: str) -> float | None:
    """A Prometheus duration (`1h30m`, `15m`, `500ms`) in seconds; None when it is not one."""
    parts = _DURATION.findall(duration)
    if not parts or "".join(n + u for n, u in parts) != duration:
        return None
    return sum(int(n) * _SECONDS[u] for n, u in parts)


def threshold(expr: str) -> float | None:
    found = _THRESHOLD.search(expr)
    return float(found[1]) if found else None


def prometheus_rules(resource: Resource) -> t.Iterator[tuple[dict[str, t.Any], FieldPath]]:
    """Each rule of a PrometheusRule, with its path in the object."""
    groups = (resource.body.get("spec") or {}).get("groups")
    for g, group in enumerate(groups if isinstance(groups, list) else []):
        group_rules = group.get("rules") if isinstance(group, dict) else None
        for r, rule in enumerate(group_rules if isinstance(group_rules, list) else []):
            if isinstance(rule, dict):
                yield rule, ("spec", "groups", g, "rules", r)


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    objects = [r for r in ctx.of_kind("PrometheusRule") if r.key.group == GROUP]
    seen: set[str] = set()
    gated: dict[str, set[str]] = {}  # rule -> the gated metrics it reads
    for resource in objects:
        for rule, path in prometheus_rules(resource):
            seen.add(str(rule.get("alert") or rule.get("record") or ""))
            read = set(_METRIC.findall(str(rule.get("expr", "")))) & kueue_config.RESOURCE_METRICS
            if read:
                gated[str(rule.get("alert") or rule.get("record"))] = read
            yield from _other_cluster(ctx, resource, rule, path)
            if "alert" in rule:
                yield from _judge(ctx, resource, rule, path)
    yield from _not_exported(ctx, gated)
    wanted = (*ALERTS, *sorted(set(ctx.cluster.alerts) - set(ALERTS)), *RECORDS)
    missing = [name for name in wanted if name not in seen]
    if missing and not ctx.unrendered:
        message = (
            f"cluster {ctx.cluster.name} lacks {len(missing)} of the required alerting and "
            f"recording rules: {', '.join(missing)}; "
            + (
                f"`kueue-gitops init --adopt --repo-url URL` writes them all as clusters/"
                f"{ctx.cluster.name}/alerts.yaml"
                if not objects
                else "add them beside the others (the alerts.yaml `kueue-gitops init --adopt "
                "--repo-url URL` writes for a cluster without alert rules holds every one)"
            )
        )
        if objects:
            yield Finding.about(
                objects[0],
                ALERT_MISSING,
                message,
            )
        else:
            yield Finding(ALERT_MISSING, message, file=ctx.cluster.file, line=1)


def _not_exported(ctx: CheckContext, gated: dict[str, set[str]]) -> t.Iterator[Finding]:
    """Rules reading the per-ClusterQueue gauges while Kueue is told not to export them."""
    config = kueue_configuration(ctx)
    if not gated or config is None:
        return  # no rule reads them, or kueue-config reports the Configuration
    if (config.get("metrics") or {}).get("enableClusterQueueResources") is True:
        return
    found = boundaries.config_map(ctx.of_kind("ConfigMap"))
    assert found is not None  # the Configuration came from it
    embedded = Embedded(ctx, found, ALERT_METRIC_NOT_EXPORTED)
    embedded.parse()
    metrics = sorted(set().union(*gated.values()))
    yield embedded.finding(
        f"metrics.enableClusterQueueResources is not true, so Kueue exports none of "
        f"{', '.join(metrics)}, which {len(gated)} rule(s) of alerts.yaml read "
        f"({', '.join(sorted(gated))}): they would never fire or record; set "
        "metrics.enableClusterQueueResources: true",
        ("metrics", "enableClusterQueueResources")
        if "enableClusterQueueResources" in (config.get("metrics") or {})
        else ("metrics",),
        rule=ALERT_METRIC_NOT_EXPORTED,
    )


def _other_cluster(
    ctx: CheckContext, resource: Resource, rule: dict[str, t.Any], path: FieldPath
) -> t.Iterator[Finding]:
    """A rule copied from another cluster's file still watches that cluster's audit metrics."""
    others = sorted(set(_CLUSTER.findall(str(rule.get("expr", "")))) - {ctx.cluster.name})
    if others:
        name = rule.get("alert") or rule.get("record")
        yield Finding.about(
            resource,
            ALERT_OTHER_CLUSTER,
            f"rule {name} selects cluster={others[0]!r} but is synced to {ctx.cluster.name}; "
            f'select cluster="{ctx.cluster.name}"',
            path=[*path, "expr"],
        )


def _judge(
    ctx: CheckContext, resource: Resource, rule: dict[str, t.Any], path: FieldPath
) -> t.Iterator[Finding]:
    name = str(rule["alert"])
    if not (rule.get("annotations") or {}).get("runbook_url"):
        yield Finding.about(
            resource,
            ALERT_RUNBOOK_MISSING,
            f"alert {name} has no runbook_url annotation; on-call needs the first step",
            path=[*path, "alert"],
        )
    ranges = ctx.cluster.alerts.get(name, {})
    if "for" in ranges:
        given = str(rule.get("for", "0s"))
        yield from _in_range(
            resource, name, "for", given, seconds(given), ranges["for"], seconds, [*path, "for"]
        )
    if "threshold" in ranges:
        expr = str(rule.get("expr", ""))
        value = threshold(expr)
        shown = "no numeric comparison" if value is None else f"{value:g}"
        yield from _in_range(
            resource, name, "threshold", shown, value, ranges["threshold"], float, [*path, "expr"]
        )


def _in_range(
    resource: Resource,
    name: str,
    what: str,
    shown: str,
    value: float | None,
    bounds: dict[str, t.Any],
    parse: t.Callable[[t.Any], float | None],
    path: list[str | int],
) -> t.Iterator[Finding]:
    low, high = (parse(bounds[k]) if k in bounds else None for k in ("min", "max"))
    if value is None or (low is not None and value < low) or (high is not None and value > high):
        allowed = f"{bounds.get('min', '-inf')} to {bounds.get('max', 'inf')}"
        yield Finding.about(
            resource,
            ALERT_THRESHOLD_OUT_OF_RANGE,
            f"alert {name} has {what} {shown}, outside {allowed} that the cluster profile "
            "allows; bring it back into range or change the range in the profile",
            path=path,
        )
