"""Check multikueue: a MultiKueue manager on gpu-staging (Kueue v0.19.2, which has manager quota
automation) dispatching to gpu-prod (v0.17.0), its quota automation, and the workers' mirror."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from auditor import rules
from tests.estate import ESTATE
from tests.unit.validate.checks.helpers import assert_findings, edit, line_of, run_check, write

MIRRORED = rules.get("multikueue-worker-mirror").passes  # team-a-cq dispatching to gpu-prod
AUTOMATED = rules.get("multikueue-quota-unsupported").passes  # gate on, Automated, one flavor
QUEUES = "clusters/gpu-staging/clusterqueues.yaml"
CONFIG = "clusters/gpu-staging/kueue/manager-config.yaml"


def test_the_repository_declares_no_multikueue_and_passes(repo_copy: Path) -> None:
    for cluster in ("gpu-prod", "gpu-staging", "gpu-legacy"):
        assert run_check(repo_copy, "multikueue", cluster) == [], cluster


def test_automated_quota_asks_for_nothing_where_the_gate_is_off_or_the_release_lacks_it(
    repo_copy: Path,
) -> None:
    write(repo_copy, CONFIG, AUTOMATED.text)
    assert run_check(repo_copy, "multikueue", "gpu-staging") == []
    edit(repo_copy, CONFIG, "QuotaAutomation: true", "QuotaAutomation: false")
    [off] = run_check(repo_copy, "multikueue", "gpu-staging")
    assert off.rule.id == "multikueue-quota-automation-off"
    assert off.line == line_of(repo_copy, CONFIG, "quotaManagement: Automated")
    assert "Kueue v0.19.2's MultiKueueManagerQuotaAutomation gate is off" in off.message
    assert "the quota of remote-cq as the repository writes it" in off.message
    # gpu-prod runs v0.17.0, whose MultiKueueConfig has no quotaManagement at all.
    shutil.copy(repo_copy / CONFIG, repo_copy / "clusters/gpu-prod/kueue/manager-config.yaml")
    [old] = run_check(repo_copy, "multikueue", "gpu-prod")
    assert "Kueue v0.17.0 has no manager quota automation (it came in v0.18)" in old.message


def test_what_the_repository_may_not_set_where_kueue_writes_the_quota(repo_copy: Path) -> None:
    write(repo_copy, CONFIG, AUTOMATED.text)
    edit(
        repo_copy,
        CONFIG,
        '{name: cpu, nominalQuota: "0"}',
        '{name: cpu, nominalQuota: "0", lendingLimit: "2"}',
    )
    [owned] = run_check(repo_copy, "multikueue", "gpu-staging")
    assert (owned.rule.id, owned.line) == (
        "multikueue-quota-owned",
        line_of(repo_copy, CONFIG, "lendingLimit"),
    )
    assert "the lendingLimit is dropped at every sum" in owned.message
    assert "may set coveredResources" in owned.message


def test_workers_mirror_the_managers_queues(repo_copy: Path) -> None:
    write(repo_copy, QUEUES, MIRRORED.text)
    assert run_check(repo_copy, "multikueue", "gpu-staging") == []
    prod_queue = "tenants/team-a/gpu-prod/localqueues.yaml"
    staging_queue = "tenants/team-a/gpu-staging/localqueues.yaml"
    edit(repo_copy, prod_queue, "clusterQueue: team-a-cq", "clusterQueue: team-b-cq")
    [renamed] = run_check(repo_copy, "multikueue", "gpu-staging")
    assert_findings(
        [renamed],
        (
            "multikueue-worker-mirror",
            "error",
            staging_queue,
            line_of(repo_copy, staging_queue, "clusterQueue"),
        ),
        contains="LocalQueue team-a/batch points at ClusterQueue team-b-cq, not team-a-cq",
    )
    (repo_copy / prod_queue).unlink()
    [missing] = run_check(repo_copy, "multikueue", "gpu-staging")
    assert "gpu-prod has no LocalQueue team-a/batch" in missing.message
    shutil.rmtree(repo_copy / "tenants/team-a/gpu-prod")
    [no_namespace] = run_check(repo_copy, "multikueue", "gpu-staging")
    assert "gpu-prod has no namespace team-a in the repository" in no_namespace.message


def workers_cpu() -> int:
    """gpu-prod's team-a-cq's CPUs over all its flavors, read from the file."""
    docs = yaml.safe_load_all((ESTATE / "clusters/gpu-prod/clusterqueues.yaml").read_text())
    [queue] = [d for d in docs if d and d["metadata"]["name"] == "team-a-cq"]
    return sum(
        int(r["nominalQuota"])
        for g in queue["spec"]["resourceGroups"]
        for f in g["flavors"]
        for r in f["resources"]
        if r["name"] == "cpu"
    )


def test_a_manual_manager_quota_is_held_to_the_workers_sum(repo_copy: Path) -> None:
    write(repo_copy, QUEUES, MIRRORED.text)
    total = workers_cpu()
    edit(
        repo_copy,
        QUEUES,
        '{name: cpu, nominalQuota: "64"}',
        f'{{name: cpu, nominalQuota: "{total + 1}"}}',
    )
    [cpu] = run_check(repo_copy, "multikueue", "gpu-staging")
    assert cpu.rule.id == "multikueue-manager-over-workers"
    assert f"admits {total + 1} of cpu on the manager" in cpu.message
    assert f"(gpu-prod team-a-cq) hold {total} in all" in cpu.message
    assert cpu.measured == 1  # how far over: a baseline holding it takes no larger excess
    edit(repo_copy, QUEUES, f'nominalQuota: "{total + 1}"', f'nominalQuota: "{total}"')
    assert run_check(repo_copy, "multikueue", "gpu-staging") == []
    # Where Kueue writes it (Automated, the gate on), the manager's quota is Kueue's: not judged.
    edit(
        repo_copy,
        QUEUES,
        "clusters: [gpu-prod]",
        "clusters: [gpu-prod]\n  quotaManagement: Automated",
    )
    edit(repo_copy, QUEUES, f'nominalQuota: "{total}"', 'nominalQuota: "99999"')
    edit(
        repo_copy,
        CONFIG,
        "    integrations:\n",
        "    featureGates: {MultiKueueManagerQuotaAutomation: true}\n    integrations:\n",
    )
    assert run_check(repo_copy, "multikueue", "gpu-staging") == []
