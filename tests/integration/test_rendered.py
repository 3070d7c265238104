"""Repositories as platform teams keep them: kustomize overlays and Helm charts synced by their
own Argo CD Applications, rendered by the real kustomize and helm at Argo CD's releases.

Two estates under tests/data/rendered/, modelled on common public layouts and named unlike
this repository: `kustomize/` (queues/base, a GPU component, an overlay per cluster, teams by
namePrefix; argo/ holds the ApplicationSets) and `helm/` (charts/team-space, a values file per
cluster and team; apps/ holds the ApplicationSet). Each test plants its error in a copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import typing as t
from pathlib import Path

import pytest

from auditor.render import tools
from auditor.repo.layout import Repository
from auditor.sandbox.build import TOOLS, ensure_tool
from tests.conftest import run_line
from tests.integration.rendered import ESTATES, ROOT, estate, validate, where

pytestmark = pytest.mark.usefixtures("renderers")  # the pinned renderers, built


TEAMS = ("vision", "speech")  # each team's folder syncs to both clusters
OTHER_KUSTOMIZE = "v5.7.1"  # a minor release before the one Argo CD v3.5.7 runs


@pytest.fixture(scope="module")
def other_kustomize(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding only kustomize OTHER_KUSTOMIZE, built from the Go module proxy (or
    the local module cache), as a distribution or CI image would ship another release."""
    folder = tmp_path_factory.mktemp("other-kustomize")
    subprocess.run(
        ["go", "install", f"sigs.k8s.io/kustomize/kustomize/v5@{OTHER_KUSTOMIZE}"],
        env={**os.environ, "GOBIN": str(folder)}, cwd=folder, check=True, timeout=600,
    )  # fmt: skip
    assert tools.version_of(str(folder / "kustomize")) == OTHER_KUSTOMIZE
    return folder


# --- kustomize ---------------------------------------------------------------------------------


def test_the_kustomize_estate_renders_clean(tmp_path: Path) -> None:
    code, findings = validate(estate("kustomize", tmp_path))
    assert (code, findings) == (0, [])


def test_a_negative_quota_in_an_overlay_patch_is_found_at_the_patch(tmp_path: Path) -> None:
    repo = estate("kustomize", tmp_path)
    patch = repo / "queues/overlays/east/quotas.yaml"
    patch.write_text(patch.read_text().replace('value: "128"', 'value: "-8"'))
    code, findings = validate(repo)
    assert code == 1
    assert where(findings) == {
        ("quantity-negative", "east", "queues/overlays/east/quotas.yaml", 4)
    }, findings


def test_overlays_components_and_name_prefixes_render_as_argo_cd_renders_them(
    tmp_path: Path,
) -> None:
    loaded = Repository.open(estate("kustomize", tmp_path)).load()
    assert loaded.findings == []
    east = {(r.kind, r.namespace, r.name): r for r in loaded.for_cluster("east")}
    west = {(r.kind, r.namespace, r.name): r for r in loaded.for_cluster("west")}
    gpu = east[("ResourceFlavor", None, "gpu-a100")]  # the component, on east only
    assert (gpu.file, gpu.line) == ("queues/components/gpu/flavor.yaml", 1)
    assert ("ResourceFlavor", None, "gpu-a100") not in west
    vision = east[("ClusterQueue", None, "vision")]
    groups = vision.body["spec"]["resourceGroups"]
    assert groups[0]["flavors"][0]["resources"][0]["nominalQuota"] == "128"
    assert groups[1]["flavors"][0]["name"] == "gpu-a100"
    gpu_quota = ("spec", "resourceGroups", 1, "flavors", 0, "resources", 0, "nominalQuota")
    assert vision.where(gpu_quota) == ("queues/components/gpu/vision-gpu.yaml", 9, True)
    queue = west[("LocalQueue", "speech", "speech-queue")]  # namePrefix, the Application's ns
    assert queue.body["spec"]["clusterQueue"] == "speech"
    assert (queue.file, queue.line) == ("access/base/localqueue.yaml", 1)
    guard = queue.body["metadata"]["annotations"]["argocd.argoproj.io/sync-options"]
    assert guard == "Prune=false,Delete=false"  # the Application's commonAnnotations


def test_a_remote_base_is_a_finding_at_its_line_not_a_fetch(tmp_path: Path) -> None:
    repo = estate("kustomize", tmp_path)
    kustomization = repo / "queues/overlays/west/kustomization.yaml"
    kustomization.write_text(
        kustomization.read_text().replace(
            "  - ../../base\n", "  - ../../base\n  - https://github.com/acme/queues//extra?ref=v1\n"
        )
    )
    code, findings = validate(repo)
    assert code == 1
    assert ("render-remote-base", "west", "queues/overlays/west/kustomization.yaml", 5) in (
        where(findings)
    )


def test_a_patch_that_matches_nothing_is_kustomizes_own_error_at_the_kustomization(
    tmp_path: Path,
) -> None:
    repo = estate("kustomize", tmp_path)
    (repo / "queues/overlays/west/quotas.yaml").unlink()
    code, findings = validate(repo)
    assert code == 1
    failed = [f for f in findings if f["rule"] == "render-failed"]
    assert where(failed) == {
        ("render-failed", "west", "queues/overlays/west/kustomization.yaml", 1)
    }
    assert "quotas.yaml" in failed[0]["message"]


def test_a_kustomize_of_another_minor_release_on_path_renders_with_a_version_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, other_kustomize: Path
) -> None:
    """A team's CI image ships the kustomize it ships: used, each folder it renders noted."""
    monkeypatch.setenv("PATH", f"{other_kustomize}:/usr/bin:/bin")
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "empty-cache"))
    repo = estate("kustomize", tmp_path)
    patch = repo / "queues/overlays/east/quotas.yaml"
    patch.write_text(patch.read_text().replace('value: "128"', 'value: "-8"'))
    tools.find.cache_clear()
    try:
        code, findings = validate(repo)
    finally:
        tools.find.cache_clear()
    assert code == 1
    assert where(findings) == {
        ("quantity-negative", "east", "queues/overlays/east/quotas.yaml", 4),
        *(
            ("renderer-version-differs", cluster, f"{folder}/kustomization.yaml", 1)
            for cluster, folder in (
                ("east", "queues/overlays/east"),
                ("west", "queues/overlays/west"),
                *((c, f"access/teams/{team}") for c in ("east", "west") for team in TEAMS),
            )
        ),
    }, findings
    note = next(f for f in findings if f["rule"] == "renderer-version-differs")
    assert note["severity"] == "warning"
    assert "kustomize v5.7.1" in note["message"] and "runs kustomize v5.8.1" in note["message"]
    assert "Argo CD v3.5.7" in note["message"]


def test_with_exact_renderers_one_of_another_release_is_refused_never_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "bin" / "kustomize"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho v5.0.0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("KUEUE_GITOPS_RENDERERS", "exact")
    tools.find.cache_clear()
    try:
        code, findings = validate(estate("kustomize", tmp_path))
    finally:
        tools.find.cache_clear()
    assert code == 1
    missing = [f for f in findings if f["rule"] == "renderer-unavailable"]
    assert {f["file"] for f in missing} == {
        "queues/overlays/east/kustomization.yaml",
        "queues/overlays/west/kustomization.yaml",
        "access/teams/vision/kustomization.yaml",
        "access/teams/speech/kustomization.yaml",
    }
    assert "is v5.0.0" in missing[0]["message"] and "v5.8.1" in missing[0]["message"]
    assert "exact renderers are asked for" in missing[0]["message"]


@pytest.fixture(scope="module")
def kubectl_alone(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A folder holding only a real kubectl (PATH's, else built from the pinned Kubernetes
    module), and the kustomize release it embeds, as `kubectl version` says it."""
    real = shutil.which("kubectl") or ensure_tool(
        ROOT / "testenv", "kubectl", TOOLS["kubectl"], log=print
    )
    folder = tmp_path_factory.mktemp("kubectl-alone")
    (folder / "kubectl").symlink_to(Path(real).resolve())
    said = subprocess.run(
        [str(folder / "kubectl"), "version", "--client", "-o", "json"],
        capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    return folder, json.loads(said.stdout)["kustomizeVersion"]


def test_with_no_kustomize_binary_kubectl_kustomize_renders_with_a_version_note(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kubectl_alone: tuple[Path, str]
) -> None:
    """A distribution's kubectl, no kustomize: the overlays render (their objects checked, the
    note naming kubectl's kustomize); the teams' folders, whose Application sets kustomize
    overrides (`kustomize edit`, which kubectl lacks), are unavailable, never clean."""
    folder, embedded = kubectl_alone
    assert embedded != "v5.8.1"  # of another release than Argo CD v3.5.7's, else no note
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "empty-cache"))
    assert shutil.which("kustomize") is None
    repo = estate("kustomize", tmp_path)
    patch = repo / "queues/overlays/east/quotas.yaml"
    patch.write_text(patch.read_text().replace('value: "128"', 'value: "-8"'))
    tools.find.cache_clear()
    try:
        code, findings = validate(repo)
        exact = run_line(
            ["kueue-gitops", "--repo", str(repo), "validate", "--renderers", "exact", "-o", "json"]
        )
    finally:
        tools.find.cache_clear()
    assert code == 1
    assert where(findings) == {
        ("quantity-negative", "east", "queues/overlays/east/quotas.yaml", 4),
        *(
            ("renderer-version-differs", c, f"queues/overlays/{c}/kustomization.yaml", 1)
            for c in ("east", "west")
        ),
        *(
            ("renderer-unavailable", c, f"access/teams/{team}/kustomization.yaml", 1)
            for c in ("east", "west")
            for team in TEAMS
        ),
    }, findings
    note = next(f for f in findings if f["rule"] == "renderer-version-differs")
    assert f"the kustomize of kubectl {embedded} ({folder}/kubectl)" in note["message"]
    assert "Argo CD v3.5.7 runs kustomize v5.8.1" in note["message"]
    refused = next(f for f in findings if f["rule"] == "renderer-unavailable")
    assert "it has no `kustomize edit`" in refused["message"]
    refusals = json.loads(exact.stdout)["findings"]  # nothing rendered: nothing clean
    assert (exact.exit_code, {f["rule"] for f in refusals}) == (1, {"renderer-unavailable"})
    assert len(refusals) == 6, refusals


def _synced_by(repo: Path, cluster: str, argocd: str, renderers: str = "any") -> None:
    """The cluster's profile says which Argo CD release syncs it (and whether only its
    renderers may render)."""
    profile = repo / f"fleet/{cluster}.yaml"
    said = f"  argocd: {{version: {argocd}, renderers: {renderers}}}\n"
    profile.write_text(profile.read_text().replace("  kueue:\n", f"{said}  kueue:\n"))


EAST_FOLDERS = ("queues/overlays/east", *(f"access/teams/{team}" for team in TEAMS))


def test_the_renderers_follow_the_argo_cd_release_a_cluster_profile_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """east's Argo CD v3.6.2 runs kustomize v5.8.3: the pinned v5.8.1 renders, noted on east
    only (west is synced by the pinned Argo CD v3.5.7, whose kustomize it is)."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # the cache's pinned build only
    repo = estate("kustomize", tmp_path)
    _synced_by(repo, "east", "v3.6.2")
    tools.find.cache_clear()
    try:
        code, findings = validate(repo)
    finally:
        tools.find.cache_clear()
    assert code == 0  # a warning: the objects are checked
    assert where(findings) == {
        ("renderer-version-differs", "east", f"{folder}/kustomization.yaml", 1)
        for folder in EAST_FOLDERS
    }, findings
    message = findings[0]["message"]
    assert "kustomize v5.8.1" in message and "Argo CD v3.6.2 runs kustomize v5.8.3" in message


def test_a_profile_asking_for_exact_renderers_needs_its_argo_cd_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    repo = estate("kustomize", tmp_path)
    _synced_by(repo, "east", "v3.6.1", "exact")  # not listed: as v3.6.0, the nearest below
    tools.find.cache_clear()
    try:
        code, findings = validate(repo)
    finally:
        tools.find.cache_clear()
    assert code == 1
    assert where(findings) == {
        ("renderer-unavailable", "east", f"{folder}/kustomization.yaml", 1)
        for folder in EAST_FOLDERS
    }, findings
    message = findings[0]["message"]
    assert "kustomize v5.8.3 (Argo CD v3.6.1, as v3.6.0's)" in message, message
    assert "sandbox build" not in message  # it builds the pinned release only


def test_a_render_that_hangs_is_a_finding_within_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hangs = tmp_path / "bin" / "kustomize"
    hangs.parent.mkdir()
    hangs.write_text('#!/bin/sh\n[ "$1" = version ] && { echo v5.8.1; exit 0; }\nsleep 60\n')
    hangs.chmod(0o755)
    found = tools.Renderer(str(hangs), "v5.8.1", "v5.8.1")
    monkeypatch.setattr(tools, "find", lambda *_: found)
    monkeypatch.setattr(tools, "DEADLINE", 1.0)
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "empty-cache"))
    code, findings = validate(estate("kustomize", tmp_path))
    assert code == 1
    assert {f["rule"] for f in findings} == {"render-timeout"}
    assert "queues/overlays/east/kustomization.yaml" in {f["file"] for f in findings}


def test_plan_on_a_commit_changing_an_overlay_shows_the_quota_change_at_the_patch(
    tmp_path: Path,
) -> None:
    repo = estate("kustomize", tmp_path)

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
            cwd=repo, check=True, capture_output=True,
        )  # fmt: skip

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "estate")
    patch = repo / "queues/overlays/east/quotas.yaml"
    patch.write_text(patch.read_text().replace('value: "128"', 'value: "96"'))
    git("commit", "-q", "-am", "east: less CPU for vision")
    result = run_line(["kueue-gitops", "--repo", str(repo), "plan", "--base", "HEAD~1"])
    assert result.exit_code == 0, result.output
    assert "ClusterQueue vision: standard cpu nominalQuota 128 → 96 (-32)" in result.output
    assert "(queues/overlays/east/quotas.yaml:4)" in result.output
    assert "cluster west" not in result.output  # west's overlay did not change


# --- Helm --------------------------------------------------------------------------------------


def test_the_helm_estate_renders_clean(tmp_path: Path) -> None:
    code, findings = validate(estate("helm", tmp_path))
    assert (code, findings) == (0, [])


def test_a_localqueue_aimed_at_another_teams_queue_is_found_in_the_values_file(
    tmp_path: Path,
) -> None:
    repo = estate("helm", tmp_path)
    values = repo / "environments/north/nlp.yaml"
    values.write_text(
        values.read_text().replace("clusterQueue: nlp-cq", "clusterQueue: robotics-cq")
    )
    code, findings = validate(repo)
    assert code == 1
    assert ("lq-cluster-queue-not-authorised", "north", "environments/north/nlp.yaml", 3) in (
        where(findings)
    ), findings
    assert {f["file"] for f in findings} == {"environments/north/nlp.yaml"}


def test_helm_objects_carry_their_template_and_the_applications_namespace(
    tmp_path: Path,
) -> None:
    loaded = Repository.open(estate("helm", tmp_path)).load()
    assert loaded.findings == []
    south = {(r.kind, r.namespace, r.name): r for r in loaded.for_cluster("south")}
    queue = south[("LocalQueue", "robotics", "jobs")]
    assert (queue.file, queue.line) == ("charts/team-space/templates/localqueue.yaml", 2)
    assert queue.where(("spec", "clusterQueue")) == ("environments/south/robotics.yaml", 3, True)
    namespace = south[("Namespace", None, "robotics")]
    assert namespace.body["metadata"]["labels"]["acme.io/team"] == "robotics"


def test_values_that_fail_to_render_are_helms_error_at_the_chart(tmp_path: Path) -> None:
    repo = estate("helm", tmp_path)
    (repo / "environments/south/nlp.yaml").write_text("team: nlp\nsubmitters: acme:nlp\n")
    code, findings = validate(repo)
    assert code == 1
    assert where(findings) == {("render-failed", "south", "charts/team-space/Chart.yaml", 1)}
    assert "queue.clusterQueue is required" in findings[0]["message"]


def test_an_unvendored_chart_dependency_is_a_finding_at_its_line(tmp_path: Path) -> None:
    repo = estate("helm", tmp_path)
    chart = repo / "charts/team-space/Chart.yaml"
    chart.write_text(
        chart.read_text()
        + "dependencies:\n  - name: common\n    version: 2.0.0\n"
        + "    repository: https://charts.acme.example\n"
    )
    code, findings = validate(repo)
    assert code == 1
    assert {(f["rule"], f["file"], f["line"]) for f in findings} == {
        ("render-chart-dependency", "charts/team-space/Chart.yaml", 6)
    }


COMMON_QUEUE = """apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: {{ .Values.global.team | default "shared" }}-spare
spec:
  clusterQueue: shared
"""


def _local_dependency(repo: Path, repository: str) -> Path:
    """charts/team-space depending on the chart `common` by `repository`, and charts/common,
    a chart of the repository making a LocalQueue, not vendored in team-space's charts/."""
    common = repo / "charts/common"
    (common / "templates").mkdir(parents=True)
    (common / "Chart.yaml").write_text("apiVersion: v2\nname: common\nversion: 0.3.0\n")
    (common / "templates/spare.yaml").write_text(COMMON_QUEUE)
    chart = repo / "charts/team-space/Chart.yaml"
    chart.write_text(
        chart.read_text()
        + f"dependencies:\n  - name: common\n    version: 0.3.0\n    repository: {repository}\n"
    )
    return common


def test_a_local_file_chart_dependency_is_built_as_argo_cd_builds_it(tmp_path: Path) -> None:
    repo = estate("helm", tmp_path)
    _local_dependency(repo, "file://../common")
    code, findings = validate(repo)
    assert code == 1
    # the dependency's LocalQueue names a ClusterQueue no cluster has: found at its own line
    missing = {f for f in where(findings) if f[0] == "lq-cluster-queue-missing"}
    assert missing == {
        ("lq-cluster-queue-missing", c, "charts/common/templates/spare.yaml", 6)
        for c in ("north", "south")
    }, findings
    assert not [f for f in findings if f["rule"].startswith("render")], findings
    loaded = Repository.open(repo).load()
    south = {(r.kind, r.namespace, r.name): r for r in loaded.for_cluster("south")}
    spare = south[("LocalQueue", "robotics", "shared-spare")]
    assert (spare.file, spare.line) == ("charts/common/templates/spare.yaml", 2)
    assert not (repo / "charts/team-space/charts").exists()  # built in the render's copy only


def test_a_local_chart_dependency_out_of_the_repository_is_a_finding_at_its_line(
    tmp_path: Path,
) -> None:
    repo = estate("helm", tmp_path)
    _local_dependency(repo, "file://../../../common")
    code, findings = validate(repo)
    assert code == 1
    assert {(f["rule"], f["file"], f["line"]) for f in findings} == {
        ("render-outside-repository", "charts/team-space/Chart.yaml", 6)
    }


# --- the layout --------------------------------------------------------------------------------


def test_the_root_file_maps_folders_itself_and_without_any_mapping_nothing_is_clean(
    tmp_path: Path,
) -> None:
    repo = estate("helm", tmp_path)
    shutil.rmtree(repo / "apps")
    result = run_line(["kueue-gitops", "--repo", str(repo), "validate"])
    assert result.exit_code == 2
    assert "holds no Argo CD Application" in result.output
    layout = repo / "kueue-gitops.yaml"
    layout.write_text(
        layout.read_text()
        + "sources:\n"
        + "  - {path: platform/queues, cluster: north}\n"
        + "  - path: charts/team-space\n"
        + "    cluster: north\n"
        + "    namespace: nlp\n"
        + "    helm: {releaseName: nlp, valueFiles: [../../environments/north/nlp.yaml]}\n"
    )
    loaded = Repository.open(repo).load(["north"])
    assert loaded.findings == []
    assert ("LocalQueue", "nlp", "jobs") in {
        (r.kind, r.namespace, r.name) for r in loaded.resources
    }


def test_an_application_to_a_cluster_no_profile_names_is_a_finding_at_it(tmp_path: Path) -> None:
    repo = estate("helm", tmp_path)
    apps = repo / "apps" / "teams.yaml"
    apps.write_text(
        apps.read_text()
        + "---\napiVersion: argoproj.io/v1alpha1\nkind: Application\n"
        + "metadata: {name: queues-in-cluster, namespace: argocd}\n"
        + "spec:\n  project: default\n"
        + "  source: {repoURL: https://git.acme.example/ml/platform.git, path: platform/queues}\n"
        + "  destination: {server: https://kubernetes.default.svc}\n"
    )
    code, findings = validate(repo)
    assert code == 1
    assert [(f["rule"], f["file"], f["line"]) for f in findings] == [
        ("argocd-application-unread", "apps/teams.yaml", 63)
    ]
    assert "https://kubernetes.default.svc" in findings[0]["message"]


def test_a_render_is_served_from_the_cache_until_a_file_it_reads_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = estate("kustomize", tmp_path)
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    built = ensure_tool(ROOT / "testenv", "kustomize", TOOLS["kustomize"])
    at = tools.Renderer(str(built), tools.pinned("kustomize"), tools.pinned("kustomize"))
    monkeypatch.setattr(tools, "find", lambda *_: at)  # not this test's empty cache
    builds: list[str] = []
    real = tools.run

    def counted(argv: t.Sequence[str], cwd: Path, deadline: float = tools.DEADLINE) -> tools.Ran:
        if "build" in argv:
            builds.append(str(argv[-1]).split("/tree/", 1)[1])
        return real(argv, cwd, deadline)

    monkeypatch.setattr(tools, "run", counted)
    first = Repository.open(repo).load()
    assert sorted(builds) == [  # a team's folder renders alike for both clusters: once
        "access/teams/speech", "access/teams/vision", "queues/overlays/east", "queues/overlays/west"
    ]  # fmt: skip
    builds.clear()
    (repo / "notes").mkdir()
    (repo / "notes" / "runbook.yaml").write_text("steps: []\n")  # outside every render
    again = Repository.open(repo).load()
    assert builds == [] and len(again.resources) == len(first.resources)
    patch = repo / "queues/overlays/west/quotas.yaml"
    patch.write_text(patch.read_text().replace('"48"', '"40"'))
    Repository.open(repo).load()
    assert builds == ["queues/overlays/west"]


# --- the clusters/ and tenants/ convention -----------------------------------------------------

CONVENTION_ESTATE = {
    "clusters/lab/profile.yaml": (ESTATES / "kustomize/fleet/east.yaml")
    .read_text()
    .replace("name: east", "name: lab")
    .replace("context: east", "context: lab"),
    "tenants/vision/profile.yaml": (ESTATES / "kustomize/teams/vision/profile.yaml")
    .read_text()
    .replace("east:", "lab:"),
    "tenants/vision/lab/localqueue.yaml": (
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: jobs, namespace: vision}\nspec: {clusterQueue: vision}\n"
    ),
    "tenants/vision/lab/kustomization.yaml": "resources: [localqueue.yaml]\nnamePrefix: lab-\n",
    "clusters/lab/monitoring/kustomization.yaml": "resources: [rules.yaml]\n",
    "clusters/lab/monitoring/rules.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
}


def test_a_kustomization_at_a_convention_folders_root_is_rendered_one_below_is_not(
    tmp_path: Path,
) -> None:
    for path, text in CONVENTION_ESTATE.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    loaded = Repository.open(tmp_path).load()
    queue = next(r for r in loaded.resources if r.kind == "LocalQueue")
    assert (queue.name, queue.cluster, queue.tenant) == ("lab-jobs", "lab", "vision")
    assert (queue.file, queue.line) == ("tenants/vision/lab/localqueue.yaml", 1)
    # Argo CD syncs clusters/lab/ as a directory: a kustomization inside it is not rendered.
    assert [(f.rule.id, f.file) for f in loaded.findings] == [
        ("rendered-folder-unsupported", "clusters/lab/monitoring/kustomization.yaml")
    ]
