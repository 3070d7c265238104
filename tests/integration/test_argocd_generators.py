"""What the repository's ApplicationSets would generate, checked with Argo CD's own rules.

The rules are those of the pinned Argo CD (testenv/tools/argocd): the git directory generator
matches folders with Go's path.Match (`*` stays within one segment, `exclude` entries win),
a directory source skips files matching `directory.exclude`, and a sync checks each object with
AppProject.IsGroupKindNamePermitted and, for namespaced objects, IsDestinationPermitted.
"""

from __future__ import annotations

import fnmatch
import re
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.model import Resource
from auditor.repo.layout import Repository
from tests.conftest import ROOT

Json = dict[str, t.Any]
ARGOCD = ROOT / "argocd"
WAVE = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"


def argocd_objects(kind: str) -> dict[str, Json]:
    found = {}
    for path in sorted(ARGOCD.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc["kind"] == kind:
                found[doc["metadata"]["name"]] = doc
    return found


def go_path_match(pattern: str, name: str) -> bool:
    """Go's path.Match: `*` and `?` never cross a `/`."""
    parts, names = pattern.split("/"), name.split("/")
    return len(parts) == len(names) and all(
        fnmatch.fnmatchcase(n, p) for p, n in zip(parts, names, strict=True)
    )


def repo_folders(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_dir() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def render(template: t.Any, path: str) -> t.Any:
    """The Go-template expressions our ApplicationSets use; anything else fails the test."""
    if isinstance(template, dict):
        return {k: render(v, path) for k, v in template.items()}
    if isinstance(template, list):
        return [render(v, path) for v in template]
    if not isinstance(template, str):
        return template
    segments = path.split("/")

    def one(match: re.Match[str]) -> str:
        expr = match.group(1).strip()
        if expr == ".path.path":
            return path
        if expr == ".path.basename":
            return segments[-1]
        index = re.fullmatch(r"index \.path\.segments (\d+)", expr)
        if index:
            return segments[int(index.group(1))]
        raise AssertionError(f"unexpected template expression {expr!r}")

    return re.sub(r"\{\{(.*?)\}\}", one, template)


def generated_applications(root: Path = ROOT) -> dict[str, Json]:
    apps: dict[str, Json] = {}
    folders = repo_folders(root)
    for appset in argocd_objects("ApplicationSet").values():
        [generator] = appset["spec"]["generators"]
        directories = generator["git"]["directories"]
        for folder in folders:
            included = any(
                go_path_match(d["path"], folder) for d in directories if not d.get("exclude")
            )
            excluded = any(
                go_path_match(d["path"], folder) for d in directories if d.get("exclude")
            )
            if included and not excluded:
                app = render(appset["spec"]["template"], folder)
                assert app["metadata"]["name"] not in apps, "two Applications share a name"
                apps[app["metadata"]["name"]] = app
    return apps


def synced_resources(app: Json, loaded: list[Resource]) -> list[Resource]:
    """The objects a directory source at app's path sends, honouring directory.recurse (files
    in subfolders too) and directory.exclude (a glob over the path below the source's)."""
    source = app["spec"]["source"]
    directory = source.get("directory") or {}
    exclude, recurse = directory.get("exclude"), directory.get("recurse", False)

    def below(file: str) -> str | None:
        relative = (
            Path(file).relative_to(source["path"])
            if file.startswith(source["path"] + "/")
            else None
        )
        if relative is None or (len(relative.parts) > 1 and not recurse):
            return None
        return relative.as_posix()

    return [
        r
        for r in loaded
        if (relative := below(r.file)) is not None
        and not (exclude and fnmatch.fnmatchcase(relative, exclude))
    ]


def permitted(project: Json, app: Json, obj: Resource) -> bool:
    """AppProject.IsGroupKindNamePermitted, then IsDestinationPermitted for namespaced kinds."""
    spec = project["spec"]
    group, kind = obj.key.group, obj.kind

    def in_list(items: list[Json] | None, name: str | None = None) -> bool:
        return any(
            fnmatch.fnmatchcase(kind, i["kind"])
            and fnmatch.fnmatchcase(group, i["group"])
            and (name is None or not i.get("name") or fnmatch.fnmatchcase(name, i["name"]))
            for i in items or []
        )

    if obj.namespace is None:
        return in_list(spec.get("clusterResourceWhitelist"), obj.name) and not in_list(
            spec.get("clusterResourceBlacklist"), obj.name
        )
    white = spec.get("namespaceResourceWhitelist")
    if (white is not None and not in_list(white)) or in_list(
        spec.get("namespaceResourceBlacklist")
    ):
        return False
    cluster = app["spec"]["destination"]["name"]
    return any(
        fnmatch.fnmatchcase(cluster, d["name"])
        and fnmatch.fnmatchcase(obj.namespace, d["namespace"])
        for d in spec["destinations"]
    )


@pytest.fixture(scope="module")
def repository() -> Repository:
    return Repository.open(ROOT)


@pytest.fixture(scope="module")
def loaded(repository: Repository) -> list[Resource]:
    found = repository.load()
    assert found.findings == []
    return found.resources


def test_one_application_per_cluster_folder_and_per_tenant_cluster_folder(
    repository: Repository,
) -> None:
    apps = generated_applications()
    expected = {f"{c}-platform" for c in repository.clusters} | {
        f"{tenant}-{cluster}"
        for tenant, profile in repository.tenants.items()
        for cluster in profile.clusters
    }
    assert set(apps) == expected
    # a tenant's own folder holds its profile: it is never an Application's path
    assert all(app["spec"]["source"]["path"].count("/") in (1, 2) for app in apps.values())
    assert not any(
        app["spec"]["source"]["path"] == f"tenants/{t}"
        for t in repository.tenants
        for app in apps.values()
    )


def test_every_repository_object_is_synced_by_exactly_one_application_and_no_profile_is(
    loaded: list[Resource],
) -> None:
    apps = generated_applications()
    synced = [r for app in apps.values() for r in synced_resources(app, loaded)]
    assert sorted(r.file + str(r.key) for r in synced) == sorted(
        r.file + str(r.key) for r in loaded
    )
    profiles = [p.relative_to(ROOT).as_posix() for p in ROOT.glob("clusters/*/profile.yaml")]
    assert profiles
    for app in apps.values():
        source = app["spec"]["source"]
        for profile in profiles:
            if Path(profile).parent.as_posix() == source["path"]:
                assert fnmatch.fnmatchcase("profile.yaml", source["directory"]["exclude"])


def test_every_synced_object_is_permitted_by_its_applications_project(
    loaded: list[Resource],
) -> None:
    projects = argocd_objects("AppProject")
    refused = []
    for name, app in generated_applications().items():
        assert app["spec"]["project"] in projects, f"{name}: no AppProject in argocd/"
        project = projects[app["spec"]["project"]]
        assert permitted_destination(project, app), f"{name}: destination not permitted"
        refused += [
            f"{name}: {r.key}"
            for r in synced_resources(app, loaded)
            if not permitted(project, app, r)
        ]
    assert refused == []


def permitted_destination(project: Json, app: Json) -> bool:
    dest = app["spec"]["destination"]
    return any(
        fnmatch.fnmatchcase(dest["name"], d["name"])
        and fnmatch.fnmatchcase(dest.get("namespace", ""), d["namespace"])
        for d in project["spec"]["destinations"]
    )


def test_tenant_projects_confine_each_tenant_to_its_profiles_namespaces(
    repository: Repository,
) -> None:
    projects = argocd_objects("AppProject")
    for tenant, profile in repository.tenants.items():
        spec = projects[f"tenant-{tenant}"]["spec"]
        reach = {(d["name"], d["namespace"]) for d in spec["destinations"]}
        assert reach == {
            (cluster, ns) for cluster, tc in profile.clusters.items() for ns in tc.namespaces
        }
        namespaces = {ns for tc in profile.clusters.values() for ns in tc.namespaces}
        assert all(
            item["kind"] == "Namespace" and item.get("name") in namespaces
            for item in spec["clusterResourceWhitelist"]
        )


def _resource(body: Json, file: str) -> Resource:
    return Resource(body=body, file=file, line=1)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"name": "sneaky", "namespace": "team-b"},
            },
            "another tenant's namespace",
        ),
        (
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": "own-quota"},
            },
            "a cluster-scoped quota object",
        ),
        (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}},
            "a namespace that is not the tenant's",
        ),
        (
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": {"name": "admin", "namespace": "team-a"},
            },
            "a kind a tenant folder never holds",
        ),
    ],
)
def test_a_tenant_application_is_refused_what_is_not_its_own(body: Json, why: str) -> None:
    app = generated_applications()["team-a-gpu-prod"]
    project = argocd_objects("AppProject")[app["spec"]["project"]]
    assert not permitted(project, app, _resource(body, "tenants/team-a/gpu-prod/x.yaml")), why


def _wave(r: Resource) -> int:
    return int(((r.body.get("metadata") or {}).get("annotations") or {}).get(WAVE, "0"))


def test_sync_waves_put_flavors_before_queues_and_namespaces_and_rbac_before_localqueues(
    loaded: list[Resource],
) -> None:
    for name, app in generated_applications().items():
        objs = synced_resources(app, loaded)
        waves = {
            kind: {_wave(r) for r in objs if r.kind == kind} for kind in {r.kind for r in objs}
        }
        if "ResourceFlavor" in waves:
            later = waves.get("Cohort", set()) | waves.get("ClusterQueue", set())
            assert max(waves["ResourceFlavor"]) < min(later), name
        if "LocalQueue" in waves:
            earlier = waves.get("Namespace", set()) | waves.get("RoleBinding", set())
            assert max(earlier) < min(waves["LocalQueue"]), name


def test_queues_and_namespaces_that_admit_work_are_never_pruned_or_deleted_by_a_sync(
    loaded: list[Resource], repository: Repository
) -> None:
    """Pruning either would delete pending and running Workloads with it."""

    def admits_work(r: Resource) -> bool:
        key, value = repository.clusters[r.cluster or ""].admission_label
        return (r.body["metadata"].get("labels") or {}).get(key) == value

    guarded = [
        r for r in loaded if r.kind == "ClusterQueue" or (r.kind == "Namespace" and admits_work(r))
    ]
    assert {r.kind for r in guarded} == {"ClusterQueue", "Namespace"}
    for r in guarded:
        options = ((r.body["metadata"].get("annotations") or {}).get(SYNC_OPTIONS) or "").split(",")
        assert {"Prune=false", "Delete=false"} <= set(options), f"{r.file}: {r.key}"
    for appset in argocd_objects("ApplicationSet").values():
        assert appset["spec"]["syncPolicy"]["preserveResourcesOnDeletion"] is True
        assert appset["spec"]["syncPolicy"]["applicationsSync"] == "create-update"


def test_every_application_syncs_with_server_side_apply() -> None:
    for name, app in generated_applications().items():
        assert "ServerSideApply=true" in app["spec"]["syncPolicy"]["syncOptions"], name
