"""Every metric the alert rules read exists, with the labels they match on, where it comes from.

A renamed metric or label must break a test, not an on-call night. The sources:
- the API server's admission-webhook metrics: scraped from the sandbox's real kube-apiserver
  after it failed to call a webhook named like Kueue's;
- Kueue's metrics: scraped from the real Kueue controller of a sandbox after it admitted, held
  back and evicted work; the few that need a preemption are checked against their declaration
  in pkg/metrics/metrics.go of the pinned sigs.k8s.io/kueue module;
- kube_kueue_*: the kube-state-metrics config shipped next to the rules in alerts.yaml;
- kueue_gitops_*: what `auditor.report.metrics` writes, parsed back.
"""

from __future__ import annotations

import json
import os
import re
import ssl
import subprocess
import time
import typing as t
import urllib.request
from pathlib import Path

import pytest
import yaml

from auditor.errors import ClusterAccessError
from auditor.kueue import CONTROLLER, NAMESPACE
from auditor.live.apply import apply_all
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain
from auditor.sandbox.services import free_port
from tests.conftest import ROOT
from tests.estate import ESTATE
from tests.integration.conftest import repo_kueue_config, repo_kueue_release
from tests.integration.metric_names import (
    AGGREGATED,
    LABEL_LISTS,
    MATCHER,
    NOT_METRICS,
    SELECTOR,
    Used,
    exported,
)


def used_metrics(cluster: str) -> Used:
    """Metric names the cluster's rules read (not the ones they record), with matched labels."""
    resources = Repository.open(ESTATE).load([cluster]).for_cluster(cluster)
    rules = [
        rule
        for r in resources
        if r.kind == "PrometheusRule"
        for group in r.body["spec"]["groups"]
        for rule in group["rules"]
    ]
    recorded = {rule["record"] for rule in rules if "record" in rule}
    used: Used = {}
    for rule in rules:
        expr = re.sub(r'"[^"]*"', '""', rule["expr"])  # no names inside label values
        for labels, name in AGGREGATED.findall(expr):
            if name not in NOT_METRICS and name not in recorded:
                used.setdefault(name, set()).update(re.findall(r"\w+", labels))
        expr = LABEL_LISTS.sub(" ", expr)  # by (...), on (...): label names, not metrics
        for name, braces in SELECTOR.findall(expr):
            if name in NOT_METRICS or name in recorded:
                continue
            labels = set(MATCHER.findall(braces.replace('""', '"x"'))) if braces else set()
            used.setdefault(name, set()).update(labels)
    return used


def of_source(used: Used, prefix: str) -> Used:
    return {name: labels for name, labels in used.items() if name.startswith(prefix)}


@pytest.fixture(scope="module")
def used() -> Used:
    return used_metrics("gpu-prod")


def test_the_rules_read_metrics_from_the_four_sources_only(used: Used) -> None:
    prefixes = ("apiserver_admission_webhook_", "kueue_gitops_", "kube_kueue_", "kueue_")
    assert [name for name in used if not name.startswith(prefixes)] == []
    assert "kueue_cluster_queue_status" in used
    assert used["kueue_cluster_queue_status"] == {"cluster_queue", "status"}


def kueue_declared() -> Used:
    """Kueue's metric names and labels, read from the pinned module's pkg/metrics/metrics.go."""
    info = subprocess.run(
        ["go", "mod", "download", "-json", "sigs.k8s.io/kueue"],
        cwd=ROOT / "testenv",
        capture_output=True,
        text=True,
        check=True,
    )
    source = (Path(json.loads(info.stdout)["Dir"]) / "pkg/metrics/metrics.go").read_text()
    declared: Used = {}
    block = re.compile(
        r"Subsystem:\s*constants\.KueueName,\s*Name:\s*\"(\w+)\".*?\[\]string\{([^}]*)\}", re.S
    )
    for name, labels in block.findall(source):
        names = set(re.findall(r"\"(\w+)\"", labels))
        for suffix in ("", "_bucket", "_sum", "_count"):  # a histogram's series
            declared[f"kueue_{name}{suffix}"] = names | ({"le"} if suffix == "_bucket" else set())
    return declared


def test_kueue_metrics_and_labels_are_declared_by_the_pinned_kueue(used: Used) -> None:
    declared = kueue_declared()
    assert "kueue_admission_wait_time_seconds_bucket" in declared  # the parser found them
    wanted = {
        name: labels
        for name, labels in of_source(used, "kueue_").items()
        if not name.startswith("kueue_gitops_")
    }
    missing = {name: labels - declared.get(name, set()) for name, labels in wanted.items()}
    assert {
        name: labels for name, labels in missing.items() if name not in declared or labels
    } == {}


def test_kube_state_metrics_names_and_labels_come_from_the_shipped_config(used: Used) -> None:
    resources = Repository.open(ESTATE).load(["gpu-prod"]).for_cluster("gpu-prod")
    [config_map] = [
        r for r in resources if r.kind == "ConfigMap" and r.namespace == "kueue-monitoring"
    ]
    config = yaml.safe_load(config_map.body["data"]["kueue-custom-resource-state.yaml"])
    produced: Used = {}
    for resource in config["spec"]["resources"]:
        base = set(resource.get("labelsFromPath", {})) | {
            "customresource_group",
            "customresource_kind",
            "customresource_version",
        }
        for metric in resource["metrics"]:
            each = metric["each"]
            own = each.get(each["type"].lower(), {}).get("labelsFromPath", {})
            produced[f"{resource['metricNamePrefix']}_{metric['name']}"] = base | set(own)
    wanted = of_source(used, "kube_kueue_")
    assert wanted, "the rules read no kube_kueue_ metric"
    missing = {n: ls - produced.get(n, {"<metric>"}) for n, ls in wanted.items()}
    assert {n: ls for n, ls in missing.items() if ls} == {}


def test_the_auditors_own_metrics_are_what_export_writes(used: Used, tmp_path: Path) -> None:
    written = exported(tmp_path)
    wanted = of_source(used, "kueue_gitops_")
    missing = {n: ls - written.get(n, {"<metric>"}) for n, ls in wanted.items()}
    assert {n: ls for n, ls in missing.items() if ls} == {}


def _webhook(name: str, resource: str, policy: str, port: int) -> dict[str, t.Any]:
    return {
        "name": name,
        "clientConfig": {"url": f"https://127.0.0.1:{port}/{name}"},
        "rules": [
            {
                "apiGroups": ["kueue.x-k8s.io"],
                "apiVersions": ["v1beta2"],
                "operations": ["CREATE"],
                "resources": [resource],
            }
        ],
        "failurePolicy": policy,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 2,
    }


def test_webhook_metrics_and_labels_are_what_the_real_api_server_exposes(
    used: Used, fresh_sandbox: Sandbox
) -> None:
    admin = fresh_sandbox.connect()
    port = free_port()  # nothing listens: every call fails, as when Kueue is down
    admin.apply(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "kueue-webhook-probe"},
            "webhooks": [
                _webhook("vclusterqueue.kb.io", "clusterqueues", "Fail", port),
                _webhook("vcohort.kb.io", "cohorts", "Ignore", port),
            ],
        },
        manager="test",
    )
    cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "spec": {}}
    deadline = time.monotonic() + 30
    for attempt in range(1000):  # until the API server has picked the webhooks up
        body = {**cq, "metadata": {"name": f"probe-{attempt}"}}
        try:
            admin.apply(body, manager="test")
        except ClusterAccessError as exc:
            assert "failed calling webhook" in str(exc)
            break
        assert time.monotonic() < deadline, "the webhook never took effect"
        time.sleep(0.2)
    admin.apply(
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": "open"}},
        manager="test",
    )  # failurePolicy Ignore: admitted, counted as failing open
    text = admin.request("GET", "/metrics", decode=False).decode()
    # Read the exposition lines as they are: the Python parser renames counters to *_total.
    exposed: dict[str, list[dict[str, str]]] = {}
    for name, labels in re.findall(r"^(apiserver_admission_webhook_\w+)\{([^}]*)\}", text, re.M):
        exposed.setdefault(name, []).append(dict(re.findall(r'(\w+)="([^"]*)"', labels)))
    wanted = of_source(used, "apiserver_admission_webhook_")
    assert set(wanted) == {
        "apiserver_admission_webhook_rejection_count",
        "apiserver_admission_webhook_request_total",
        "apiserver_admission_webhook_fail_open_count",
    }
    for name, labels in wanted.items():
        assert name in exposed, f"{name} not exposed by kube-apiserver"
        assert any(labels <= set(s) for s in exposed[name]), (name, labels, exposed[name])
    assert any(
        s["name"] == "vclusterqueue.kb.io" and s["error_type"] == "calling_webhook_error"
        for s in exposed["apiserver_admission_webhook_rejection_count"]
    )
    assert any(
        s["name"] == "vcohort.kb.io" for s in exposed["apiserver_admission_webhook_fail_open_count"]
    )


# -- the real Kueue controller ----------------------------------------------------------------

KUEUE = "kueue.x-k8s.io/v1beta2"
RBAC = "rbac.authorization.k8s.io/v1"
Exposed = dict[str, list[dict[str, str]]]


def exposition(text: str, prefix: str) -> Exposed:
    """Samples as {name: [labels...]}, read from the lines as they are (the Python parser
    renames counters without `_total`)."""
    out: Exposed = {}
    for name, labels in re.findall(rf"^({prefix}\w*)(?:\{{([^}}]*)\}})? ", text, re.M):
        out.setdefault(name, []).append(dict(re.findall(r'(\w+)="([^"]*)"', labels)))
    return out


def _job(name: str, cpu: str) -> dict[str, t.Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": "team-a",
            "labels": {"kueue.x-k8s.io/queue-name": "batch"},
        },
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
                    ],
                }
            },
        },
    }


class Scraper:
    """Reads Kueue's /metrics as Prometheus does: HTTPS with a ServiceAccount's bearer token,
    which Kueue checks with a TokenReview and a SubjectAccessReview against the API server."""

    def __init__(self, box: Sandbox) -> None:
        admin = box.connect()
        config = yaml.safe_load((box.dir / "kueue" / "config.yaml").read_text())
        self.url = f"https://{config['metrics']['bindAddress']}/metrics"
        for body in self._rbac():
            admin.apply(body, manager="test")
        request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}
        path = "/api/v1/namespaces/kueue-system/serviceaccounts/prometheus/token"
        self.token = admin.request("POST", path, body=request)["status"]["token"]

    @staticmethod
    def _rbac() -> list[dict[str, t.Any]]:
        def role(name: str, rule: dict[str, t.Any]) -> dict[str, t.Any]:
            return {
                "apiVersion": RBAC,
                "kind": "ClusterRole",
                "metadata": {"name": name},
                "rules": [rule],
            }

        def bind(name: str, subject: dict[str, str]) -> dict[str, t.Any]:
            ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}
            return {
                "apiVersion": RBAC,
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name},
                "roleRef": ref,
                "subjects": [subject],
            }

        scraper = {"kind": "ServiceAccount", "name": "prometheus", "namespace": "kueue-system"}
        # The identity the sandbox's Kueue runs as: upstream's ServiceAccount.
        kueue = {"kind": "ServiceAccount", "name": CONTROLLER, "namespace": NAMESPACE}
        return [
            {
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "prometheus", "namespace": "kueue-system"},
            },
            role("test-metrics-reader", {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}),
            bind("test-metrics-reader", scraper),
            # What upstream's metrics_auth_role grants Kueue: checking who scrapes.
            role(
                "test-kueue-metrics-auth",
                {
                    "apiGroups": ["authentication.k8s.io", "authorization.k8s.io"],
                    "resources": ["tokenreviews", "subjectaccessreviews"],
                    "verbs": ["create"],
                },
            ),
            bind("test-kueue-metrics-auth", kueue),
        ]

    def scrape(self) -> str:
        tls = ssl.create_default_context()
        tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE  # Kueue's self-signed cert
        request = urllib.request.Request(
            self.url, headers={"Authorization": f"Bearer {self.token}"}
        )
        with urllib.request.urlopen(request, context=tls, timeout=10) as resp:
            return t.cast(bytes, resp.read()).decode()

    def until(self, ready: t.Callable[[Exposed], bool], what: str, timeout: float = 90) -> Exposed:
        deadline = time.monotonic() + timeout
        while True:
            exposed = exposition(self.scrape(), "kueue_")
            if ready(exposed):
                return exposed
            assert time.monotonic() < deadline, f"Kueue's /metrics never showed {what}"
            time.sleep(1)


def has(exposed: Exposed, metric: str, /, **labels: str) -> bool:
    return any(labels.items() <= s.items() for s in exposed.get(metric, []))


@pytest.fixture(scope="module")
def kueue_box(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[Sandbox]:
    """A Kueue sandbox of this module's own (it stops a queue), synced from gpu-staging."""
    box = Sandbox(f"metrics-{os.getpid()}", root=sandboxes_dir)
    try:
        box.up(
            toolchain,
            with_kueue=True,
            kueue_config=repo_kueue_config("gpu-staging"),
            kueue_release=repo_kueue_release(toolchain, "gpu-staging"),
        )
    except Exception as exc:
        pytest.fail(f"the Kueue sandbox could not start: {exc}", pytrace=False)
    try:
        resources = Repository.open(ESTATE).load(["gpu-staging"]).for_cluster("gpu-staging")
        assert [r.error for r in apply_all(box.connect(), resources) if r.error] == []
        yield box
    finally:
        box.down()


def test_kueue_metrics_and_labels_are_what_the_real_controller_exposes(
    used: Used, kueue_box: Sandbox
) -> None:
    admin = kueue_box.connect()
    scraper = Scraper(kueue_box)
    admin.create(_job("fits", "1"))
    admin.create(_job("too-big", "100000"))  # more CPU than any flavor and the cohort hold
    admitted = scraper.until(
        lambda e: (
            has(e, "kueue_admitted_active_workloads", cluster_queue="team-a-cq")
            and has(e, "kueue_admission_wait_time_seconds_bucket", cluster_queue="team-a-cq")
            and has(e, "kueue_pending_workloads", cluster_queue="team-a-cq", status="inadmissible")
        ),
        "an admission and an inadmissible workload",
    )
    # Hold and drain the LocalQueue: the admitted workload is evicted, as a runbook hold does.
    admin.patch(
        KUEUE,
        "LocalQueue",
        "batch",
        {"spec": {"stopPolicy": "HoldAndDrain"}},
        namespace="team-a",
        manager="test",
    )
    evicted = scraper.until(
        lambda e: (
            has(e, "kueue_evicted_workloads_total", reason="LocalQueueStopped")
            and has(e, "kueue_local_queue_evicted_workloads_total", reason="LocalQueueStopped")
            and has(e, "kueue_local_queue_status", name="batch", active="False")
        ),
        "the eviction of a held LocalQueue",
    )
    # Kueue drops a LocalQueue's series once it stops, so both scrapes count.
    exposed = {n: admitted.get(n, []) + evicted.get(n, []) for n in {*admitted, *evicted}}
    wanted = {n: ls for n, ls in of_source(used, "kueue_").items() if not n.startswith("kueue_g")}
    # Only a preemption moves this counter; its declaration is checked above.
    assert set(wanted) - set(exposed) == {"kueue_preempted_workloads_total"}
    for name in set(wanted) & set(exposed):
        assert any(wanted[name] <= set(s) for s in exposed[name]), (name, wanted[name])
    assert has(exposed, "kueue_cluster_queue_status", cluster_queue="team-a-cq", status="active")
    assert has(
        exposed,
        "kueue_cluster_queue_nominal_quota",
        cluster_queue="team-a-cq",
        flavor="cpu-only",
        resource="cpu",
    )
