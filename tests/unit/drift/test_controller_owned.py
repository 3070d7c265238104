"""Drift on a MultiKueue manager whose quota Kueue writes (quota automation, Kueue v0.19.2):
the difference is Kueue's field manager's, accepted, never counted; anything else still drift."""

from __future__ import annotations

import copy
import typing as t

from auditor import rules
from auditor.drift import engine, reading
from auditor.model import Report
from auditor.repo import manifests
from auditor.repo.profiles import ClusterProfile
from tests.unit.conftest import cluster_profile

FILE = "clusters/gpu-staging/kueue/manager-config.yaml"
AUTOMATED = rules.get("multikueue-quota-unsupported").passes.text  # gate on, Automated, 1 flavor


def profile(version: str) -> ClusterProfile:
    return cluster_profile(kueue_version=version)


def summed(body: dict[str, t.Any], manager: str, **spec: t.Any) -> dict[str, t.Any]:
    """The queue as Kueue's automation leaves it: cpu the workers' sum, written by `manager`."""
    live = copy.deepcopy(body)
    live["spec"].update(spec)
    resources = live["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    resources[0]["nominalQuota"] = "640"
    live["metadata"]["managedFields"] = [
        {
            "manager": manager,
            "operation": "Update",
            "time": "2026-12-02T10:00:00Z",
            "fieldsV1": {"f:spec": {"f:resourceGroups": {}}},
        }
    ]
    return live


def audit(text: str, version: str, **spec: t.Any) -> Report:
    desired, problems = manifests.load_text(text, FILE)
    assert problems == []
    for r in desired:
        r.cluster = "gpu-staging"
    queue = next(r for r in desired if r.kind == "ClusterQueue")
    live = reading.Live()
    live.read = {k for _, k in reading.kinds_to_read(profile(version), desired)}
    for r in desired:
        live.objects[r.key] = summed(r.body, "kueue", **spec) if r is queue else r.body
    found = engine.compare_cluster(engine.RepoSide(profile(version), desired), live)
    return Report("drift", found)


def test_kueues_sum_is_its_own_field_accepted_and_not_counted() -> None:
    report = audit(AUTOMATED, "v0.19.2")
    [finding] = report.findings
    assert finding.rule.id == "drift-controller-owned"
    assert finding.extra["changedBy"]["manager"] == "kueue"
    assert "field manager kueue: not drift to heal" in finding.message
    assert finding.suppressed is not None
    line = AUTOMATED.splitlines().index("  quotaManagement: Automated") + 1
    assert finding.suppressed.source == f"{FILE}:{line}"
    assert report.exit_code == 0 and Report("drift", report.findings, strict=True).exit_code == 0


def test_the_same_difference_is_drift_where_the_quota_is_the_repositorys() -> None:
    manual = AUTOMATED.replace("quotaManagement: Automated", "quotaManagement: Manual")
    gate_off = AUTOMATED.replace("QuotaAutomation: true", "QuotaAutomation: false")
    cases = [(manual, "v0.19.2"), (gate_off, "v0.19.2"), (AUTOMATED, "v0.17.0")]  # v0.17: none
    for text, version in cases:
        report = audit(text, version)
        assert [f.rule.id for f in report.findings] == ["drift-quota"]
        assert report.exit_code == 1


def test_kueue_owns_the_quota_and_nothing_else_of_the_queue() -> None:
    report = audit(AUTOMATED, "v0.19.2", cohortName="elsewhere")
    assert sorted(f.rule.id for f in report.findings) == ["drift-cohort", "drift-controller-owned"]
    assert report.exit_code == 1
