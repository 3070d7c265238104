"""`drift` against a real kube-apiserver: clean after a sync, and each drift class found exactly.

Drift is injected through the API the way people and controllers make it (merge patches with
their own field manager, creates), then the repo is re-applied so the next case starts clean.
"""

from __future__ import annotations

import copy
import typing as t
from pathlib import Path

import pytest

from auditor.live.apply import apply_all
from auditor.live.kube import KubeCluster
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import own_context, run_line
from tests.estate import copy_estate
from tests.integration.conftest import repo_kueue_config, repo_kueue_release
from tests.integration.drift_live import (
    CLUSTER,
    KUEUE,
    RBAC,
    Json,
    drift_json,
    gpu,
    repo_body,
    servable_repo,
    sync,
    synced_sandbox,
)

# -- helpers (the ones the test_drift_* modules share are in drift_live) ---------------------


def brief(report: Json) -> list[tuple[t.Any, ...]]:
    return sorted(
        (f["category"], f["change"], f["kind"], f["namespace"], f["name"], f["path"])
        for f in report["findings"]
    )


# -- fixtures -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synced(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[tuple[Sandbox, Path]]:
    """A sandbox holding exactly what the repo says, and the repo copy it was synced from."""
    repo_dir = tmp_path_factory.mktemp("drift-repo")
    with synced_sandbox(toolchain, sandboxes_dir, repo_dir, "drift-main") as box_and_repo:
        yield box_and_repo


@pytest.fixture
def clean(synced: tuple[Sandbox, Path]) -> t.Iterator[tuple[Sandbox, Path]]:
    """The synced sandbox, with the repo re-applied after the test (which undoes the rest)."""
    box, repo = synced
    yield box, repo
    sync(box, repo)


# -- clean -------------------------------------------------------------------------------------


def test_clean_right_after_the_repo_is_applied(synced: tuple[Sandbox, Path]) -> None:
    box, repo = synced
    code, report = drift_json(repo, box.kubeconfig)
    assert (code, report["status"], report["findings"]) == (0, "clean", [])
    assert report["clusters"] == [{"name": CLUSTER, "status": "ok", "errors": []}]


def test_clean_after_the_rewrites_kueue_and_the_api_server_make(
    clean: tuple[Sandbox, Path],
) -> None:
    box, repo = clean
    cluster = box.connect()
    spec = repo_body(repo, "ClusterQueue", "team-a-cq")["spec"]
    a100 = gpu(spec, "a100")
    a100.update(nominalQuota=16, borrowingLimit="8000m", lendingLimit=8)  # re-serialized
    [group] = spec["resourceGroups"]
    for flavor in group["flavors"]:
        for res in flavor["resources"]:
            if res["nominalQuota"] == "1Ti":
                res["nominalQuota"] = "1099511627776"  # the same value, another spelling
    spec.update(stopPolicy="None", queueingStrategy="BestEffortFIFO")  # defaults, written out
    spec["flavorFungibility"] = {
        "whenCanBorrow": "MayStopSearch",
        "whenCanPreempt": "TryNextFlavor",
    }
    cluster.patch(
        KUEUE,
        "ClusterQueue",
        "team-a-cq",
        {
            "metadata": {
                "finalizers": ["kueue.x-k8s.io/resource-in-use"],
                "labels": {"app.kubernetes.io/instance": "kueue-gpu-prod"},
                "annotations": {
                    "argocd.argoproj.io/tracking-id": "kueue-gpu-prod:kueue.x-k8s.io/ClusterQueue",
                    "kubectl.kubernetes.io/last-applied-configuration": "{}",
                },
            },
            "spec": spec,
        },
        manager="kueue",
    )
    live = cluster.get(KUEUE, "ClusterQueue", "team-a-cq")
    assert gpu(live["spec"], "a100")["nominalQuota"] == 16  # stored as sent: really re-spelled
    code, report = drift_json(repo, box.kubeconfig)
    assert (code, report["findings"]) == (0, [])


# -- each drift class, injected through the API, found exactly ----------------------------------


def _patch_gpu(cluster: KubeCluster, repo: Path, **changes: t.Any) -> None:
    spec = repo_body(repo, "ClusterQueue", "team-a-cq")["spec"]
    gpu(spec, "a100").update(changes)
    cluster.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": spec}, manager="kubectl-edit")


GPU_PATH = "spec.resourceGroups[0].flavors[a100].resources[nvidia.com/gpu]"


@pytest.mark.parametrize(
    ("field", "value", "desired"),
    [("nominalQuota", "20", "16"), ("borrowingLimit", 12, "8"), ("lendingLimit", "4", "8")],
)
def test_a_changed_quota_is_one_quota_finding_naming_who_changed_it(
    clean: tuple[Sandbox, Path], field: str, value: t.Any, desired: str
) -> None:
    box, repo = clean
    _patch_gpu(box.connect(), repo, **{field: value})
    code, report = drift_json(repo, box.kubeconfig)
    assert code == 1
    assert brief(report) == [
        ("quota", "modified", "ClusterQueue", None, "team-a-cq", f"{GPU_PATH}.{field}")
    ]
    [finding] = report["findings"]
    assert (finding["desired"], finding["live"]) == (desired, value)
    assert finding["file"] == "clusters/gpu-prod/clusterqueues.yaml"
    assert finding["line"] > 30  # the a100 gpu entry, not the top of the file
    assert finding["changedBy"]["manager"] == "kubectl-edit"
    assert finding["severity"] == "error"


def test_a_clusterqueue_moved_to_another_cohort(clean: tuple[Sandbox, Path]) -> None:
    box, repo = clean
    box.connect().patch(KUEUE, "ClusterQueue", "team-b-cq", {"spec": {"cohortName": "rogue"}})
    code, report = drift_json(repo, box.kubeconfig)
    assert code == 1
    assert brief(report) == [
        ("cohort", "modified", "ClusterQueue", None, "team-b-cq", "spec.cohortName")
    ]
    assert (report["findings"][0]["desired"], report["findings"][0]["live"]) == (
        "ai-shared",
        "rogue",
    )


def test_stop_policy_changed_by_hand(clean: tuple[Sandbox, Path]) -> None:
    box, repo = clean
    cluster = box.connect()
    cluster.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {"stopPolicy": "Hold"}})
    try:
        code, report = drift_json(repo, box.kubeconfig)
    finally:  # the repo leaves stopPolicy to its default, so a sync does not take it back
        cluster.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {"stopPolicy": "None"}})
    assert code == 1
    assert brief(report) == [
        ("stop-policy", "modified", "ClusterQueue", None, "team-a-cq", "spec.stopPolicy")
    ]
    assert report["findings"][0]["changedBy"]["manager"] == "kubectl-edit"
    assert "is 'Hold' live but 'None' (the default) in the repo" in report["findings"][0]["message"]


def test_admission_label_removed_from_a_tenant_namespace(clean: tuple[Sandbox, Path]) -> None:
    box, repo = clean
    patch = {"metadata": {"labels": {"platform.example.com/kueue": None}}}
    box.connect().patch("v1", "Namespace", "team-a", patch)
    code, report = drift_json(repo, box.kubeconfig)
    assert code == 1
    assert brief(report) == [
        (
            "label",
            "modified",
            "Namespace",
            None,
            "team-a",
            "metadata.labels.platform.example.com/kueue",
        )
    ]
    assert (report["findings"][0]["desired"], report["findings"][0]["live"]) == ("enabled", None)


def test_admission_label_on_an_undeclared_namespace(clean: tuple[Sandbox, Path]) -> None:
    box, repo = clean
    cluster = box.connect()
    labels = {"platform.example.com/kueue": "enabled"}
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shadow"}})
    cluster.create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "rogue", "labels": labels}}
    )
    try:
        code, report = drift_json(repo, box.kubeconfig)
    finally:  # no namespace controller runs to finish a delete; take the label off instead
        unlabel = {"metadata": {"labels": {"platform.example.com/kueue": None}}}
        cluster.patch("v1", "Namespace", "rogue", unlabel)
    assert code == 1
    assert brief(report) == [("label", "unmanaged", "Namespace", None, "rogue", None)]
    [finding] = report["findings"]
    assert finding["rule"] == "drift-admission-label"
    assert "can admit work nobody approved" in finding["message"]


def test_an_unmanaged_localqueue(clean: tuple[Sandbox, Path]) -> None:
    box, repo = clean
    cluster = box.connect()
    lq = {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": "side-door", "namespace": "team-a"},
        "spec": {"clusterQueue": "team-b-cq"},
    }
    cluster.create(lq)
    try:
        code, report = drift_json(repo, box.kubeconfig)
    finally:
        cluster.delete(KUEUE, "LocalQueue", "side-door", "team-a")
    assert code == 1
    assert brief(report) == [("quota", "unmanaged", "LocalQueue", "team-a", "side-door", None)]


def _grant(cluster: KubeCluster, role: Json, binding: Json) -> list[Json]:
    return [cluster.create(role), cluster.create(binding)]


def _delete(cluster: KubeCluster, objs: list[Json]) -> None:
    for obj in objs:
        meta = obj["metadata"]
        cluster.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))


def test_a_clusterrolebinding_giving_a_tenant_group_patch_on_clusterqueues(
    clean: tuple[Sandbox, Path],
) -> None:
    box, repo = clean
    cluster = box.connect()
    made = _grant(
        cluster,
        {
            "apiVersion": RBAC,
            "kind": "ClusterRole",
            "metadata": {"name": "cq-tweaker"},
            "rules": [
                {
                    "apiGroups": ["kueue.x-k8s.io"],
                    "resources": ["clusterqueues"],
                    "verbs": ["patch"],
                }
            ],
        },
        {
            "apiVersion": RBAC,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "team-a-cq-tweakers"},
            "roleRef": {
                "apiGroup": RBAC.split("/")[0],
                "kind": "ClusterRole",
                "name": "cq-tweaker",
            },
            "subjects": [{"kind": "Group", "name": "example-org:team-a"}],
        },
    )
    try:
        code, report = drift_json(repo, box.kubeconfig)
    finally:
        _delete(cluster, made)
    assert code == 1
    assert brief(report) == [
        ("rbac", "unmanaged", "ClusterRoleBinding", None, "team-a-cq-tweakers", None)
    ]
    [finding] = report["findings"]
    assert finding["subject"] == "Group example-org:team-a"
    assert finding["live"] == "patch clusterqueues.kueue.x-k8s.io cluster-wide"


def test_a_role_granting_patch_on_namespaces(clean: tuple[Sandbox, Path]) -> None:
    box, repo = clean
    cluster = box.connect()
    made = _grant(
        cluster,
        {
            "apiVersion": RBAC,
            "kind": "Role",
            "metadata": {"name": "ns-labeller", "namespace": "team-b"},
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "patch"]}],
        },
        {
            "apiVersion": RBAC,
            "kind": "RoleBinding",
            "metadata": {"name": "ns-labellers", "namespace": "team-b"},
            "roleRef": {"apiGroup": RBAC.split("/")[0], "kind": "Role", "name": "ns-labeller"},
            "subjects": [{"kind": "Group", "name": "example-org:team-b"}],
        },
    )
    try:
        code, report = drift_json(repo, box.kubeconfig)
    finally:
        _delete(cluster, made)
    assert code == 1
    assert brief(report) == [("rbac", "unmanaged", "RoleBinding", "team-b", "ns-labellers", None)]
    assert report["findings"][0]["live"] == "patch namespaces in namespace team-b"


def test_a_deleted_object_is_missing_and_text_and_markdown_say_so(
    clean: tuple[Sandbox, Path],
) -> None:
    box, repo = clean
    box.connect().delete(KUEUE, "LocalQueue", "batch", "team-b")
    code, report = drift_json(repo, box.kubeconfig)
    assert code == 1
    assert brief(report) == [("quota", "missing", "LocalQueue", "team-b", "batch", None)]
    base = ["kueue-gitops", "--repo", str(repo), "drift", *own_context(box.kubeconfig)]
    text = run_line([*base, "--cluster", CLUSTER])
    assert text.exit_code == 1
    assert "gpu-prod · quota" in text.output
    assert "LocalQueue team-b/batch (missing)" in text.output
    markdown = run_line([*base, "--cluster", CLUSTER, "-o", "markdown"])
    assert "| LocalQueue team-b/batch |" in markdown.output


def test_a_crd_changed_live_is_schema_drift(clean: tuple[Sandbox, Path]) -> None:
    box, repo = clean
    cluster = box.connect()
    crd_api, name = "apiextensions.k8s.io/v1", "cohorts.kueue.x-k8s.io"
    versions = cluster.get(crd_api, "CustomResourceDefinition", name)["spec"]["versions"]
    changed = copy.deepcopy(versions)
    for version in changed:
        version["served"] = version["name"] == "v1beta2"  # v1beta1 quietly dropped
    cluster.patch(crd_api, "CustomResourceDefinition", name, {"spec": {"versions": changed}})
    try:
        code, report = drift_json(repo, box.kubeconfig)
    finally:
        cluster.patch(crd_api, "CustomResourceDefinition", name, {"spec": {"versions": versions}})
    assert code == 1
    assert brief(report) == [("version", "modified", "CustomResourceDefinition", None, name, None)]
    [finding] = report["findings"]
    assert finding["rule"] == "schema-drift"
    assert "serves ['v1beta2'] live but ['v1beta1', 'v1beta2'] in schemas/" in finding["message"]
    assert finding["file"] == "schemas/gpu-prod/index.json"


def test_clean_after_a_real_kueue_rewrote_what_it_admitted(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path: Path
) -> None:
    """Kueue's webhooks and controllers run: finalizers added, quantities re-encoded."""
    box = Sandbox("drift-kueue", root=sandboxes_dir)
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
        repo = servable_repo(tmp_path, box.connect())
        resources = Repository.open(repo).load(["gpu-staging"]).for_cluster("gpu-staging")
        assert [a.error for a in apply_all(box.connect(), resources) if a.error] == []
        cq = box.connect().get(KUEUE, "ClusterQueue", "team-a-cq")
        assert cq["metadata"]["finalizers"] == ["kueue.x-k8s.io/resource-in-use"]
        code, report = drift_json(repo, box.kubeconfig, cluster="gpu-staging")
        assert (code, report["findings"]) == (0, [])
        box.connect().patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {"stopPolicy": "Hold"}})
        code, report = drift_json(repo, box.kubeconfig, cluster="gpu-staging")
        assert code == 1
        assert [f["path"] for f in report["findings"]] == ["spec.stopPolicy"]
    finally:
        box.down()


def test_an_unknown_cluster_is_a_usage_error(tmp_path: Path) -> None:
    copy_estate(tmp_path, "clusters", "tenants")
    result = run_line(["kueue-gitops", "--repo", str(tmp_path), "drift", "--cluster", "nope"])
    assert result.exit_code == 2
    assert "no cluster 'nope' in clusters/" in result.stderr
