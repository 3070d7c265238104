"""The Helm estate (tests/data/rendered/helm) synced by the real Argo CD, which renders
charts/team-space with the pinned helm on its repo-server's PATH, one release per team and
cluster with that cluster's values file; then `drift` on the objects kueue-gitops renders the
same way.

One sandbox, registered as the estate's cluster `north`, runs Kueue and Argo CD; apps/ makes
`nlp-north` and `robotics-north` (the chart), `queues-north` (platform/queues, a plain folder:
the queues, Kueue's Configuration, the alerts) and `policies-north` (the generated admission
policies). `south` is not registered, so only its Applications' errors name it.
"""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest

from auditor.sandbox import Sandbox, Toolchain
from tests.integration import rendered
from tests.integration.rendered import drift

KUEUE = "kueue.x-k8s.io/v1beta2"
RBAC = "rbac.authorization.k8s.io/v1"
APPS = {"nlp-north", "robotics-north", "queues-north", "policies-north"}


@pytest.fixture(scope="module")
def synced(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[tuple[Sandbox, Path]]:
    yield from rendered.synced("helm", "north", APPS, toolchain, sandboxes_dir, tmp_path_factory)


def test_argo_cd_renders_each_teams_release_as_kueue_gitops_does(
    synced: tuple[Sandbox, Path],
) -> None:
    box, _repo = synced
    live = box.connect()
    assert live.get(KUEUE, "LocalQueue", "jobs", "nlp")["spec"]["clusterQueue"] == "nlp-cq"
    assert live.get(KUEUE, "LocalQueue", "jobs", "robotics")["spec"]["clusterQueue"] == (
        "robotics-cq"
    )
    labels = live.get("v1", "Namespace", "robotics")["metadata"]["labels"]
    assert labels["acme.io/team"] == "robotics"  # the release's values, north's file
    binding = live.get(RBAC, "RoleBinding", "nlp-submitters", "nlp")
    assert binding["subjects"][0]["name"] == "acme:nlp"


def test_drift_is_clean_then_names_a_planted_change_at_its_line(
    synced: tuple[Sandbox, Path],
) -> None:
    box, repo = synced
    code, report = drift(repo, box, "north")
    assert (code, report["findings"]) == (0, []), [
        (f["rule"], f["message"]) for f in report["findings"]
    ]
    live = box.connect()
    queue = live.get(KUEUE, "ClusterQueue", "nlp-cq")
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "4"
    live.patch(KUEUE, "ClusterQueue", "nlp-cq", {"spec": queue["spec"]}, manager="kubectl-edit")
    code, report = drift(repo, box, "north")
    assert code == 1
    assert [(f["kind"], f["name"], f.get("file"), f.get("line")) for f in report["findings"]] == [
        ("ClusterQueue", "nlp-cq", "platform/queues/queues.yaml", 21),  # its cpu quota
    ], report["findings"]


def test_a_hand_edit_of_a_charts_object_is_found_at_the_values_file_that_fed_it(
    synced: tuple[Sandbox, Path],
) -> None:
    box, repo = synced
    live = box.connect()
    binding = live.get(RBAC, "RoleBinding", "robotics-submitters", "robotics")
    binding["subjects"][0]["name"] = "acme:everyone"
    live.patch(
        RBAC, "RoleBinding", "robotics-submitters", {"subjects": binding["subjects"]},
        namespace="robotics", manager="kubectl-edit",
    )  # fmt: skip
    code, report = drift(repo, box, "north")
    assert code == 1
    mine = [f for f in report["findings"] if f["name"] == "robotics-submitters"]
    assert [(f["kind"], f.get("file"), f.get("line")) for f in mine] == [
        ("RoleBinding", "environments/north/robotics.yaml", 4),  # submitters: acme:robotics
    ], report["findings"]
