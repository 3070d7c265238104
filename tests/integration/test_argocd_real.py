"""The committed argocd/ run by a real Argo CD (the pinned release) against two sandboxes.

gpu-prod's sandbox runs Kueue, kube-controller-manager and Argo CD (Redis, repo-server,
application controller, ApplicationSet controller); gpu-staging's is a bare control plane.
Argo CD reads this working tree from a local clone and syncs it through the ApplicationSets and
AppProjects exactly as committed (the repository URL aside). Scratch commits go to that clone
only; each test that pushes one puts the repository back before it ends.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import typing as t
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from auditor.drift import audit
from auditor.errors import ClusterAccessError
from auditor.live.kube import KubeCluster
from auditor.render import tools
from auditor.repo.layout import Repository
from auditor.repo.profiles import ClusterProfile
from auditor.sandbox import Sandbox, Toolchain, argocd, argocd_control
from auditor.sandbox.build import ARGOCD_MODULE, module_dir
from tests.conftest import own_context, run_line
from tests.estate import ESTATE
from tests.integration.conftest import repo_kueue_config
from tests.integration.waiting import eventually

KUEUE = "kueue.x-k8s.io/v1beta2"
Json = dict[str, t.Any]
SYNC_TIMEOUT = 240.0


def folder_applications(repo: Path) -> dict[str, tuple[str, str, str, str | None]]:
    """Application -> (cluster, project, source path, destination namespace): one per cluster
    folder and one per tenant's cluster folder, as the repository at `repo` holds them."""
    apps: dict[str, tuple[str, str, str, str | None]] = {
        f"{p.name}-platform": (p.name, "kueue-platform", f"clusters/{p.name}", None)
        for p in (repo / "clusters").iterdir()
        if p.is_dir()
    }
    for folder in (repo / "tenants").glob("*/*"):
        if folder.is_dir():
            tenant, cluster = folder.parent.name, folder.name
            path = f"tenants/{tenant}/{cluster}"
            apps[f"{tenant}-{cluster}"] = (cluster, f"tenant-{tenant}", path, tenant)
    return apps


@dataclass
class Argo:
    host: Sandbox  # gpu-prod: Kueue and Argo CD run here
    boxes: dict[str, Sandbox]  # repository cluster -> its sandbox
    served: argocd.ArgoState
    work: Path  # a clone of the served repository, for scratch commits
    first: dict[str, Json]  # the Applications right after the first sync
    expected: dict[str, tuple[str, str, str, str | None]]  # those with a registered cluster
    unplaced: set[str]  # clusters with folders but no sandbox registered here

    def push(self, message: str, change: t.Callable[[Path], None]) -> str:
        return argocd_control.push(self.served, self.work, message, change)

    def synced_at(self, commit: str, names: t.Collection[str]) -> dict[str, Json]:
        """Refresh `names` and wait until each has run a sync of `commit` to its end."""
        for name in names:
            argocd_control.refresh(self.host, name)

        def done(apps: dict[str, Json]) -> bool:
            return all(_operated(apps.get(n), commit) for n in names)

        return argocd_control.wait_for(
            self.host, done, timeout=SYNC_TIMEOUT, what=f"a sync of {commit}"
        )

    def restore(self, names: t.Collection[str]) -> None:
        """Push the repository as it was served first; wait until `names` are compared at that
        commit and Synced/Healthy (no sync runs when nothing differs, so none is awaited)."""
        commit = self.push("restore", lambda work: _checkout(work, self.served.commit))
        for name in names:
            argocd_control.refresh(self.host, name)

        def done(apps: dict[str, Json]) -> bool:
            return all(
                apps[n]["status"]["sync"].get("revision") == commit
                and argocd_control.sync_status(apps[n]) == ("Synced", "Healthy")
                for n in names
            )

        argocd_control.wait_for(self.host, done, timeout=SYNC_TIMEOUT, what="Synced/Healthy again")

    def connect(self, profile: ClusterProfile) -> KubeCluster:
        return self.boxes[profile.name].connect()


def _operated(app: Json | None, commit: str) -> bool:
    op = ((app or {}).get("status") or {}).get("operationState") or {}
    result = op.get("syncResult") or {}
    return result.get("revision") == commit and op.get("phase") in ("Succeeded", "Failed", "Error")


def _checkout(work: Path, commit: str) -> None:
    """The tree of `commit` in the clone's working tree (as a change on top of main)."""
    subprocess.run(["git", "checkout", commit, "--", "."], cwd=work, check=True)
    listed = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", commit],
        cwd=work,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    present = subprocess.run(
        ["git", "ls-files"], cwd=work, check=True, capture_output=True, text=True
    ).stdout.split()
    for extra in set(present) - set(listed):
        (work / extra).unlink()


def audited(source: Path, dest: Path) -> Repository:
    """The repository at `source` as drift reads it here, profiles as committed (the sandbox's
    Kueue is upstream's ServiceAccount, which they trust)."""
    for folder in ("clusters", "tenants"):
        shutil.copytree(source / folder, dest / folder)
    return Repository.open(dest)


@pytest.fixture(scope="module")
def argo(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[Argo]:
    repo = Repository.open(ESTATE)  # served as it is on disk now
    prod = Sandbox(f"argo-prod-{os.getpid()}", root=sandboxes_dir)
    staging = Sandbox(f"argo-staging-{os.getpid()}", root=sandboxes_dir)
    boxes = {"gpu-prod": prod, "gpu-staging": staging}
    try:
        prod.up(toolchain, with_kueue=True, kueue_config=repo_kueue_config("gpu-prod"))
        staging.up(toolchain)
        served = argocd.start(prod, boxes, repo, toolchain.testenv, log=print)
        work = argocd_control.clone(served, tmp_path_factory.mktemp("argo-work") / "repo")
        folders = folder_applications(work)
        # The ApplicationSet controller creates no Application for an unregistered cluster.
        expected = {n: f for n, f in folders.items() if f[0] in boxes}
        unplaced = {f[0] for f in folders.values()} - set(boxes)

        def first_sync(apps: dict[str, Json]) -> bool:
            return set(apps) == set(expected) and all(
                argocd_control.sync_status(a) == ("Synced", "Healthy") for a in apps.values()
            )

        started = time.monotonic()
        first = argocd_control.wait_for(
            prod, first_sync, timeout=SYNC_TIMEOUT, what="the first sync"
        )
        print(f"first sync of every Application: {time.monotonic() - started:.1f}s")
    except Exception as exc:
        staging.down()
        prod.down()
        pytest.fail(f"Argo CD could not sync the sandboxes: {exc}", pytrace=False)
    yield Argo(prod, boxes, served, work, first, expected, unplaced)
    print(f"peak memory (MiB): {argocd_control.memory_mib(prod)}")
    staging.down()
    prod.down()


def _keys(entries: t.Iterable[Json]) -> set[tuple[str, str, str | None, str]]:
    return {
        (e.get("group") or "", e["kind"], e.get("namespace") or None, e["name"]) for e in entries
    }


def test_the_generators_make_exactly_the_expected_applications_and_each_syncs(
    argo: Argo,
) -> None:
    """One Application per folder of a registered cluster, each Synced/Healthy and managing
    exactly the objects of its folder (profile.yaml never), applied server-side."""
    repo = Repository.open(argo.work)
    assert set(argo.first) == set(argo.expected)
    assert {f[0] for f in argo.expected.values()} == {"gpu-prod", "gpu-staging"}
    for name, (cluster, project, path, namespace) in argo.expected.items():
        app = argo.first[name]
        spec = app["spec"]
        assert argocd_control.sync_status(app) == ("Synced", "Healthy"), name
        assert (spec["project"], spec["source"]["path"]) == (project, path)
        assert (spec["destination"]["name"], spec["destination"].get("namespace")) == (
            cluster,
            namespace,
        )
        assert spec["source"]["repoURL"] == argo.served.url
        wanted = {
            (r.key.group, r.kind, r.namespace, r.name)
            for r in repo.load([cluster]).for_cluster(cluster)
            if r.file.startswith(path + "/")
        }
        assert _keys(app["status"]["resources"]) == wanted, name
        assert app["status"]["sync"]["revision"] == argo.served.commit
    # A folder of a cluster Argo CD does not know is refused by name, not silently skipped.
    conditions = [
        c.get("message", "")
        for appset in argo.host.connect().list(argocd.API, "ApplicationSet")
        for c in (appset.get("status") or {}).get("conditions") or []
    ]
    for cluster in argo.unplaced:
        assert any(f"there are no clusters with this name: {cluster}" in m for m in conditions)
    cq = argo.host.connect().get(KUEUE, "ClusterQueue", "team-a-cq")
    assert {(m["manager"], m["operation"]) for m in cq["metadata"]["managedFields"]} >= {
        ("argocd-controller", "Apply")
    }


def _created(argo: Argo, app: Json) -> dict[str, list[str]]:
    """Kind -> the creationTimestamps of the objects `app` manages, read from its cluster."""
    cluster = argo.boxes[app["spec"]["destination"]["name"]].connect()
    out: dict[str, list[str]] = {}
    for r in app["status"]["resources"]:
        api = f"{r['group']}/{r['version']}" if r.get("group") else r["version"]
        obj = cluster.get(api, r["kind"], r["name"], r.get("namespace"))
        out.setdefault(r["kind"], []).append(obj["metadata"]["creationTimestamp"])
    return out


def test_sync_waves_apply_flavors_and_cohorts_before_queues_and_namespaces_first(
    argo: Argo,
) -> None:
    """The order Argo CD applied in, read from the objects' own history: each was created by
    the first sync of the served commit (the Application's first history entry), and Argo CD
    waits 2s between two waves (ARGOCD_SYNC_WAVE_DELAY), so an object of an earlier wave was
    created in an earlier second. Whichever sync Argo CD ran last, this stays true."""
    ordered = 0
    for name, app in argo.first.items():
        assert app["status"]["history"][0]["revision"] == argo.served.commit, name
        created = _created(argo, app)

        def when(*kinds: str, created: dict[str, list[str]] = created) -> list[str]:
            return [stamp for kind in kinds for stamp in created.get(kind, [])]

        if "ClusterQueue" in created:
            assert when("ResourceFlavor") and when("Cohort"), (name, created)
            assert max(when("ResourceFlavor", "Cohort")) < min(when("ClusterQueue")), created
            ordered += 1
        if "LocalQueue" in created:
            assert max(when("Namespace", "RoleBinding")) < min(when("LocalQueue")), created
            ordered += 1
    assert ordered == len(argo.first)  # every Application holds queues: platform or tenant


CLUSTER_QUEUE = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team-a-own-quota
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: a100
          resources: [{name: nvidia.com/gpu, nominalQuota: 64}]
"""
CLUSTER_ROLE_BINDING = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: team-a-everything
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: example-org:team-a}]
"""


@pytest.mark.parametrize(
    ("text", "kind", "message"),
    [
        (
            CLUSTER_QUEUE,
            "ClusterQueue",
            "resource kueue.x-k8s.io:ClusterQueue is not permitted in project tenant-team-a",
        ),
        (
            CLUSTER_ROLE_BINDING,
            "ClusterRoleBinding",
            "resource rbac.authorization.k8s.io:ClusterRoleBinding is not permitted in project "
            "tenant-team-a",
        ),
    ],
    ids=["cluster-queue", "cluster-role-binding"],
)
def test_a_tenant_folder_cannot_sync_a_cluster_scoped_object(
    argo: Argo, text: str, kind: str, message: str
) -> None:
    app = "team-a-gpu-prod"
    name = yaml.safe_load(text)["metadata"]["name"]

    def add(work: Path) -> None:
        (work / "tenants/team-a/gpu-prod/sneaky.yaml").write_text(text)

    commit = argo.push(f"team-a adds a {kind}", add)
    try:
        argocd_control.refresh(argo.host, app)

        def refused(apps: dict[str, Json]) -> bool:
            op = apps[app]["status"].get("operationState") or {}
            result = op.get("syncResult") or {}
            return result.get("revision") == commit and any(
                r.get("status") == "SyncFailed" for r in result.get("resources") or []
            )

        apps = argocd_control.wait_for(
            argo.host, refused, timeout=SYNC_TIMEOUT, what="a refused sync"
        )
        op = apps[app]["status"]["operationState"]
        # Failed, or Running while Argo CD retries the automated sync: never Succeeded.
        assert op["phase"] in ("Failed", "Error", "Running")
        assert message in op["message"]
        [failed] = [r for r in op["syncResult"]["resources"] if r["status"] == "SyncFailed"]
        assert (failed["kind"], failed["name"], failed["message"]) == (kind, name, message)
        api = {"ClusterQueue": KUEUE, "ClusterRoleBinding": "rbac.authorization.k8s.io/v1"}[kind]
        with pytest.raises(ClusterAccessError, match="not found"):
            argo.host.connect().get(api, kind, name)
    finally:
        argocd_control.terminate_operation(argo.host, app)  # its retries would hold up later syncs
        argo.restore([app])


JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {
        "name": "waits-for-gpus",
        "namespace": "team-a",
        "labels": {"kueue.x-k8s.io/queue-name": "batch"},
    },
    "spec": {
        "suspend": True,
        "template": {
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.k8s.io/pause:3.10",
                        # more than team-a-cq can ever admit: it stays pending
                        "resources": {
                            "requests": {"nvidia.com/gpu": "1000"},
                            "limits": {"nvidia.com/gpu": "1000"},
                        },
                    }
                ],
            }
        },
    },
}


def _drop_document(path: Path, kind: str, name: str) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    kept = [d for d in docs if (d["kind"], d["metadata"]["name"]) != (kind, name)]
    assert len(kept) == len(docs) - 1
    path.write_text(yaml.safe_dump_all(kept, sort_keys=False))


def test_removing_queues_from_the_repo_deletes_nothing_and_argo_cd_says_so(
    argo: Argo, tmp_path: Path
) -> None:
    admin = argo.host.connect()
    admin.create(JOB)
    workload = eventually(
        lambda: next(iter(admin.list_in(KUEUE, "Workload", "team-a")), None),
        what="Kueue's Workload for the pending Job in team-a",
    )
    apps = ["team-a-gpu-prod", "gpu-prod-platform"]

    def remove(work: Path) -> None:
        _drop_document(work / "tenants/team-a/gpu-prod/localqueues.yaml", "LocalQueue", "batch")
        _drop_document(work / "clusters/gpu-prod/clusterqueues.yaml", "ClusterQueue", "team-b-cq")

    commit = argo.push("remove team-a's batch queue and team-b-cq", remove)
    try:
        found = argo.synced_at(commit, apps)
        for app, kind, name in [
            ("team-a-gpu-prod", "LocalQueue", "batch"),
            ("gpu-prod-platform", "ClusterQueue", "team-b-cq"),
        ]:
            status = found[app]["status"]
            [entry] = [r for r in status["resources"] if (r["kind"], r["name"]) == (kind, name)]
            assert entry.get("requiresPruning") is True, entry  # extraneous: in no file
            assert status["sync"]["status"] == "OutOfSync"
            namespace = "team-a" if kind == "LocalQueue" else None
            assert admin.get(KUEUE, kind, name, namespace)["metadata"]["name"] == name
        assert admin.get("batch/v1", "Job", "waits-for-gpus", "team-a")
        assert admin.get(KUEUE, "Workload", workload["metadata"]["name"], "team-a")

        # Our drift audit of that commit: the queues are unmanaged, and it says Argo CD keeps them.
        report = audit.audit(audited(argo.work, tmp_path), ["gpu-prod"], argo.connect)
        queues = {
            (f.kind, f.name): f for f in report.findings if f.kind in ("LocalQueue", "ClusterQueue")
        }
        assert set(queues) == {("LocalQueue", "batch"), ("ClusterQueue", "team-b-cq")}
        for finding in queues.values():
            assert finding.change == "unmanaged"
            assert finding.extra["argocd"]["extraneous"] is True
            assert "lists it as extraneous: it will not delete it" in finding.message
    finally:
        admin.delete("batch/v1", "Job", "waits-for-gpus", "team-a")
        argo.restore(apps)


def _set_a100_quota(work: Path, gpus: str) -> None:
    path = work / "clusters/gpu-prod/clusterqueues.yaml"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    cq = next(d for d in docs if d["metadata"]["name"] == "team-a-cq")
    flavor = next(f for f in cq["spec"]["resourceGroups"][0]["flavors"] if f["name"] == "a100")
    next(r for r in flavor["resources"] if r["name"] == "nvidia.com/gpu")["nominalQuota"] = gpus
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))


def _live_a100_quota(cluster: KubeCluster) -> str:
    cq = cluster.get(KUEUE, "ClusterQueue", "team-a-cq")
    flavor = next(f for f in cq["spec"]["resourceGroups"][0]["flavors"] if f["name"] == "a100")
    return str(
        next(r for r in flavor["resources"] if r["name"] == "nvidia.com/gpu")["nominalQuota"]
    )


def test_a_quota_change_pushed_is_synced_and_drift_is_clean_after(
    argo: Argo, tmp_path: Path
) -> None:
    app = "gpu-prod-platform"
    before = _live_a100_quota(argo.host.connect())
    commit = argo.push("raise team-a's a100 quota", lambda work: _set_a100_quota(work, "20"))
    try:
        found = argo.synced_at(commit, [app])[app]
        assert found["status"]["operationState"]["phase"] == "Succeeded"
        assert _live_a100_quota(argo.host.connect()) == "20" != before
        report = audit.audit(audited(argo.work, tmp_path), sorted(argo.boxes), argo.connect)
        assert [f.message for f in report.findings] == []
        assert report.exit_code == 0
    finally:
        argo.restore([app])


def test_drift_names_the_application_and_says_argo_cd_will_not_heal_what_it_cannot_see(
    argo: Argo, tmp_path: Path
) -> None:
    """A hand-made Hold (stopPolicy, a field the repository leaves unset): Argo CD's diff does
    not see it, so drift says the Application is Synced and will not put it back."""
    admin = argo.host.connect()
    app = "gpu-prod-platform"
    admin.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {"stopPolicy": "Hold"}})
    try:
        compared = argocd_control.compare_now(argo.host, [app])
        assert argocd_control.sync_status(compared[app])[0] == "Synced"
        report = audit.audit(audited(ESTATE, tmp_path), ["gpu-prod"], argo.connect)
        [held] = [f for f in report.findings if f.name == "team-a-cq"]
        assert held.rule.id == "drift-stop-policy"
        assert held.extra["argocd"] == {
            "application": app,
            "syncStatus": "Synced",
            "resourceStatus": "Synced",
            "extraneous": False,
            "selfHeal": True,
            "heals": False,
        }
        assert held.message.endswith(
            f"Argo CD Application {app} (Synced) sees no difference in it: it will not heal this"
        )
    finally:
        admin.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {"stopPolicy": None}})


def upstream_repo_server(testenv: Path) -> Json:
    """The argocd-repo-server Deployment of the pinned Argo CD's own install.yaml (read from
    its Go module) as an install applies it, scaled to none: the sandbox runs Argo CD's daemons
    as processes, and what drift and import read is the Deployment."""
    install = module_dir(testenv, "tools/argocd", ARGOCD_MODULE) / "manifests" / "install.yaml"
    for doc in yaml.safe_load_all(install.read_text()):
        if doc and (doc["kind"], doc["metadata"]["name"]) == ("Deployment", "argocd-repo-server"):
            doc["metadata"]["namespace"] = argocd.NAMESPACE
            doc["spec"]["replicas"] = 0
            return t.cast(Json, doc)
    raise AssertionError(f"{install} holds no argocd-repo-server Deployment")


def test_drift_and_import_read_the_argo_cd_release_its_repo_server_runs(
    argo: Argo, toolchain: Toolchain, tmp_path: Path
) -> None:
    """No repo-server Deployment (the sandbox's daemons are processes): not checked, and drift
    says so. With the pinned release's own: a profile naming v3.4.14 is warned, with what
    differs in the renders; import writes the release into the profile it makes."""
    repo = tmp_path / "repo"
    audited(ESTATE, repo)
    report = audit.audit(Repository.open(repo), ["gpu-prod"], argo.connect)
    assert "argocd-version-differs" not in {f.rule.id for f in report.findings}
    [note] = report.clusters[0].notes
    assert note.startswith(
        "its Argo CD release is not checked (no Deployment labelled "
        "app.kubernetes.io/name=argocd-repo-server runs there (Argo CD runs in another cluster"
    ), note
    admin = argo.host.connect()
    admin.apply(upstream_repo_server(toolchain.testenv), manager="kueue-gitops-test")
    try:
        profile = repo / "clusters/gpu-prod/profile.yaml"
        said = profile.read_text().replace("  kueue:\n", "  argocd: {version: v3.4.14}\n  kueue:\n")
        profile.write_text(said)
        report = audit.audit(Repository.open(repo), ["gpu-prod"], argo.connect)
        [differs] = [f for f in report.findings if f.rule.id == "argocd-version-differs"]
        assert differs.message.startswith(
            "cluster gpu-prod runs Argo CD v3.5.7 (the image of Deployment "
            "argocd/argocd-repo-server), but its profile's argocd.version is v3.4.14: its "
            "folders are rendered with helm v3.19.4 where it runs v4.2.1."
        ), differs.message
        assert (differs.file, report.clusters[0].notes) == ("clusters/gpu-prod/profile.yaml", [])
        imported = tmp_path / "imported"
        done = run_line(
            ["kueue-gitops", "--repo", str(imported), "import", "--cluster", "gpu-prod",
             "--tenants-by", "queue", "--kueue-version", "v0.17.0",  # Kueue is a process too
             *own_context(argo.host.kubeconfig)]
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        written = yaml.safe_load((imported / "clusters/gpu-prod/profile.yaml").read_text())
        assert written["spec"]["argocd"] == {"version": "v3.5.7"}
    finally:
        tools.running_on("gpu-prod", None)  # import's, for this process's later renders
        admin.delete("apps/v1", "Deployment", "argocd-repo-server", argocd.NAMESPACE)
