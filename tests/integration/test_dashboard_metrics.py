"""Every metric the Grafana dashboard (deploy/grafana/kueue-gitops.json) queries exists, with the
labels it matches and aggregates on, in every Kueue release the repository supports and in what
the auditor writes; as the alert rules are checked (test_alert_metrics.py, whose PromQL reading
this reuses). Kueue's names and labels are read from pkg/metrics/metrics.go of each release's
pinned sigs.k8s.io/kueue module (testenv/, testenv/kueue-v0.19.2/, testenv/kueue-v0.9.1/)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from auditor.sandbox.build import TOOLS, ensure_tool
from tests.conftest import ROOT
from tests.integration.metric_names import (
    AGGREGATED,
    LABEL_LISTS,
    MATCHER,
    NOT_METRICS,
    SELECTOR,
    Used,
    exported,
)

DASHBOARD = ROOT / "deploy/grafana/kueue-gitops.json"


def _modules() -> list[Path]:
    """The module folders that pin a Kueue release."""
    return sorted(
        p.parent
        for p in (ROOT / "testenv").rglob("go.mod")
        if re.search(r"^\s*(?:require\s+)?sigs\.k8s\.io/kueue v", p.read_text(), re.M)
    )


def queries() -> list[str]:
    doc = json.loads(DASHBOARD.read_text())
    return [target["expr"] for p in doc["panels"] for target in p.get("targets", [])]


def used() -> Used:
    """Metric names the dashboard reads, with the labels it matches or aggregates on."""
    found: Used = {}
    for raw in queries():
        expr = re.sub(r'"[^"]*"', '""', raw)  # no names inside label values
        expr = re.sub(r"\[[^\]]*\]", "", expr)  # [$__rate_interval]: a range, not a name
        for labels, name in AGGREGATED.findall(expr):
            if name not in NOT_METRICS:
                found.setdefault(name, set()).update(re.findall(r"\w+", labels))
        expr = LABEL_LISTS.sub(" ", expr)
        for name, braces in SELECTOR.findall(expr):
            if name in NOT_METRICS:
                continue
            labels = set(MATCHER.findall(braces.replace('""', '"x"'))) if braces else set()
            found.setdefault(name, set()).update(labels)
    return found


def declared(module: Path) -> tuple[str, Used]:
    """The release a module pins, and its metric names and labels."""
    info = subprocess.run(
        ["go", "mod", "download", "-json", "sigs.k8s.io/kueue"],
        cwd=module,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    got = json.loads(info.stdout)
    source = (Path(got["Dir"]) / "pkg/metrics/metrics.go").read_text()
    out: Used = {}
    block = re.compile(
        r"Subsystem:\s*constants\.KueueName,\s*Name:\s*\"(\w+)\".*?\[\]string\{([^}]*)\}", re.S
    )
    for name, labels in block.findall(source):
        names = set(re.findall(r"\"(\w+)\"", labels))
        for suffix in ("", "_bucket", "_sum", "_count"):
            out[f"kueue_{name}{suffix}"] = names | ({"le"} if suffix == "_bucket" else set())
    return str(got["Version"]), out


def test_the_dashboard_reads_kueues_metrics_and_ours_only() -> None:
    found = used()
    assert set(found) >= {
        "kueue_gitops_findings",
        "kueue_cluster_queue_resource_reservation",
        "kueue_cluster_queue_nominal_quota",
        "kueue_pending_workloads",
        "kueue_admission_wait_time_seconds_bucket",
    }
    assert [n for n in found if not n.startswith("kueue_")] == []
    assert found["kueue_admission_wait_time_seconds_bucket"] >= {"le", "cluster_queue"}
    # the releases the cluster profiles name: gpu-prod, gpu-staging, gpu-legacy
    assert {m.name for m in _modules()} == {"testenv", "kueue-v0.19.2", "kueue-v0.9.1"}


@pytest.mark.parametrize("module", _modules(), ids=lambda p: p.name)
def test_every_kueue_metric_and_label_is_declared_by_each_supported_release(module: Path) -> None:
    release, names = declared(module)
    assert "kueue_admission_wait_time_seconds_bucket" in names, release  # the parser read it
    wanted = {n: ls for n, ls in used().items() if not n.startswith("kueue_gitops_")}
    missing = {n: ls - names.get(n, {"<metric>"}) for n, ls in wanted.items()}
    assert {n: ls for n, ls in missing.items() if ls} == {}, release


def test_the_auditors_metrics_are_what_a_run_writes(tmp_path: Path) -> None:
    written = exported(tmp_path)
    wanted = {n: ls for n, ls in used().items() if n.startswith("kueue_gitops_")}
    assert wanted
    missing = {n: ls - written.get(n, {"<metric>"}) for n, ls in wanted.items()}
    assert {n: ls for n, ls in missing.items() if ls} == {}


def test_the_dashboard_is_provisioned_from_its_folder_and_uses_its_datasource_variable() -> None:
    doc = json.loads(DASHBOARD.read_text())
    assert doc["uid"] == "kueue-gitops" and doc["schemaVersion"] >= 39
    ids = [p["id"] for p in doc["panels"]]
    assert len(ids) == len(set(ids))
    for p in doc["panels"]:
        for target in p.get("targets", []):
            assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
    provider = yaml.safe_load((DASHBOARD.parent / "provisioning.yaml").read_text())
    assert provider["providers"][0]["type"] == "file"


@pytest.fixture(scope="module")
def promtool() -> Path:
    return ensure_tool(ROOT / "testenv", "promtool", TOOLS["promtool"], log=print)


def run(promtool: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(promtool), *map(str, args)], capture_output=True, text=True, timeout=300, check=False
    )


def test_promtool_parses_every_query(promtool: Path, tmp_path: Path) -> None:
    # Grafana's variables as a user's choice would fill them: any queue, a five-minute rate
    filled = [
        q.replace("$__rate_interval", "5m").replace("$cluster_queue", ".*") for q in queries()
    ]
    rules = [{"record": f"dashboard:query_{i}", "expr": q} for i, q in enumerate(filled)]
    path = tmp_path / "dashboard.rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    checked = run(promtool, "check", "rules", path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(rules)} rules found" in checked.stdout
    broken = tmp_path / "broken.rules.yaml"  # the check can fail
    broken.write_text(yaml.safe_dump({"groups": [{"name": "x", "rules": [
        {"record": "dashboard:broken", "expr": "sum by (cluster_queue (kueue_pending_workloads)"}
    ]}]}))  # fmt: skip
    assert run(promtool, "check", "rules", broken).returncode != 0
