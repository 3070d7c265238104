"""Policy rules about each cluster's alerts (check alert-coverage in auditor/validate/checks/)."""

from __future__ import annotations

from auditor.rules.rule import rule, yaml

EXTRA = "clusters/gpu-prod/alerts-extra.yaml"
PENDING = 'max by (cluster_queue) (kueue_pending_workloads{status="inadmissible"}) > 0'


def alerts(*fields: str, name: str = "extra") -> str:
    """A PrometheusRule with one rule of the given fields (`key: value` lines)."""
    head = "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule"
    lines = [
        f"metadata: {{name: {name}, namespace: kueue-monitoring}}",
        "spec:",
        "  groups:",
        f"    - name: {name}",
        "      rules:",
        f"        - {fields[0]}",
        *(f"          {field}" for field in fields[1:]),
    ]
    return "\n".join([head, *lines])


ALERT = "alert: KueueWorkloadsPendingForQuota"
EXPR = f"expr: '{PENDING}'"
RUNBOOK = 'annotations: {runbook_url: "https://example.org/runbook"}'
OK = yaml(EXTRA, alerts(ALERT, EXPR, "for: 20m", RUNBOOK))

RULES = (
    rule(
        "alert-missing",
        "error",
        "alerts",
        "policy",
        "A cluster lacks some of the required alerting or recording rules.",
        """Every cluster carries the alerts that tell flavor, quota, admission-check, webhook,
        stop-policy and drift failures apart, and the SLO recording rules; a cluster without
        one fails silently on exactly that failure. Copy the missing rules (the message names
        them) from another cluster's `alerts.yaml`.""",
        OK,
        yaml(
            "clusters/gpu-prod/alerts.yaml",
            alerts(ALERT, EXPR, "for: 20m", RUNBOOK, name="kueue"),
        ),
    ),
    rule(
        "alert-runbook-missing",
        "error",
        "alerts",
        "policy",
        "An alert has no runbook_url annotation.",
        """Whoever is paged needs the first step; every alert links its runbook.""",
        OK,
        yaml(EXTRA, alerts(ALERT, EXPR, "for: 20m")),
    ),
    rule(
        "alert-threshold-out-of-range",
        "error",
        "alerts",
        "policy",
        "An alert's `for` or threshold is outside the range its cluster profile allows.",
        """The cluster profile's `alerts` block bounds each alert's `for` and its numeric
        threshold (the first comparison with a number in its expression), so a pull request
        cannot quietly make an alert deaf. Bring the value into range, or change the range in
        the profile (a platform-owned file).""",
        OK,
        yaml(EXTRA, alerts(ALERT, EXPR, "for: 12h", RUNBOOK)),
    ),
    rule(
        "alert-other-cluster",
        "error",
        "alerts",
        "policy",
        'A rule selects `cluster="..."` of another cluster than the one it is synced to.',
        """Rules copied from another cluster's file keep watching that cluster's audit metrics,
        so this cluster's failures go unseen. Select the cluster the file is in.""",
        OK,
        yaml(
            EXTRA,
            alerts(
                "alert: KueueGitOpsDriftDetected",
                """expr: 'sum(kueue_gitops_findings{cluster="gpu-staging"}) > 0'""",
                RUNBOOK,
            ),
        ),
    ),
)
