"""`kueue-gitops validate` through the CLI, on a private copy of the tests' frozen estate."""

from __future__ import annotations

import json
import shutil
import typing as t
from pathlib import Path

import pytest

from tests.acceptance.validating import committed_repo, validate
from tests.conftest import run_line
from tests.estate import ESTATE


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "repo")


# What this engine reports; the policy checks (their own tests) add other categories.
ENGINE = {"schema", "cel", "version", "input", "layout"}


def findings(repo: Path, *args: str) -> list[dict[str, t.Any]]:
    result = validate(repo, "-o", "json", *args)
    assert "Traceback" not in result.output
    found = json.loads(result.stdout)["findings"]
    return [f for f in found if f["category"] in ENGINE]


def append(repo: Path, file: str, text: str) -> None:
    path = repo / file
    path.write_text(path.read_text() + text)


CQ_V1BETA2_WITH_COHORT = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: half-migrated
spec:
  cohort: ai-shared
  namespaceSelector: {matchLabels: {platform.example.com/kueue: enabled}}
"""


def test_the_repository_itself_validates_clean(repo: Path) -> None:
    result = validate(repo, "-o", "json")
    report = json.loads(result.stdout)
    # Nothing but gpu-legacy's accepted limitation of Kueue v0.9.1 (suppressed until it expires).
    assert [(f["cluster"], f["rule"], "suppressed" in f) for f in report["findings"]] == [
        ("gpu-legacy", "kueue-config-unmanaged-jobs", True)
    ]
    assert report["status"] == "clean"
    assert result.exit_code == 0
    assert [c["name"] for c in report["clusters"]] == ["gpu-legacy", "gpu-prod", "gpu-staging"]


def test_a_schema_violation_names_file_line_and_field(repo: Path) -> None:
    path = repo / "clusters/gpu-prod/clusterqueues.yaml"
    text = path.read_text().replace("queueingStrategy: BestEffortFIFO", "queueingStrategy: Fast", 1)
    path.write_text(text)
    line = text.splitlines().index("  queueingStrategy: Fast") + 1
    [found] = [f for f in findings(repo) if f["rule"] == "schema"]
    assert found["file"] == "clusters/gpu-prod/clusterqueues.yaml" and found["line"] == line
    assert found["path"] == "spec.queueingStrategy" and "Fast" in found["message"]
    assert found["cluster"] == "gpu-prod" and found["severity"] == "error"


def test_an_unknown_field_is_an_error_at_its_line(repo: Path) -> None:
    path = repo / "tenants/team-a/gpu-prod/localqueues.yaml"
    path.write_text(path.read_text() + "  clusterQueeu: typo\n")
    [found] = [f for f in findings(repo) if f["rule"] == "unknown-field"]
    assert found["path"] == "spec.clusterQueeu" and found["category"] == "schema"
    assert found["line"] == len(path.read_text().splitlines())


def test_a_field_of_the_other_version_says_to_use_that_versions_schema(repo: Path) -> None:
    append(repo, "clusters/gpu-prod/clusterqueues.yaml", CQ_V1BETA2_WITH_COHORT)
    [found] = [f for f in findings(repo) if f["rule"] == "field-of-other-version"]
    assert found["path"] == "spec.cohort" and found["category"] == "version"
    assert "v1beta2 schema" in found["message"] and "cohortName" in found["message"]
    assert "apiVersion string alone does not migrate" in found["message"]
    assert "(schemas/gpu-prod/kueue.x-k8s.io/clusterqueue_v1beta2.json" in found["message"]


def test_the_reverse_v1beta2_field_in_a_v1beta1_object(repo: Path) -> None:
    append(
        repo,
        "clusters/gpu-prod/clusterqueues.yaml",
        CQ_V1BETA2_WITH_COHORT.replace("v1beta2", "v1beta1").replace("cohort:", "cohortName:"),
    )
    found = {f["rule"]: f for f in findings(repo) if f["name"] == "half-migrated"}
    assert found["field-of-other-version"]["path"] == "spec.cohortName"
    assert "v1beta1 schema" in found["field-of-other-version"]["message"]
    assert found["version-deprecated"]["severity"] == "warning"


def test_a_version_the_cluster_does_not_serve_is_an_error(repo: Path) -> None:
    append(
        repo,
        "clusters/gpu-staging/cohorts.yaml",
        "---\napiVersion: kueue.x-k8s.io/v1\nkind: Cohort\nmetadata: {name: future}\n",
    )
    [found] = [f for f in findings(repo) if f["rule"] == "version-not-served"]
    assert found["cluster"] == "gpu-staging" and "v1beta1, v1beta2" in found["message"]


def test_a_deprecated_version_warns_and_fails_only_under_strict(repo: Path) -> None:
    path = repo / "clusters/gpu-prod/cohorts.yaml"
    before = validate(repo, "--cluster", "gpu-prod").exit_code
    path.write_text(path.read_text().replace("v1beta2", "v1beta1", 1))  # ai-shared only
    [found] = findings(repo, "--cluster", "gpu-prod")
    assert found["rule"] == "version-deprecated" and found["severity"] == "warning"
    assert validate(repo, "--cluster", "gpu-prod").exit_code == before
    assert validate(repo, "--strict", "--cluster", "gpu-prod").exit_code == 1


def test_a_broken_cel_rule_is_caught_offline(repo: Path) -> None:
    append(
        repo,
        "clusters/gpu-prod/clusterqueues.yaml",
        """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: lonely
spec:
  namespaceSelector: {matchLabels: {platform.example.com/kueue: enabled}}
  resourceGroups:
    - coveredResources: [cpu]
      flavors:
        - name: cpu-only
          resources:
            - name: cpu
              nominalQuota: "1"
              borrowingLimit: "1"
""",
    )
    [found] = [f for f in findings(repo) if f["rule"] == "cel"]
    assert found["name"] == "lonely" and found["category"] == "cel"
    assert "borrowingLimit must be nil when cohort is empty" in found["message"]


def test_cluster_option_restricts_the_run(repo: Path) -> None:
    append(repo, "clusters/gpu-prod/clusterqueues.yaml", CQ_V1BETA2_WITH_COHORT)
    assert findings(repo, "--cluster", "gpu-staging") == []
    result = validate(repo, "--cluster", "nope")
    assert result.exit_code == 2 and "no cluster 'nope'" in result.stderr


@pytest.mark.parametrize(
    ("output", "expect"),
    [
        ("text", "clusters/gpu-prod/clusterqueues.yaml:"),
        ("markdown", "clusterqueues.yaml"),
        ("sarif", '"ruleId": "field-of-other-version"'),
        ("junit", "<testsuite"),
        ("github", "::error file=clusters/gpu-prod/clusterqueues.yaml,line="),
    ],
)
def test_every_format_carries_the_finding(repo: Path, output: str, expect: str) -> None:
    append(repo, "clusters/gpu-prod/clusterqueues.yaml", CQ_V1BETA2_WITH_COHORT)
    result = validate(repo, "-o", output)
    assert result.exit_code == 1
    assert expect in result.stdout


def test_auto_format_is_github_under_actions(repo: Path) -> None:
    append(repo, "clusters/gpu-prod/clusterqueues.yaml", CQ_V1BETA2_WITH_COHORT)
    assert "::error " in validate(repo, env={"GITHUB_ACTIONS": "true"}).stdout
    assert "::error " not in validate(repo, env={"GITHUB_ACTIONS": ""}).stdout


def test_without_committed_schemas_the_packaged_ones_of_each_clusters_release_judge(
    repo_copy: Path,
) -> None:
    """repo_copy has no schemas/: each cluster is judged by the package's set of its release,
    which is what its committed folder holds, so the estate is as clean as with them."""
    result = validate(repo_copy, "-o", "json")
    assert result.exit_code == 0, result.output
    sources = {c["name"]: c["schemas"] for c in json.loads(result.stdout)["clusters"]}
    assert {n: (s["source"], s["kueue"]) for n, s in sources.items()} == {
        "gpu-legacy": ("package", "v0.9.1"),
        "gpu-prod": ("package", "v0.17.0"),
        "gpu-staging": ("package", "v0.19.2"),
    }
    assert "gpu-prod: schemas from the package, those of Kueue v0.17.0" in result.stderr
    (repo_copy / "schemas/gpu-prod").parent.mkdir()
    shutil.copytree(ESTATE / "schemas/gpu-prod", repo_copy / "schemas/gpu-prod")
    mixed = json.loads(validate(repo_copy, "-o", "json").stdout)["clusters"]
    assert [c["schemas"]["source"] for c in mixed] == ["package", "repository", "package"]


def test_a_release_without_schemas_anywhere_is_a_configuration_error(repo_copy: Path) -> None:
    profile = repo_copy / "clusters/gpu-legacy/profile.yaml"
    profile.write_text(profile.read_text().replace("version: v0.9.1", "version: v0.8.0"))
    result = validate(repo_copy)
    assert result.exit_code == 2
    assert "no schemas for cluster gpu-legacy" in result.stderr
    assert "not v0.8.0" in result.stderr
    assert "kueue-gitops schemas fetch --cluster gpu-legacy" in result.stderr


def test_schemas_fetch_from_an_unreachable_cluster_exits_3(repo: Path, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: gpu-prod\n"
        "clusters: [{name: dead, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: gpu-prod, context: {cluster: dead, user: u}}]\n"
    )
    before = (repo / "schemas/gpu-prod/index.json").read_text()
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(repo),
            "schemas",
            "fetch",
            "--cluster",
            "gpu-prod",
            "--kubeconfig",
            str(kubeconfig),
        ]
    )
    assert result.exit_code == 3 and "unreachable" in result.stderr
    assert (repo / "schemas/gpu-prod/index.json").read_text() == before  # nothing half-written


def test_one_process_or_one_per_cluster_report_the_same(repo: Path) -> None:
    append(repo, "clusters/gpu-prod/clusterqueues.yaml", CQ_V1BETA2_WITH_COHORT)
    (repo / "tenants/team-a/stray.yaml").write_text("apiVersion: v1\nkind: Namespace\n")
    (repo / "tenants/team-b/gpu-staging/bad.yaml").write_text("a: [\n")
    serial = validate(repo, "-o", "json", "--jobs", "1")
    forked = validate(repo, "-o", "json", "--jobs", "2")
    assert serial.exit_code == forked.exit_code == 1
    assert json.loads(serial.stdout) == json.loads(forked.stdout)
    rules = [f["rule"] for f in json.loads(serial.stdout)["findings"]]
    assert rules.count("stray-manifest") == 1  # found by both clusters' loads, reported once
    assert {"field-of-other-version", "yaml-syntax"} <= set(rules)


def test_cel_rules_still_run_beside_unknown_fields_as_on_the_server(repo: Path) -> None:
    append(
        repo,
        "clusters/gpu-prod/clusterqueues.yaml",
        CQ_V1BETA2_WITH_COHORT + "  preemption:\n    borrowWithinCohort: {policy: LowerPriority}\n",
    )
    rules = {f["rule"] for f in findings(repo) if f["name"] == "half-migrated"}
    assert rules == {"field-of-other-version", "cel"}


def test_an_object_with_only_an_unknown_field_still_takes_part_in_the_policy_checks(
    repo: Path,
) -> None:
    # A v1beta1 field in a v1beta2 ClusterQueue is an error of its own; it must not also make
    # the queue look absent, which would blame the tenants' LocalQueues for a dangling reference.
    cqs = repo / "clusters/gpu-prod/clusterqueues.yaml"
    cqs.write_text(cqs.read_text().replace("cohortName: ai-shared", "cohort: ai-shared", 1))
    result = validate(repo, "--cluster", "gpu-prod", "-o", "json")
    rules = {f["rule"] for f in json.loads(result.stdout)["findings"]}
    assert "field-of-other-version" in rules
    assert "limit-without-cohort" in rules  # the checks saw the queue, without its cohort
    assert "lq-cluster-queue-missing" not in rules
    assert result.exit_code == 1


def test_a_local_queue_of_an_invalid_cluster_queue_points_at_the_queues_own_finding(
    repo: Path,
) -> None:
    # A type error keeps team-a-cq out of the policy checks; its LocalQueue must not then be
    # blamed for pointing at a ClusterQueue that does not exist.
    cqs = repo / "clusters/gpu-prod/clusterqueues.yaml"
    cqs.write_text(cqs.read_text().replace('nominalQuota: "256"', "nominalQuota: [256]", 1))
    result = validate(repo, "--cluster", "gpu-prod", "-o", "json")
    found = json.loads(result.stdout)["findings"]
    [schema] = [f for f in found if f["rule"] == "schema"]
    [invalid] = [f for f in found if f["rule"] == "lq-cluster-queue-invalid"]
    assert (schema["name"], invalid["namespace"], invalid["name"]) == (
        "team-a-cq",
        "team-a",
        "batch",
    )
    assert invalid["file"] == "tenants/team-a/gpu-prod/localqueues.yaml"
    assert f"{schema['file']}:{schema['line']}: {schema['message']}" in invalid["message"]
    assert "lq-cluster-queue-missing" not in {f["rule"] for f in found}
    assert result.exit_code == 1


def test_a_priority_past_int32_says_the_server_stores_it_and_kueue_cannot_read_it(
    repo: Path,
) -> None:
    path = repo / "clusters/gpu-prod/priorityclasses.yaml"
    text = path.read_text().replace("value: 100\n", "value: 3000000000\n", 1)
    path.write_text(text)
    result = validate(repo, "-o", "json")
    assert result.exit_code == 1
    [found] = [
        f for f in json.loads(result.stdout)["findings"] if f["rule"] == "format-undecodable"
    ]
    assert (found["file"], found["line"], found["path"], found["name"]) == (
        "clusters/gpu-prod/priorityclasses.yaml",
        text.splitlines().index("value: 3000000000") + 1,
        "value",
        "batch-low",
    )
    assert "the API server accepts it" in found["message"]
    assert (
        "Kueue v0.17.0 cannot decode it: listing any WorkloadPriorityClass fails"
        in (found["message"])
    )


def test_a_quota_written_as_a_fraction_is_not_called_a_type_error(repo: Path) -> None:
    path = repo / "clusters/gpu-staging/clusterqueues.yaml"
    path.write_text(path.read_text().replace('nominalQuota: "64"', "nominalQuota: 4.5", 1))
    result = validate(repo, "-o", "json", "--cluster", "gpu-staging")
    assert result.exit_code == 1
    found = json.loads(result.stdout)["findings"]
    assert not [f for f in found if "not of type" in f["message"]]
    [number] = [f for f in found if f["rule"] == "quantity-number"]
    assert "stores it as '4500m' when the ClusterQueue is created" in number["message"]
    assert "refuses every later apply of this manifest" in number["message"]
