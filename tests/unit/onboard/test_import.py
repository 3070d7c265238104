"""import without a cluster: objects as a person writes them, tenants as the rule groups them,
profiles as the live objects show them, and files written whole or not at all."""

from __future__ import annotations

import copy
import dataclasses
import os
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.errors import AuditorError, ClusterAccessError, ConfigError
from auditor.k8s.authored import authored
from auditor.kueue.workloads import WORKLOAD_PRIORITY_SOURCE
from auditor.live.apierrors import DeadlineExceeded, KindNotServed, NotFound
from auditor.live.kube import KubeCluster
from auditor.model import Finding
from auditor.onboard import estate as onboard_estate
from auditor.onboard import importing, rendered
from auditor.render import folder as render_folder
from auditor.render.source import RENDERER_UNAVAILABLE, Rendered
from auditor.repo import manifests
from auditor.repo.profiles import cluster_profile

API = "kueue.x-k8s.io/v1beta2"
SERVER_META = {
    "uid": "0d6f",
    "resourceVersion": "812",
    "generation": 3,
    "creationTimestamp": "2026-12-01T10:00:00Z",
    "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
}
CQ_SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "queueingStrategy": {"type": "string", "default": "BestEffortFIFO"},
                "stopPolicy": {"type": "string", "default": "None"},
                "flavorFungibility": {
                    "type": "object",
                    "default": {},
                    "properties": {
                        "whenCanBorrow": {"type": "string", "default": "MayStopSearch"},
                        "whenCanPreempt": {"type": "string", "default": "TryNextFlavor"},
                    },
                },
                "preemption": {
                    "type": "object",
                    "properties": {
                        "reclaimWithinCohort": {"type": "string", "default": "Never"},
                        "withinClusterQueue": {"type": "string", "default": "Never"},
                    },
                },
            },
        }
    },
}


def live(kind: str, name: str, namespace: str | None = None, **body: t.Any) -> dict[str, t.Any]:
    api = {
        "Namespace": "v1",
        "PriorityClass": "scheduling.k8s.io/v1",
        "RoleBinding": "rbac.authorization.k8s.io/v1",
        "ClusterRole": "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
        "Role": "rbac.authorization.k8s.io/v1",
    }.get(kind, API)
    meta = {"name": name, **SERVER_META, **body.pop("metadata", {})}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": meta, **body, "status": {"x": 1}}


def cq(name: str, labels: dict[str, str] | None = None, **spec: t.Any) -> dict[str, t.Any]:
    return live(
        "ClusterQueue",
        name,
        spec={
            "cohortName": "research",
            "namespaceSelector": {"matchLabels": labels} if labels is not None else {},
            "queueingStrategy": "BestEffortFIFO",
            "stopPolicy": "None",
            "flavorFungibility": {
                "whenCanBorrow": "MayStopSearch",
                "whenCanPreempt": "TryNextFlavor",
            },
            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "Never"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": "default-flavor",
                            "resources": [
                                {"name": "cpu", "nominalQuota": "9"},
                                {"name": "memory", "nominalQuota": "36Gi"},
                            ],
                        }
                    ],
                }
            ],
            **spec,
        },
    )


def namespace(name: str, **labels: str) -> dict[str, t.Any]:
    return live(
        "Namespace",
        name,
        metadata={"labels": {"kubernetes.io/metadata.name": name, **labels}},
        spec={"finalizers": ["kubernetes"]},
    )


def lq(name: str, ns: str, queue: str) -> dict[str, t.Any]:
    return live("LocalQueue", name, ns, spec={"clusterQueue": queue})


def binding(
    name: str, ns: str, role: str, group: str, kind: str = "ClusterRole"
) -> dict[str, t.Any]:
    return live(
        "RoleBinding",
        name,
        ns,
        roleRef={"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        subjects=[{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}],
    )


SUBMITTER = live(
    "ClusterRole",
    "batch-submitter",
    rules=[
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", "get", "list"]},
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["localqueues"], "verbs": ["get", "list"]},
    ],
)
QUEUE_ADMIN = live(
    "ClusterRole",
    "queue-admin",
    rules=[{"apiGroups": ["kueue.x-k8s.io"], "resources": ["localqueues"], "verbs": ["*"]}],
)


def estate(*extra: dict[str, t.Any], cluster: str = "gpu-a") -> onboard_estate.Estate:
    objects = [
        live("ResourceFlavor", "default-flavor"),
        cq("team-a-cq", {"example.com/kueue": "enabled"}),
        cq("team-b-cq", {"example.com/kueue": "enabled"}),
        namespace("team-a", **{"example.com/kueue": "enabled", "example.com/team": "team-a"}),
        namespace("team-b", **{"example.com/kueue": "enabled", "example.com/team": "team-b"}),
        namespace("kube-system"),
        lq("main", "team-a", "team-a-cq"),
        lq("main", "team-b", "team-b-cq"),
        SUBMITTER,
        QUEUE_ADMIN,
        binding("team-a-submit", "team-a", "batch-submitter", "org:team-a"),
        binding("team-b-admin", "team-b", "queue-admin", "org:team-b"),
        live("PriorityClass", "system-node-critical", value=2000001000),
        live("PriorityClass", "batch-high", value=1000, preemptionPolicy="PreemptLowerPriority"),
        live("WorkloadPriorityClass", "high", value=1000),
        live("WorkloadPriorityClass", "low", value=10),
        *extra,
    ]
    workloads = [
        live(
            "Workload",
            "job-1",
            "team-a",
            spec={"priorityClassName": "low", "priorityClassSource": WORKLOAD_PRIORITY_SOURCE},
        )
    ]
    return onboard_estate.Estate(
        cluster,
        "v0.19.2",
        API,
        objects,
        schemas={("kueue.x-k8s.io", "ClusterQueue"): CQ_SCHEMA},
        workloads=workloads,
        controller="ServiceAccount kueue-system/kueue-controller-manager",
    )


OPTIONS = onboard_estate.Options(
    onboard_estate.TenantRule.parse("label=example.com/team"), ("@acme/platform",), "ctx-a"
)


def docs(text: str) -> list[dict[str, t.Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


# -- objects as a person writes them --


def test_authored_drops_server_metadata_status_and_defaults() -> None:
    obj = cq("q", {"k": "v"})
    obj["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
        "argocd.argoproj.io/tracking-id": "staging:kueue.x-k8s.io/ClusterQueue:/q",
        "team": "x",
    }
    obj["metadata"]["finalizers"] = ["kueue.x-k8s.io/resource-in-use"]
    written = authored(obj, CQ_SCHEMA)
    assert written["metadata"] == {"name": "q", "annotations": {"team": "x"}}
    assert "status" not in written
    spec = written["spec"]
    # defaults gone, a whole default object gone, a value that is not the default kept
    assert "queueingStrategy" not in spec and "stopPolicy" not in spec
    assert "flavorFungibility" not in spec
    assert spec["preemption"] == {"reclaimWithinCohort": "Any"}
    assert spec["namespaceSelector"] == {"matchLabels": {"k": "v"}}


def test_authored_keeps_a_value_that_differs_from_the_default() -> None:
    obj = cq("q", {"k": "v"}, queueingStrategy="StrictFIFO")
    assert authored(obj, CQ_SCHEMA)["spec"]["queueingStrategy"] == "StrictFIFO"


def test_authored_removes_the_built_in_kinds_go_defaults() -> None:
    written = authored(namespace("team-a", team="a"))
    assert written == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team-a", "labels": {"team": "a"}},
    }
    pc = authored(
        live(
            "PriorityClass",
            "p",
            value=5,
            preemptionPolicy="PreemptLowerPriority",
            globalDefault=False,
        )
    )
    assert pc == {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "p"},
        "value": 5,
    }


def test_authored_does_not_change_its_input() -> None:
    obj = cq("q", {"k": "v"})
    before = copy.deepcopy(obj)
    authored(obj, CQ_SCHEMA)
    assert obj == before


# -- tenants --


def test_tenants_by_label_queue_and_name() -> None:
    ns = namespace("ml-team-a-dev", **{"example.com/team": "team-a"})
    assert onboard_estate.TenantRule.parse("label=example.com/team").place(ns, set()) == (
        "team-a",
        "",
    )
    assert onboard_estate.TenantRule.parse("queue").place(ns, {"team-a-cq"}) == ("team-a-cq", "")
    assert onboard_estate.TenantRule.parse("name=ml-(team-[a-z])-.*").place(ns, set()) == (
        "team-a",
        "",
    )
    tenant, why = onboard_estate.TenantRule.parse("queue").place(ns, {"a", "b"})
    assert tenant is None and "several ClusterQueues (a, b)" in why


@pytest.mark.parametrize("text", ["label", "queue=x", "name=(", "team"])
def test_a_rule_that_cannot_be_read_is_a_usage_error(text: str) -> None:
    with pytest.raises(ConfigError, match="--tenants-by"):
        onboard_estate.TenantRule.parse(text)


def test_a_namespace_the_rule_cannot_place_is_written_unowned() -> None:
    # a scratch namespace without the team label, with a LocalQueue and a RoleBinding
    stray = namespace("scratch", **{"example.com/kueue": "enabled"})
    found = estate(
        stray,
        lq("main", "scratch", "team-a-cq"),
        binding("scratch-submit", "scratch", "batch-submitter", "org:research"),
    )
    made = onboard_estate.files(found, OPTIONS, {})
    assert made.unowned == {"scratch": "it has no label example.com/team"}
    assert made.tenants == {"team-a": ["team-a"], "team-b": ["team-b"]}  # the rest imported
    written = docs(made.files["clusters/gpu-a/unowned/scratch.yaml"])
    assert [(d["kind"], d["metadata"]["name"]) for d in written] == [
        ("Namespace", "scratch"),
        ("LocalQueue", "main"),
        ("RoleBinding", "scratch-submit"),
    ]
    assert not any("scratch" in path for path in made.files if path.startswith("tenants/"))
    assert "scratch-submit" not in made.files["clusters/gpu-a/rbac.yaml"]


def test_an_excluded_namespace_is_left_out_with_what_is_in_it() -> None:
    stray = namespace("scratch", **{"example.com/kueue": "enabled"})
    found = estate(
        stray,
        lq("main", "scratch", "team-a-cq"),
        binding("scratch-submit", "scratch", "batch-submitter", "org:research"),
    )
    options = dataclasses.replace(OPTIONS, exclude=frozenset({"scratch", "not-there"}))
    made = onboard_estate.files(found, options, {})
    assert made.unowned == {} and made.excluded == ["scratch"]
    assert not any("scratch" in text for text in made.files.values())


def test_rbac_whose_role_does_not_exist_is_refused() -> None:
    dangling = binding("ghost", "team-a", "gone-role", "org:team-a")
    with pytest.raises(ConfigError, match="RoleBinding team-a/ghost binds ClusterRole gone-role"):
        onboard_estate.files(estate(dangling), OPTIONS, {})


# -- the files --


def test_files_follow_the_layout() -> None:
    made = onboard_estate.files(estate(), OPTIONS, {})
    assert sorted(made.files) == [
        "clusters/gpu-a/clusterqueues.yaml",
        "clusters/gpu-a/priorityclasses.yaml",
        "clusters/gpu-a/profile.yaml",
        "clusters/gpu-a/rbac.yaml",
        "clusters/gpu-a/resourceflavors.yaml",
        "tenants/team-a/gpu-a/localqueues.yaml",
        "tenants/team-a/gpu-a/namespace.yaml",
        "tenants/team-a/gpu-a/rbac.yaml",
        "tenants/team-a/profile.yaml",
        "tenants/team-b/gpu-a/localqueues.yaml",
        "tenants/team-b/gpu-a/namespace.yaml",
        "tenants/team-b/gpu-a/rbac.yaml",
        "tenants/team-b/profile.yaml",
    ]
    assert made.tenants == {"team-a": ["team-a"], "team-b": ["team-b"]}
    classes = docs(made.files["clusters/gpu-a/priorityclasses.yaml"])
    # WorkloadPriorityClasses then PriorityClasses, each by name; system-* left to the server
    assert [(d["kind"], d["metadata"]["name"]) for d in classes] == [
        ("WorkloadPriorityClass", "high"),
        ("WorkloadPriorityClass", "low"),
        ("PriorityClass", "batch-high"),
    ]
    rbac = docs(made.files["clusters/gpu-a/rbac.yaml"])
    assert [d["metadata"]["name"] for d in rbac] == ["batch-submitter", "queue-admin"]  # bound
    [queue] = docs(made.files["tenants/team-a/gpu-a/localqueues.yaml"])
    assert queue["metadata"]["annotations"] == {
        "argocd.argoproj.io/sync-options": "Prune=false,Delete=false"
    }


def test_quotas_are_written_as_the_server_prints_them() -> None:
    queue = cq("q", {"k": "v"})
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = 9
    found = estate(queue)
    found.objects = [o for o in found.objects if o["kind"] != "ClusterQueue"] + [queue]
    [written] = docs(
        onboard_estate.files(found, OPTIONS, {}).files["clusters/gpu-a/clusterqueues.yaml"]
    )
    resources = written["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert resources == [
        {"name": "cpu", "nominalQuota": "9"},
        {"name": "memory", "nominalQuota": "36Gi"},
    ]


def test_import_twice_writes_the_same_text() -> None:
    first = onboard_estate.files(estate(), OPTIONS, {})
    shuffled = estate()
    shuffled.objects.reverse()
    assert onboard_estate.files(shuffled, OPTIONS, {}).files == first.files


def test_profiles_derive_from_what_is_live() -> None:
    made = onboard_estate.files(estate(), OPTIONS, {})
    [cluster] = docs(made.files["clusters/gpu-a/profile.yaml"])
    assert cluster["spec"]["admissionLabel"] == {"key": "example.com/kueue", "value": "enabled"}
    assert cluster["spec"]["tenantLabel"] == "example.com/team"
    assert cluster["spec"]["kueue"] == {"apiVersions": ["v1beta2"], "version": "v0.19.2"}
    assert cluster["spec"]["priority"] == {"workloadOrder": ["low", "high"]}
    assert cluster["spec"]["drift"] == {
        "trustedSubjects": ["ServiceAccount kueue-system/kueue-controller-manager"]
    }
    [team_a] = docs(made.files["tenants/team-a/profile.yaml"])
    assert team_a["spec"] == {
        "owners": ["@acme/platform"],
        "group": "org:team-a",
        "clusters": {"gpu-a": {"namespaces": ["team-a"], "clusterQueues": ["team-a-cq"]}},
        "priorityClasses": {"workload": ["low"]},
        "flavors": ["default-flavor"],
    }


def test_the_profile_names_the_argo_cd_release_read_and_none_unread() -> None:
    """Its renderers are the ones validate renders the cluster's folders with."""
    read = estate()
    read.argocd_version = "v3.4.14"
    [cluster] = docs(onboard_estate.files(read, OPTIONS, {}).files["clusters/gpu-a/profile.yaml"])
    assert cluster["spec"]["argocd"] == {"version": "v3.4.14"}
    [unread] = docs(
        onboard_estate.files(estate(), OPTIONS, {}).files["clusters/gpu-a/profile.yaml"]
    )
    assert "argocd" not in unread["spec"]  # never guessed


def test_a_second_cluster_joins_the_tenant_profile() -> None:
    first = onboard_estate.files(estate(), OPTIONS, {})
    [profile] = docs(first.files["tenants/team-a/profile.yaml"])
    profile["spec"]["preemption"] = {"checkpointing": {"validated": "yes"}}  # a person's addition
    second = onboard_estate.files(estate(cluster="gpu-b"), OPTIONS, {"team-a": profile})
    [joined] = docs(second.files["tenants/team-a/profile.yaml"])
    assert sorted(joined["spec"]["clusters"]) == ["gpu-a", "gpu-b"]
    assert joined["spec"]["preemption"] == {"checkpointing": {"validated": "yes"}}
    assert "tenants/team-a/gpu-b/namespace.yaml" in second.files


def test_capacity_is_what_the_flavors_nodes_hold() -> None:
    flavor = live("ResourceFlavor", "default-flavor", spec={"nodeLabels": {"pool": "a"}})
    found = estate()
    found.objects = [o for o in found.objects if o["kind"] != "ResourceFlavor"] + [flavor]
    found.nodes = [
        {
            "metadata": {"name": f"n{i}", "labels": {"pool": "a"}},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi"}},
        }
        for i in range(2)
    ] + [
        {
            "metadata": {"name": "other", "labels": {"pool": "b"}},
            "status": {"allocatable": {"cpu": "64"}},
        }
    ]
    assert onboard_estate.capacity(found) == {"default-flavor": {"cpu": "16", "memory": "64Gi"}}


def test_without_any_node_a_flavor_holds_what_its_queues_promise() -> None:
    assert onboard_estate.capacity(estate()) == {"default-flavor": {"cpu": "18", "memory": "72Gi"}}


def test_controller_release_from_the_image_tag() -> None:
    deployment = {
        "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system"},
        "spec": {
            "template": {
                "spec": {
                    "serviceAccountName": "kueue-controller-manager",
                    "containers": [
                        {"name": "manager", "image": "registry.k8s.io/kueue/kueue:v0.17.0"}
                    ],
                }
            }
        },
    }
    assert importing.controller_release(deployment) == (
        "v0.17.0",
        "ServiceAccount kueue-system/kueue-controller-manager",
    )


def test_a_kueue_older_than_the_oldest_supported_is_refused() -> None:
    with pytest.raises(ConfigError, match="older than the oldest release"):
        importing.supported("v0.8.0")
    assert importing.supported("v0.17.0") == "v0.17.0"


# -- written whole --


def test_written_whole_then_unchanged_then_edits_are_kept(tmp_path: Path) -> None:
    files = {"clusters/c/a.yaml": "a: 1\n", "tenants/t/c/b.yaml": "b: 1\n"}
    first = importing.write_whole(tmp_path, "c", files, None)
    assert first.changed == sorted(files)
    again = importing.write_whole(tmp_path, "c", files, None)
    assert again.changed == [] and again.unchanged == 2
    # the cluster changed: a file import wrote is rewritten
    assert importing.write_whole(
        tmp_path, "c", {**files, "clusters/c/a.yaml": "a: 2\n"}, None
    ).changed == ["clusters/c/a.yaml"]
    (tmp_path / "tenants/t/c/b.yaml").write_text("b: 1  # mine\n")
    with pytest.raises(importing.EditedByHand) as err:
        importing.write_whole(tmp_path, "c", {**files, "tenants/t/c/b.yaml": "b: 2\n"}, None)
    assert [c.path for c in err.value.conflicts] == ["tenants/t/c/b.yaml"]
    assert "-b: 1  # mine" in err.value.conflicts[0].diff and "+b: 2" in err.value.conflicts[0].diff
    assert (tmp_path / "tenants/t/c/b.yaml").read_text() == "b: 1  # mine\n"
    forced = importing.write_whole(
        tmp_path, "c", {**files, "tenants/t/c/b.yaml": "b: 2\n"}, None, force=True
    )
    assert forced.changed == ["clusters/c/a.yaml", "tenants/t/c/b.yaml"]


def test_a_file_import_never_wrote_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "clusters/c").mkdir(parents=True)
    (tmp_path / "clusters/c/a.yaml").write_text("by: init\n")
    with pytest.raises(importing.EditedByHand):
        importing.write_whole(
            tmp_path, "c", {"clusters/c/a.yaml": "by: import\n", "clusters/c/b.yaml": "x\n"}, None
        )
    assert not (tmp_path / "clusters/c/b.yaml").exists()  # nothing written
    assert not (tmp_path / ".kueue-gitops").exists()


def test_what_the_cluster_no_longer_holds_leaves(tmp_path: Path) -> None:
    importing.write_whole(
        tmp_path, "c", {"clusters/c/a.yaml": "a\n", "clusters/c/b.yaml": "b\n"}, None
    )
    out = importing.write_whole(tmp_path, "c", {"clusters/c/a.yaml": "a\n"}, None)
    assert out.changed == ["clusters/c/b.yaml"]
    assert not (tmp_path / "clusters/c/b.yaml").exists()


def test_a_failed_move_puts_everything_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    importing.write_whole(tmp_path, "c", {"clusters/c/a.yaml": "a\n"}, None)
    real = os.replace
    calls = []

    def failing(src: t.Any, dst: t.Any) -> None:
        calls.append(dst)
        if str(dst).endswith("z.yaml"):
            raise OSError("disk full")
        real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(AuditorError, match="disk full; nothing was written"):
        importing.write_whole(
            tmp_path, "c", {"clusters/c/a.yaml": "a2\n", "clusters/c/z.yaml": "z\n"}, None
        )
    monkeypatch.undo()
    assert (tmp_path / "clusters/c/a.yaml").read_text() == "a\n"
    assert not (tmp_path / "clusters/c/z.yaml").exists()
    assert sorted(p.name for p in (tmp_path / ".kueue-gitops").iterdir()) == ["imported.json"]


# -- reading: a fake at the reader's interface (KubeCluster's served_versions, get, list) --


class FakeCluster:
    name = "gpu-a"

    def __init__(
        self,
        served: list[str],
        version: str = "v0.19.2",
        fail: Exception | None = None,
        holds: dict[tuple[str, str], list[dict[str, t.Any]]] | None = None,
        absent: t.Collection[str] = (),
    ):
        self.served, self.version, self.fail = served, version, fail
        self.holds = holds or {}  # (apiVersion, kind) -> objects; a kind held in none is empty
        self.absent = absent  # kinds GET finds none of (Deployment, ConfigMap)

    def served_versions(self, group: str) -> list[str]:
        return self.served

    def get(self, api: str, kind: str, name: str, namespace: str | None = None) -> dict[str, t.Any]:
        if kind in self.absent:
            raise NotFound(f"{kind} {namespace}/{name} not found")
        if kind == "Deployment":
            pod = {"containers": [{"image": f"registry.k8s.io/kueue/kueue:{self.version}"}]}
            return {"metadata": {"namespace": namespace}, "spec": {"template": {"spec": pod}}}
        return {"metadata": {"name": name, "namespace": namespace}, "data": {}}

    def list(self, api: str, kind: str, selector: str = "") -> list[dict[str, t.Any]]:
        if self.fail is not None and kind == "ClusterRole":
            raise self.fail
        if kind in {k for _, k in self.holds} and (api, kind) not in self.holds:
            raise KindNotServed(f"cluster gpu-a does not serve {api} {kind}")
        return self.holds.get((api, kind), [])


def read(fake: FakeCluster) -> onboard_estate.Estate:
    return importing.read_estate(t.cast(KubeCluster, fake))


def test_a_cluster_without_kueue_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"serves no Kueue API \(kueue.x-k8s.io\)"):
        read(FakeCluster([]))


def test_a_kueue_too_old_is_refused() -> None:
    with pytest.raises(ConfigError, match="older than the oldest release"):
        read(FakeCluster(["v1beta1"], version="v0.6.2"))


@pytest.mark.parametrize(
    ("fail", "said"),
    [
        (ClusterAccessError("cluster gpu-a: LIST ClusterRole forbidden (403)"), "forbidden"),
        (DeadlineExceeded("cluster gpu-a: deadline passed"), "deadline passed"),
    ],
)
def test_anything_unread_stops_the_import(fail: Exception, said: str) -> None:
    with pytest.raises(ClusterAccessError) as err:
        read(FakeCluster(["v1beta1", "v1beta2"], fail=fail))
    assert "LIST ClusterRole" in str(err.value) and said in str(err.value)
    assert "nothing was written" in str(err.value)
    assert err.value.exit_code == 3


def test_a_cluster_read_whole() -> None:
    found = read(FakeCluster(["v1beta1", "v1beta2"]))
    assert (found.kueue_version, found.kueue_api) == ("v0.19.2", "kueue.x-k8s.io/v1beta2")
    assert [o["kind"] for o in found.objects] == ["ConfigMap"]  # Kueue's, by GET


def test_what_could_not_be_found_is_said_with_what_it_means() -> None:
    fake = FakeCluster(["v1beta1", "v1beta2"], absent={"Deployment", "ConfigMap"})
    found = importing.read_estate(t.cast(KubeCluster, fake), "v0.19.2")
    assert found.kueue_version == "v0.19.2" and found.controller is None
    deployment, config, argocd = found.unread
    assert deployment.startswith(
        "no Deployment kueue-system/kueue-controller-manager: the Kueue release is "
        "--kueue-version's (v0.19.2) and Kueue's own ServiceAccount is unknown"
    )
    assert config.startswith(
        "no ConfigMap kueue-system/kueue-manager-config: Kueue's Configuration was not imported"
    )
    assert "clusters/gpu-a/kueue/manager-config.yaml" in config
    assert argocd.startswith(
        "Argo CD's release: no Deployment labelled app.kubernetes.io/name=argocd-repo-server "
        "runs there (Argo CD runs in another cluster, or in another shape); "
        "clusters/gpu-a/profile.yaml names no argocd.version"
    )
    whole = read(FakeCluster(["v1beta1", "v1beta2"], holds={DEPLOYMENTS: [REPO_SERVER]}))
    assert (whole.unread, whole.argocd_version) == ([], "v3.5.7")


DEPLOYMENTS = ("apps/v1", "Deployment")
# upstream install.yaml's repo-server (v3.5.7), as the API server returns it
REPO_SERVER = {
    "metadata": {
        "name": "argocd-repo-server",
        "namespace": "argocd",
        "labels": {
            "app.kubernetes.io/component": "repo-server",
            "app.kubernetes.io/name": "argocd-repo-server",
            "app.kubernetes.io/part-of": "argocd",
        },
    },
    "spec": {
        "template": {
            "spec": {
                "initContainers": [{"name": "copyutil", "image": "quay.io/argoproj/argocd:v3.5.7"}],
                "containers": [
                    {"name": "argocd-repo-server", "image": "quay.io/argoproj/argocd:v3.5.7"}
                ],
            }
        }
    },
}


def test_a_kind_the_preferred_version_does_not_serve_is_read_where_it_is_served() -> None:
    # Kueue v0.9.1: everything in v1beta1 but Cohort, which is v1alpha1 only.
    cohort = live("Cohort", "research", apiVersion="kueue.x-k8s.io/v1alpha1")
    schema = {"type": "object", "properties": {"spec": {"type": "object"}}}
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "spec": {
            "group": "kueue.x-k8s.io",
            "names": {"kind": "Cohort"},
            "versions": [{"name": "v1alpha1", "schema": {"openAPIV3Schema": schema}}],
        },
    }
    found = read(
        FakeCluster(
            ["v1beta1", "v1alpha1"],
            version="v0.9.1",
            holds={
                ("kueue.x-k8s.io/v1alpha1", "Cohort"): [cohort],
                ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): [crd],
            },
        )
    )
    assert found.kueue_api == "kueue.x-k8s.io/v1beta1"
    assert [o for o in found.objects if o["kind"] == "Cohort"] == [cohort]
    assert found.schemas[("kueue.x-k8s.io", "Cohort")] == schema


# -- what tenants really use --


def test_priority_classes_of_v1beta2_workloads_and_jobs_are_the_tenants() -> None:
    found = estate()
    found.workloads = [
        # as Kueue v0.16+ serves it: v1beta2 priorityClassRef
        live(
            "Workload",
            "job-2",
            "team-a",
            spec={
                "priorityClassRef": {
                    "group": "kueue.x-k8s.io",
                    "kind": "WorkloadPriorityClass",
                    "name": "high",
                },
                "priority": 1000,
            },
        ),
        live(
            "Workload",
            "job-3",
            "team-b",
            spec={
                "priorityClassRef": {
                    "group": "scheduling.k8s.io",
                    "kind": "PriorityClass",
                    "name": "batch-high",
                },
                "priority": 1000,
            },
        ),
        # a Job whose Workload is not there (yet): its label
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": "j",
                "namespace": "team-a",
                "labels": {"kueue.x-k8s.io/priority-class": "low"},
            },
        },
    ]
    made = onboard_estate.files(found, OPTIONS, {})
    [team_a] = docs(made.files["tenants/team-a/profile.yaml"])
    [team_b] = docs(made.files["tenants/team-b/profile.yaml"])
    assert team_a["spec"]["priorityClasses"] == {"workload": ["high", "low"]}
    assert team_b["spec"]["priorityClasses"] == {"pod": ["batch-high"]}


# -- keys in the order a person writes them --


def test_keys_are_written_in_the_order_a_person_writes_them() -> None:
    queue = cq("q", {"example.com/kueue": "enabled"})
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"] = [
        # as the API server returns a custom resource: keys by name
        {"borrowingLimit": "4", "lendingLimit": "2", "name": "cpu", "nominalQuota": "9"},
        {"name": "memory", "nominalQuota": "36Gi"},
    ]
    queue["spec"]["resourceGroups"][0] = dict(sorted(queue["spec"]["resourceGroups"][0].items()))
    role = live(
        "ClusterRole",
        "queue-admin",
        rules=[{"verbs": ["*"], "resources": ["localqueues"], "apiGroups": ["kueue.x-k8s.io"]}],
    )
    found = estate(queue)
    found.objects = [o for o in found.objects if o is not QUEUE_ADMIN] + [role]
    made = onboard_estate.files(found, OPTIONS, {})
    text = made.files["clusters/gpu-a/clusterqueues.yaml"]
    assert (
        "            - name: cpu\n"
        "              nominalQuota: '9'\n"
        "              borrowingLimit: '4'\n"
        "              lendingLimit: '2'\n"
    ) in text
    assert text.index("coveredResources") < text.index("flavors:")
    rbac = made.files["clusters/gpu-a/rbac.yaml"]
    assert (
        "  - apiGroups: [kueue.x-k8s.io]\n    resources: [localqueues]\n    verbs: ['*']\n"
    ) in rbac
    binding_text = made.files["tenants/team-a/gpu-a/rbac.yaml"]
    assert binding_text.index("name: team-a-submit") < binding_text.index("namespace: team-a")
    for path, written in made.files.items():
        for doc in docs(written):
            assert list(doc)[:3] == ["apiVersion", "kind", "metadata"], path
            assert next(iter(doc["metadata"])) == "name", path


# -- the platform's identities, proposed for review --


def test_platform_identities_are_proposed_from_what_is_live_and_marked_for_review() -> None:
    admin = live(
        "ClusterRoleBinding",
        "cluster-admin",
        roleRef={
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "cluster-admin",
        },
        subjects=[
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}
        ],
    )
    argocd = live(
        "ClusterRoleBinding",
        "argocd-application-controller",
        roleRef={
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "argocd-application-controller",
        },
        subjects=[
            {
                "kind": "ServiceAccount",
                "name": "argocd-application-controller",
                "namespace": "argocd",
            }
        ],
    )
    argocd_role = live(
        "ClusterRole",
        "argocd-application-controller",
        rules=[{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
    )
    made = onboard_estate.files(estate(admin, argocd, argocd_role), OPTIONS, {})
    assert made.identities == {
        "Group system:masters": "bound to cluster-admin by cluster-admin",
        "ServiceAccount argocd/argocd-application-controller": "Argo CD syncs as it",
        "ServiceAccount kueue-system/kueue-controller-manager": "Kueue's controller",
    }
    text = made.files["clusters/gpu-a/profile.yaml"]
    assert "  # REVIEW: proposed by `kueue-gitops import` from what is live." in text
    assert '    - "Group system:masters"   # bound to cluster-admin by cluster-admin\n' in text
    [profile] = docs(text)
    assert profile["spec"]["platformIdentities"] == list(made.identities)
    # the profile as written is one the repository reads
    [resource], problems = manifests.load_text(text, "clusters/gpu-a/profile.yaml")
    assert problems == []
    assert cluster_profile(resource, "gpu-a").platform_identities == tuple(made.identities)


# -- a rendered folder is never written as plain files --


def _rendered_repo(tmp_path: Path) -> dict[str, str]:
    """A repository imported once whose team-a folder then moved to kustomize."""
    first = onboard_estate.files(estate(), OPTIONS, {})
    importing.write_whole(tmp_path, "gpu-a", first.files, None)
    folder = tmp_path / "tenants/team-a/gpu-a"
    (folder / "kustomization.yaml").write_text(
        "resources: [namespace.yaml, localqueues.yaml, rbac.yaml]\n"
    )
    return {p.name: p.read_text() for p in folder.iterdir()}


def _fake_render(monkeypatch: pytest.MonkeyPatch, findings: list[t.Any] | None = None) -> None:
    """render_folder.build as a fake of our own renderer: the folder's plain files, as kustomize
    would list them (or the findings that stopped it)."""

    def build(tree: t.Any, source: t.Any) -> Rendered:
        if findings:
            return Rendered(findings=findings)
        found = []
        for name in ("namespace.yaml", "localqueues.yaml", "rbac.yaml"):
            path = f"{source.path}/{name}"
            loaded, problems = manifests.load_text(tree.read(path).decode(), path)
            assert problems == []
            found += loaded
        return Rendered(resources=found)

    monkeypatch.setattr(render_folder, "build", build)


def test_a_rendered_folder_is_not_written_and_its_difference_is_shown_at_its_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _rendered_repo(tmp_path)
    _fake_render(monkeypatch)
    changed = estate()
    for obj in changed.objects:
        if obj["kind"] == "LocalQueue" and obj["metadata"]["namespace"] == "team-a":
            obj["spec"]["clusterQueue"] = "team-b-cq"  # moved on the cluster by hand
    made = onboard_estate.files(changed, OPTIONS, {})
    plain, folders = rendered.split(tmp_path, "gpu-a", made.files)
    assert not any(p.startswith("tenants/team-a/gpu-a/") for p in plain)
    assert "tenants/team-a/profile.yaml" in plain and "tenants/team-b/gpu-a/rbac.yaml" in plain
    [folder] = folders
    assert (folder.path, folder.tool, folder.why_not) == ("tenants/team-a/gpu-a", "kustomize", "")
    assert "tenants/team-a/gpu-a/localqueues.yaml (LocalQueue/team-a/main)" in folder.diff
    assert "-  clusterQueue: team-a-cq\n+  clusterQueue: team-b-cq\n" in folder.diff
    assert "namespace.yaml" not in folder.diff  # the same on both sides: not shown
    importing.write_whole(tmp_path, "gpu-a", plain, None, rendered=[folder.path])
    after = {p.name: p.read_text() for p in (tmp_path / "tenants/team-a/gpu-a").iterdir()}
    assert after == before  # nothing written, nothing removed


def test_a_rendered_folder_that_cannot_be_rendered_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _rendered_repo(tmp_path)
    why = Finding(RENDERER_UNAVAILABLE, "no kustomize v5.7.1 here: run sandbox build")
    _fake_render(monkeypatch, [why])
    plain, [folder] = rendered.split(
        tmp_path, "gpu-a", onboard_estate.files(estate(), OPTIONS, {}).files
    )
    assert folder.why_not == "no kustomize v5.7.1 here: run sandbox build" and not folder.diff
    assert not any(p.startswith("tenants/team-a/gpu-a/") for p in plain)


# -- the command, on a fake of the reader: what its summary says --


def test_the_summary_says_what_is_unowned_proposed_and_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from auditor.cli.main import cli
    from auditor.schemas import fetch as schemas_fetch

    holds = {
        ("v1", "Namespace"): [
            namespace("team-a", **{"example.com/kueue": "enabled", "example.com/team": "team-a"}),
            namespace("scratch", **{"example.com/kueue": "enabled"}),
        ],
        ("kueue.x-k8s.io/v1beta2", "LocalQueue"): [
            lq("main", "team-a", "team-a-cq"),
            lq("main", "scratch", "team-a-cq"),
        ],
        ("kueue.x-k8s.io/v1beta2", "ClusterQueue"): [
            cq("team-a-cq", {"example.com/kueue": "enabled"})
        ],
    }
    fake = FakeCluster(["v1beta1", "v1beta2"], holds=holds, absent={"Deployment", "ConfigMap"})
    monkeypatch.setattr(KubeCluster, "connect", staticmethod(lambda *a, **k: fake))
    monkeypatch.setattr(importing, "fetched_schemas", lambda c: schemas_fetch.Fetched("gpu-a"))
    done = CliRunner().invoke(
        cli,
        ["--repo", str(tmp_path), "import", "--cluster", "gpu-a", "--tenants-by",
         "label=example.com/team", "--kueue-version", "v0.19.2", "--exclude", "gone"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert (
        "unowned: namespace scratch (--tenants-by label=example.com/team cannot place it: it has "
        "no label example.com/team) is written to clusters/gpu-a/unowned/scratch.yaml; validate "
        "names it until a tenant has it (or import again with --exclude scratch to leave it out)"
    ) in lines
    assert "--exclude: cluster gpu-a has no namespace gone" in lines
    assert any(line.startswith("review: platformIdentities proposed") for line in lines)
    assert any(line.startswith("review: no identity of Argo CD's") for line in lines)
    assert [line.split(":")[1].strip() for line in lines if line.startswith("not found:")] == [
        "no Deployment kueue-system/kueue-controller-manager",
        "no ConfigMap kueue-system/kueue-manager-config",
        "Argo CD's release",
    ]
    assert (tmp_path / "clusters/gpu-a/unowned/scratch.yaml").is_file()
