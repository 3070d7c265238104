"""`import` the adopter's way, per supported Kueue release: a sandbox running that release,
configured by hand with server-side applies (as kubectl would) of tests/data/import/estate.yaml
(Kueue's documentation's admin setup with three planted problems; nothing of this repository),
then the installed wheel, in an empty git repository: import the cluster; validate finds the
planted problems and what an estate without kueue-gitops lacks, nothing more; drift is clean;
importing again changes nothing; a hand edit is shown and kept; the same cluster imported as a
second one joins its tenants; a folder moved to kustomize is shown at its source, not written;
what import cannot read writes nothing, and a namespace it cannot place is written unowned (or
left out with --exclude).

One sandbox per release (module-scoped), the wheel installed once per session.
"""

from __future__ import annotations

import copy
import json
import string
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import ROOT
from tests.installed import git, run
from tests.integration.conftest import release_sandbox

RELEASES = ("v0.9.1", "v0.17.0", "v0.19.2")
# The estate in the API each release serves: v0.9.1 serves kueue.x-k8s.io/v1beta1 only.
ESTATES = {"v0.9.1": "estate-v1beta1.yaml"}
TEAMS = ("--tenants-by", "label=kueue.example.com/team", "--owner", "@acme/platform")
PLANTED = {"namespace-selector-too-broad", "kueue-config-unmanaged-jobs", "preemption-unvalidated"}
# What every estate lacks until kueue-gitops adds it: the alerts and the generated admission
# policies (committed by the platform after the import, not read from the cluster).
NOT_YET_ADOPTED = {"alert-missing", "admission-policies-stale"}
MANAGER = "kubectl"


@pytest.fixture(scope="module", params=RELEASES)
def estate(
    request: pytest.FixtureRequest, toolchain: Toolchain, sandboxes_dir: Path
) -> t.Iterator[Sandbox]:
    """A sandbox running Kueue `request.param`, with the estate applied by hand."""
    version = str(request.param)
    box = release_sandbox(toolchain, sandboxes_dir, "import", version)
    try:
        admin = box.connect()
        estate = ROOT / "tests/data/import" / ESTATES.get(version, "estate.yaml")
        text = string.Template(estate.read_text()).substitute(version=version)
        for doc in yaml.safe_load_all(text):
            admin.apply(doc, manager=MANAGER)
    except BaseException:
        box.down()
        raise
    yield box
    box.down()


def _kg(cli: Path, repo: Path) -> t.Callable[..., t.Any]:
    def kg(*argv: str, code: int = 0) -> str:
        done = run([str(cli), *argv], repo)
        assert done.returncode == code, (
            f"kueue-gitops {' '.join(argv)}:\n{done.stdout}{done.stderr}"
        )
        return done.stdout + done.stderr

    return kg


def _status(repo: Path) -> str:
    return run(["git", "status", "--porcelain", "--untracked-files=all"], repo).stdout


def test_import_validate_drift_reimport_and_a_second_cluster(
    estate: Sandbox,
    base_install: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    renderers: None,
) -> None:
    version = request.node.callspec.params["estate"]
    repo = tmp_path / "platform"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    kg = _kg(base_install, repo)
    access = ("--kubeconfig", str(estate.kubeconfig), "--context", estate.context)

    said = kg("import", "--cluster", "gpu-a", *access, *TEAMS)
    assert "tenants: team-a (team-a); team-b (team-b)" in said
    profile = yaml.safe_load((repo / "clusters/gpu-a/profile.yaml").read_text())["spec"]
    assert profile["kueue"]["version"] == version
    assert profile["admissionLabel"] == {"key": "kueue.example.com/admission", "value": "enabled"}
    team_b = yaml.safe_load((repo / "tenants/team-b/profile.yaml").read_text())["spec"]
    assert team_b["group"] == "example:team-b"
    # The priority class team-a's Workload uses, in the shape the release serves it.
    team_a = yaml.safe_load((repo / "tenants/team-a/profile.yaml").read_text())["spec"]
    assert team_a["priorityClasses"] == {"workload": ["sample-low"]}
    # The platform's identities, proposed from what is live and marked for review.
    profile_text = (repo / "clusters/gpu-a/profile.yaml").read_text()
    assert "# REVIEW: proposed by `kueue-gitops import` from what is live" in profile_text
    assert {"Group system:masters", "ServiceAccount kueue-system/kueue-controller-manager"} <= set(
        profile["platformIdentities"]
    )
    assert "review: platformIdentities proposed in clusters/gpu-a/profile.yaml" in said
    # Keys as a person writes them: a quota's name first, a rule's apiGroups first.
    assert (
        "- name: cpu\n              nominalQuota:"
        in (repo / "clusters/gpu-a/clusterqueues.yaml").read_text()
    )
    assert (
        "- apiGroups: [batch]\n    resources: [jobs]\n    verbs:"
        in (repo / "clusters/gpu-a/rbac.yaml").read_text()
    )
    assert team_b["clusters"] == {
        "gpu-a": {"namespaces": ["team-b"], "clusterQueues": ["shared-cq", "team-b-cq"]}
    }
    # The Cohort, in the version the release serves it in (v0.9.1: v1alpha1, beside v1beta1).
    cohorts = list(yaml.safe_load_all((repo / "clusters/gpu-a/cohorts.yaml").read_text()))
    assert [c["metadata"]["name"] for c in cohorts if c] == ["research"]
    queues = (repo / "clusters/gpu-a/clusterqueues.yaml").read_text()
    for server_side in (
        "status:",
        "uid:",
        "resourceVersion:",
        "managedFields",
        "creationTimestamp",
    ):
        assert server_side not in queues
    assert "queueingStrategy: StrictFIFO" in queues  # what was written stays
    assert queues.count("queueingStrategy") == 1  # the default does not
    assert (repo / "schemas/gpu-a/index.json").is_file()

    validated = run([str(base_install), "validate", "-o", "json"], repo)
    assert validated.returncode == 1, validated.stderr
    found = json.loads(validated.stdout)
    assert {f["rule"] for f in found["findings"]} == PLANTED | NOT_YET_ADOPTED, found["findings"]
    drift = json.loads(run([str(base_install), "drift", "--cluster", "gpu-a", "-o", "json",
                            "--kubeconfig", str(estate.kubeconfig)], repo).stdout)  # fmt: skip
    assert (drift["status"], drift["findings"]) == ("clean", []), drift["findings"]

    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "import gpu-a")
    again = kg("import", "--cluster", "gpu-a", *access, *TEAMS)
    assert "0 file(s) written" in again and _status(repo) == ""

    # A hand edit is shown and kept, --force takes the cluster's version back.
    edited = repo / "tenants/team-a/gpu-a/localqueues.yaml"
    edited.write_text(
        edited.read_text().replace("clusterQueue: team-a-cq", "clusterQueue: shared-cq")
    )
    refused = kg("import", "--cluster", "gpu-a", *access, *TEAMS, code=2)
    assert "+  clusterQueue: team-a-cq" in refused and "--force" in refused
    assert "clusterQueue: shared-cq" in edited.read_text()
    kg("import", "--cluster", "gpu-a", *access, *TEAMS, "--force")
    assert _status(repo) == ""

    # The same cluster again, as a second one: its tenants join those of the first.
    kg("import", "--cluster", "gpu-b", *access, *TEAMS)
    team_a = yaml.safe_load((repo / "tenants/team-a/profile.yaml").read_text())["spec"]
    assert sorted(team_a["clusters"]) == ["gpu-a", "gpu-b"]
    both = json.loads(run([str(base_install), "validate", "-o", "json"], repo).stdout)
    assert {f["rule"] for f in both["findings"]} == PLANTED | NOT_YET_ADOPTED
    assert {f["cluster"] for f in both["findings"]} == {"gpu-a", "gpu-b"}
    drift_b = json.loads(run([str(base_install), "drift", "--cluster", "gpu-b", "-o", "json",
                              "--kubeconfig", str(estate.kubeconfig)], repo).stdout)  # fmt: skip
    assert (drift_b["status"], drift_b["findings"]) == ("clean", []), drift_b

    # team-a moves its folder to kustomize, then its namespace changes on the cluster: import
    # writes no plain file into the rendered folder and shows the difference at its source.
    folder = repo / "tenants/team-a/gpu-a"
    (folder / "kustomization.yaml").write_text(
        "resources: [namespace.yaml, localqueues.yaml, rbac.yaml]\n"
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "team-a renders with kustomize")
    labels = {"kueue.example.com/admission": "enabled", "kueue.example.com/team": "team-a"}
    team_ns: dict[str, t.Any] = {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a", "labels": labels}
    }  # fmt: skip
    admin = estate.connect()
    labelled = copy.deepcopy(team_ns)
    labelled["metadata"]["labels"]["kueue.example.com/cost-center"] = "ml"
    admin.apply(labelled, manager=MANAGER)
    try:
        shown = kg("import", "--cluster", "gpu-a", *access, *TEAMS, code=1)
    finally:
        admin.apply(team_ns, manager=MANAGER)
    assert (
        "rendered: tenants/team-a/gpu-a/ is built by kustomize: not written as plain files; "
        "the cluster differs from what it renders (edit its source):"
    ) in shown
    assert "+    kueue.example.com/cost-center: ml" in shown
    assert "tenants/team-a/gpu-a/namespace.yaml (Namespace/team-a)" in shown
    changed = [line.split()[-1] for line in _status(repo).splitlines()]
    assert [p for p in changed if p.startswith(("tenants/", "clusters/"))] == []  # nor removed


def test_what_import_cannot_read_writes_nothing_and_what_it_cannot_place_is_unowned(
    estate: Sandbox, base_install: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "platform"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    kg = _kg(base_install, repo)
    admin: KubeCluster = estate.connect()

    # A LIST forbidden: an identity that may read all but RBAC.
    reader = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "import-reader-no-rbac"},
        "rules": [
            {"apiGroups": g, "resources": ["*"], "verbs": ["get", "list"]}
            for g in (
                [""],
                ["apps"],
                ["kueue.x-k8s.io"],
                ["scheduling.k8s.io"],
                ["apiextensions.k8s.io"],
                ["batch"],
            )
        ],
    }
    admin.apply(reader, manager=MANAGER)
    admin.apply(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "import-reader-no-rbac"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "import-reader-no-rbac",
            },
            "subjects": [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "reader"}
            ],
        },
        manager=MANAGER,
    )
    partial = estate.credentials("reader")
    said = kg("import", "--cluster", "gpu-a", "--kubeconfig", str(partial),
              "--context", estate.context, *TEAMS, code=3)  # fmt: skip
    assert "LIST ClusterRole" in said and "forbidden" in said and "nothing was written" in said
    assert _status(repo) == ""

    # A namespace the rule cannot place (labelled for admission, no team) does not stop the
    # import: it is written unowned, and validate names it; --exclude leaves it out.
    stray = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "research", "labels": {"kueue.example.com/admission": "enabled"}},
    }
    admin.apply(stray, manager=MANAGER)
    access = ("--kubeconfig", str(estate.kubeconfig), "--context", estate.context)
    try:
        said = kg("import", "--cluster", "gpu-a", *access, *TEAMS)
        assert "unowned: namespace research (--tenants-by label=kueue.example.com/team cannot " \
            "place it: it has no label kueue.example.com/team)" in said  # fmt: skip
        assert "tenants: team-a (team-a); team-b (team-b)" in said
        unowned = "clusters/gpu-a/unowned/research.yaml"
        assert (repo / unowned).is_file()
        validated = json.loads(run([str(base_install), "validate", "-o", "json"], repo).stdout)
        about = [f for f in validated["findings"] if f.get("file") == unowned]
        assert [(f["rule"], f["severity"]) for f in about] == [("namespace-unowned", "warning")]
        assert {f["rule"] for f in validated["findings"]} == (
            PLANTED | NOT_YET_ADOPTED | {"namespace-unowned"}
        )
        left_out = kg("import", "--cluster", "gpu-a", *access, *TEAMS, "--exclude", "research")
        assert "left out (--exclude): namespace(s) research" in left_out
        assert not (repo / unowned).exists()
    finally:  # the label off again (the field's only manager applies without it)
        admin.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "research"}},
                    manager=MANAGER)  # fmt: skip
