"""`kueue-gitops plan` between two commits of a real temporary git repository, offline."""

from __future__ import annotations

import json
import typing as t

from tests.conftest import run_line
from tests.unit.conftest import Revisions
from tests.unit.plan.offline_plan import CQS, plan


def changes(doc: dict[str, t.Any], category: str) -> list[dict[str, t.Any]]:
    return [c for c in doc["changes"] if c["category"] == category]


def test_quota_cut_is_a_delta_per_queue_flavor_and_resource_with_its_line(revs: Revisions) -> None:
    revs.edit(
        CQS,
        'nominalQuota: "16"\n              borrowingLimit: "8"\n              lendingLimit: "8"',
        'nominalQuota: "12"\n              borrowingLimit: "8"\n              lendingLimit: "8"',
    )
    line = revs.line_of(CQS, 'nominalQuota: "12"')
    head = revs.commit("cut team-a a100 gpus")
    code, doc = plan(revs, "--base", "base", "--head", head)
    assert code == 0
    assert doc["command"] == "plan" and doc["status"] == "clean"
    [quota] = changes(doc, "quota")
    assert quota | {"summary": None} == {
        "cluster": "gpu-prod",
        "category": "quota",
        "action": "decreased",
        "kind": "ClusterQueue",
        "namespace": None,
        "name": "team-a-cq",
        "path": "spec.resourceGroups[0].flavors[a100].resources[nvidia.com/gpu].nominalQuota",
        "before": "16",
        "after": "12",
        "delta": "-4",
        "flavor": "a100",
        "resource": "nvidia.com/gpu",
        "file": CQS,
        "line": line,
        "summary": None,
    }
    assert doc["changes"] == [quota]  # nothing else changed, on either cluster


def test_quantities_are_compared_by_value_not_spelling(revs: Revisions) -> None:
    revs.edit(CQS, "nominalQuota: 1Ti", "nominalQuota: 1024Gi")
    revs.edit(CQS, 'nominalQuota: "256"', "nominalQuota: 256000m")
    head = revs.commit("respell")
    code, doc = plan(revs, "--base", "base", "--head", head)
    assert (code, doc["changes"]) == (0, [])


def test_a_fair_sharing_weight_is_compared_by_value(revs: Revisions) -> None:
    cohorts = "clusters/gpu-prod/cohorts.yaml"
    revs.edit(cohorts, "spec:\n", "spec:\n  fairSharing:\n    weight: 0.5\n")
    half = revs.commit("weigh the cohort one half")
    revs.edit(cohorts, "weight: 0.5", 'weight: "500m"')
    respelt = revs.commit("respell the weight as the server stores it")
    code, doc = plan(revs, "--base", half, "--head", respelt)
    assert (code, doc["changes"]) == (0, [])
    revs.edit(cohorts, 'weight: "500m"', 'weight: "2"')
    doubled = revs.commit("weigh it two")
    code, doc = plan(revs, "--base", respelt, "--head", doubled)
    [change] = doc["changes"]
    assert (change["category"], change["path"]) == ("object", "spec.fairSharing.weight")


def test_memory_delta_and_limits_are_shown_in_the_units_people_write(revs: Revisions) -> None:
    revs.edit(CQS, "nominalQuota: 1Ti", "nominalQuota: 1536Gi")
    revs.edit(CQS, 'borrowingLimit: "4"', 'borrowingLimit: "2"')
    revs.edit(CQS, '              lendingLimit: "12"\n', "")
    head = revs.commit("more memory, less borrowing")
    _, doc = plan(revs, "--base", "base", "--head", head)
    got = {
        (c["name"], c["flavor"], c["path"].rpartition(".")[2], c["action"], c["delta"])
        for c in changes(doc, "quota")
    }
    assert got == {
        ("team-a-cq", "cpu-only", "nominalQuota", "increased", "+512Gi"),
        ("team-a-cq", "h100", "borrowingLimit", "decreased", "-2"),
        ("team-b-cq", "a100", "lendingLimit", "increased", None),  # 12 -> unlimited
    }


def test_cohort_move_admission_and_objects(revs: Revisions) -> None:
    revs.edit(CQS, "cohortName: ai-shared", "cohortName: isolated")  # team-a-cq only
    revs.edit(
        "tenants/team-b/gpu-staging/namespace.yaml", "platform.example.com/kueue: enabled\n", ""
    )
    revs.write(
        "tenants/team-a/gpu-prod/extra.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a-extra\n  labels:\n"
        "    platform.example.com/kueue: enabled\n    platform.example.com/tenant: team-a\n"
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n"
        "  name: batch\n  namespace: team-a-extra\nspec:\n  clusterQueue: team-a-cq\n",
    )
    (revs.root / "tenants/team-b/gpu-prod/localqueues.yaml").unlink()
    head = revs.commit("reshape")
    code, doc = plan(revs, "--base", "base", "--head", head)
    assert code == 1  # removing a queue is an error (test_removals.py)
    assert [f["rule"] for f in doc["findings"]] == ["plan-removes-queue"]
    [move] = changes(doc, "cohort")
    assert (move["name"], move["before"], move["after"], move["path"]) == (
        "team-a-cq",
        "ai-shared",
        "isolated",
        "spec.cohortName",
    )
    assert move["line"] == revs.line_of(CQS, "cohortName: isolated")
    admission = {(c["cluster"], c["name"], c["action"]) for c in changes(doc, "admission")}
    assert admission == {("gpu-staging", "team-b", "loses"), ("gpu-prod", "team-a-extra", "gains")}
    objects = {
        (c["cluster"], c["action"], c["kind"], c["namespace"], c["name"])
        for c in changes(doc, "object")
    }
    assert objects == {
        ("gpu-prod", "added", "Namespace", None, "team-a-extra"),
        ("gpu-prod", "added", "LocalQueue", "team-a-extra", "batch"),
        ("gpu-prod", "removed", "LocalQueue", "team-b", "batch"),
    }  # the namespace's label change is its admission change, not listed twice


def test_reads_revisions_without_touching_the_working_tree(revs: Revisions) -> None:
    revs.edit(CQS, 'nominalQuota: "16"', 'nominalQuota: "20"')
    head = revs.commit("raise")
    revs.repo.git.checkout("base")  # the working tree now holds the base...
    revs.edit(CQS, 'nominalQuota: "16"', 'nominalQuota: "99"')  # ...plus an uncommitted edit
    before = (revs.root / CQS).read_text()
    _, doc = plan(revs, "--base", "base", "--head", head)
    assert [(c["before"], c["after"]) for c in doc["changes"]] == [("16", "20")]
    assert (revs.root / CQS).read_text() == before
    assert (
        revs.repo.is_dirty()
        and revs.repo.head.commit.hexsha == revs.repo.tags["base"].commit.hexsha
    )


def test_repository_in_a_subfolder_of_the_git_repository(revs: Revisions) -> None:
    sub = revs.root / "platform"
    sub.mkdir()
    for folder in ("clusters", "tenants", "schemas"):
        (revs.root / folder).rename(sub / folder)
    base = revs.commit("move into platform/")
    revs.edit(f"platform/{CQS}", 'nominalQuota: "8"', 'nominalQuota: "6"')
    head = revs.commit("cut")
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(sub),
            "plan",
            "diff",
            "--base",
            base,
            "--head",
            head,
            "--cluster",
            "gpu-prod",
            "-o",
            "json",
        ]
    )
    doc = json.loads(result.output)
    assert [(c["file"], c["name"], c["delta"]) for c in doc["changes"]] == [
        (CQS, "team-a-cq", "-2")
    ]
    assert [c["name"] for c in doc["clusters"]] == ["gpu-prod"]


def test_added_queue_counts_from_zero_and_removed_cluster_is_all_removals(revs: Revisions) -> None:
    revs.edit("clusters/gpu-staging/cohorts.yaml", "parentName: example-org", "parentName: global")
    import shutil

    shutil.rmtree(revs.root / "clusters/gpu-staging")
    for team in ("team-a", "team-b"):
        shutil.rmtree(revs.root / f"tenants/{team}/gpu-staging")
        revs.edit(f"tenants/{team}/profile.yaml", "    gpu-staging:\n", "    gone:\n")
    head = revs.commit("retire gpu-staging")
    _, doc = plan(revs, "--base", "base", "--head", head)
    staging = [c for c in doc["changes"] if c["cluster"] == "gpu-staging"]
    assert staging and {c["action"] for c in staging if c["category"] == "object"} == {"removed"}
    assert all(c["after"] is None for c in staging if c["category"] == "quota")


def test_markdown_is_one_comment_with_a_marker_and_a_quota_table(revs: Revisions) -> None:
    revs.edit(CQS, 'nominalQuota: "16"', 'nominalQuota: "24"')
    head = revs.commit("raise")
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(revs.root),
            "plan",
            "diff",
            "--base",
            "base",
            "--head",
            head,
            "-o",
            "markdown",
        ]
    )
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0] == "<!-- kueue-gitops-plan -->"
    assert lines[1].startswith("### ✅ kueue-gitops plan: 1 change(s) in 1 cluster(s)")
    assert lines[5:8] == [
        "- **Clusters changed:** `gpu-prod`",
        "- **Queues changed:** `team-a-cq` (gpu-prod)",
        "- **Risks:** none found",
    ]
    assert "<details open>" in lines
    assert (
        "<summary><strong>Cluster <code>gpu-prod</code></strong>: 1 change(s), 0 error(s), "
        "0 warning(s)</summary>"
    ) in lines
    row = next(line for line in lines if line.startswith("| ClusterQueue `team-a-cq`"))
    assert "| a100 | `nvidia.com/gpu` | nominalQuota | 16 → 24 | +8 |" in row
    assert "_Not checked against live usage (offline)._" in lines


def test_text_output_names_each_change_and_its_file(revs: Revisions) -> None:
    revs.edit(CQS, "cohortName: ai-shared", "cohortName: other")
    head = revs.commit("move")
    result = run_line(
        ["kueue-gitops", "--repo", str(revs.root), "plan", "diff", "--base", "base", "--head", head]
    )
    assert result.exit_code == 0
    assert "ClusterQueue team-a-cq moves from cohort ai-shared to other" in result.output
    assert f"({CQS}:{revs.line_of(CQS, 'cohortName: other')})" in result.output
    assert result.output.rstrip().endswith(
        "plan: clean: 1 change(s) in 1 cluster(s); 0 error(s), 0 warning(s)"
    )


def test_no_change_is_clean(revs: Revisions) -> None:
    code, doc = plan(revs, "--base", "base", "--head", "base")
    assert (code, doc["status"], doc["changes"]) == (0, "clean", [])


def test_broken_manifest_at_head_is_a_finding_with_file_and_line(revs: Revisions) -> None:
    revs.write(
        "tenants/team-a/gpu-prod/broken.yaml",
        "apiVersion: v1\nkind: Namespace\nkind: Namespace\nmetadata:\n  name: x\n",
    )
    head = revs.commit("broken")
    code, doc = plan(revs, "--base", "base", "--head", head)
    assert code == 1 and doc["status"] == "findings"
    [finding] = doc["findings"]
    assert finding["file"] == "tenants/team-a/gpu-prod/broken.yaml" and finding["line"] == 3


def test_unknown_revision_and_cluster_are_usage_errors(revs: Revisions) -> None:
    bad = run_line(["kueue-gitops", "--repo", str(revs.root), "plan", "diff", "--base", "nope"])
    assert bad.exit_code == 2
    assert "unknown git revision 'nope'" in bad.stderr
    cluster = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(revs.root),
            "plan",
            "diff",
            "--base",
            "base",
            "--cluster",
            "moon",
        ]
    )
    assert cluster.exit_code == 2
    assert "no cluster 'moon'" in cluster.stderr


def test_not_a_git_repository_is_a_usage_error(repo_copy: t.Any) -> None:
    result = run_line(["kueue-gitops", "--repo", str(repo_copy), "plan", "diff", "--base", "HEAD"])
    assert result.exit_code == 2
    assert "is not inside a git repository" in result.stderr


def test_rbac_powers_gained_and_lost_through_roles_and_bindings(revs: Revisions) -> None:
    revs.write(
        "clusters/gpu-prod/quota-editors.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n"
        "  name: quota-editor\nrules:\n  - apiGroups: [kueue.x-k8s.io]\n"
        "    resources: [clusterqueues]\n    verbs: [get, patch]\n---\n"
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n"
        "  name: team-a-edits-quota\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n"
        "  kind: ClusterRole\n  name: quota-editor\nsubjects:\n"
        "  - apiGroup: rbac.authorization.k8s.io\n    kind: Group\n    name: example-org:team-a\n",
    )
    head = revs.commit("let team-a edit quota")
    _, doc = plan(revs, "--base", "base", "--head", head)
    [gained] = changes(doc, "rbac")
    assert (gained["action"], gained["kind"], gained["name"], gained["path"]) == (
        "gains",
        "ClusterRoleBinding",
        "team-a-edits-quota",
        "patch clusterqueues.kueue.x-k8s.io cluster-wide",
    )
    assert gained["summary"].startswith("Group example-org:team-a gains patch clusterqueues")
    assert gained["file"] == "clusters/gpu-prod/quota-editors.yaml"
    # Taking the verb back out of the role is a loss, with no binding touched.
    revs.edit("clusters/gpu-prod/quota-editors.yaml", "verbs: [get, patch]", "verbs: [get]")
    later = revs.commit("read only")
    _, doc = plan(revs, "--base", head, "--head", later)
    assert [(c["action"], c["path"]) for c in changes(doc, "rbac")] == [
        ("loses", "patch clusterqueues.kueue.x-k8s.io cluster-wide")
    ]


def test_deletecollection_is_a_power_and_a_narrower_grant_is_no_gain(revs: Revisions) -> None:
    role = (
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n"
        "  name: {name}\nrules:\n  - apiGroups: [kueue.x-k8s.io]\n"
        "    resources: [clusterqueues]\n    verbs: {verbs}\n{names}---\n"
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n"
        "  name: {name}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n"
        "  kind: ClusterRole\n  name: {name}\nsubjects:\n"
        "  - apiGroup: rbac.authorization.k8s.io\n    kind: Group\n    name: example-org:ops\n"
    )
    revs.write(
        "clusters/gpu-prod/ops.yaml",
        role.format(name="ops", verbs="[deletecollection, patch]", names=""),
    )
    head = revs.commit("ops may clear and patch queues")
    _, doc = plan(revs, "--base", "base", "--head", head)
    assert sorted(c["path"] for c in changes(doc, "rbac")) == [
        "deletecollection clusterqueues.kueue.x-k8s.io cluster-wide",
        "patch clusterqueues.kueue.x-k8s.io cluster-wide",
    ]
    # Patching one named queue is already covered by patching every queue.
    revs.write(
        "clusters/gpu-prod/ops-named.yaml",
        role.format(name="ops-a", verbs="[patch]", names="    resourceNames: [team-a-cq]\n"),
    )
    later = revs.commit("and team-a's queue by name")
    _, doc = plan(revs, "--base", head, "--head", later)
    assert changes(doc, "rbac") == []


def test_changing_an_immutable_field_is_an_error_at_its_line(revs: Revisions) -> None:
    lqs = "tenants/team-a/gpu-prod/localqueues.yaml"
    revs.edit(lqs, "clusterQueue: team-a-cq", "clusterQueue: team-b-cq")
    head = revs.commit("move the queue")
    code, doc = plan(revs, "--base", "base", "--head", head)
    assert (code, doc["status"]) == (1, "findings")
    [finding] = doc["findings"]
    assert (finding["rule"], finding["cluster"], finding["path"]) == (
        "plan-immutable-field",
        "gpu-prod",
        "spec.clusterQueue",
    )
    assert (finding["file"], finding["line"]) == (lqs, revs.line_of(lqs, "clusterQueue:"))
    assert "refuses to change" in finding["message"]
