"""Every alerting and recording rule of every cluster, run by the real Prometheus rule engine.

`promtool` is built from the pinned github.com/prometheus/prometheus module. The rule groups are
taken out of each cluster's PrometheusRule objects exactly as prometheus-operator hands them to
Prometheus, and the unit tests in tests/rules/ feed them input series.
"""

from __future__ import annotations

import subprocess
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.repo.layout import Repository
from auditor.sandbox.build import TOOLS, ensure_tool
from auditor.validate.checks import alert_coverage
from tests.conftest import ROOT
from tests.estate import ESTATE

RULE_TESTS = ROOT / "tests" / "rules"
CLUSTERS = sorted(Repository.open(ESTATE).clusters)


@pytest.fixture(scope="session")
def promtool() -> Path:
    try:
        return ensure_tool(ROOT / "testenv", "promtool", TOOLS["promtool"], log=print)
    except Exception as exc:
        pytest.fail(f"promtool could not be built: {exc}", pytrace=False)


def rule_groups(cluster: str) -> list[dict[str, t.Any]]:
    resources = Repository.open(ESTATE).load([cluster]).for_cluster(cluster)
    return [
        group
        for r in resources
        if r.kind == "PrometheusRule" and r.api_version == "monitoring.coreos.com/v1"
        for group in r.body["spec"]["groups"]
    ]


def rule_test_files() -> list[Path]:
    return sorted(RULE_TESTS.glob("*.yaml"))


def prepare(cluster: str, groups: list[dict[str, t.Any]], folder: Path) -> list[Path]:
    """Write the cluster's rule file, and each test file pointed at it, into `folder`."""
    rules = folder / f"{cluster}.rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    out = []
    for source in rule_test_files():
        spec = yaml.safe_load(source.read_text().replace("__CLUSTER__", cluster))
        spec["rule_files"] = [str(rules)]
        target = folder / f"{cluster}-{source.name}"
        target.write_text(yaml.safe_dump(spec, sort_keys=False))
        out.append(target)
    return out


def run(promtool: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(promtool), *map(str, args)], capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_promtool_checks_and_tests_every_rule(promtool: Path, tmp_path: Path, cluster: str) -> None:
    tests = prepare(cluster, rule_groups(cluster), tmp_path)
    checked = run(promtool, "check", "rules", tmp_path / f"{cluster}.rules.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    result = run(promtool, "test", "rules", *tests)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("SUCCESS") == len(tests), result.stdout


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_every_rule_has_a_unit_test(cluster: str) -> None:
    groups = rule_groups(cluster)
    alerts = {r["alert"] for g in groups for r in g["rules"] if "alert" in r}
    records = {r["record"] for g in groups for r in g["rules"] if "record" in r}
    assert alerts >= set(alert_coverage.ALERTS) and records >= set(alert_coverage.RECORDS)
    fired: set[str] = set()
    queried: set[str] = set()
    for source in rule_test_files():
        for group in yaml.safe_load(source.read_text())["tests"]:
            for case in group.get("alert_rule_test", []):
                if case["exp_alerts"]:  # a test that only expects silence proves nothing alone
                    fired.add(case["alertname"])
            queried.update(case["expr"] for case in group.get("promql_expr_test", []))
    assert alerts - fired == set(), "alerts never shown to fire in tests/rules/"
    assert records - queried == set(), "recording rules never queried in tests/rules/"


def break_rule(groups: list[dict[str, t.Any]], name: str, old: str, new: str) -> None:
    [rule] = [r for g in groups for r in g["rules"] if name in (r.get("alert"), r.get("record"))]
    assert old in rule["expr"]
    rule["expr"] = rule["expr"].replace(old, new)


@pytest.mark.parametrize(
    ("name", "old", "new", "complaint"),
    [
        # A syntax error: the rule file no longer loads.
        ("KueueWebhookRejecting", "> 0.25", "> > 0.25", "parse error"),
        # A renamed metric: valid PromQL that never fires, caught by the input series.
        (
            "KueueClusterQueueFlavorNotFound",
            "kueue_cluster_queue_status",
            "kueue_clusterqueue_status",
            "KueueClusterQueueFlavorNotFound",
        ),
        # A recording rule that aggregates away the queue.
        (
            "cluster_queue_reason:kueue_evicted_workloads:rate5m",
            "sum by (cluster_queue, reason)",
            "sum by (reason)",
            "cluster_queue_reason:kueue_evicted_workloads:rate5m",
        ),
    ],
    ids=["syntax", "renamed-metric", "lost-label"],
)
def test_a_broken_expression_fails_promtool(
    promtool: Path, tmp_path: Path, name: str, old: str, new: str, complaint: str
) -> None:
    groups = rule_groups(CLUSTERS[0])
    break_rule(groups, name, old, new)
    result = run(promtool, "test", "rules", *prepare(CLUSTERS[0], groups, tmp_path))
    assert result.returncode != 0
    assert complaint in result.stdout + result.stderr
