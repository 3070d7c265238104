"""The states bench/argocd/run.py puts a synced gpu-prod through, each with what `drift` must say.

Each state changes the live cluster through the API as a person or another controller would
(merge patches and creates under their own field manager) and returns how to undo it. `ours` is
the set of drift rules our audit must report for it (empty: clean); it is asserted by
tests/integration/test_argocd_side_by_side.py. Argo CD's verdicts are only observed (run.py).
"""

from __future__ import annotations

import copy
import typing as t
from dataclasses import dataclass

from auditor.live.kube import KubeCluster

KUEUE = "kueue.x-k8s.io/v1beta2"
RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC = f"{RBAC_GROUP}/v1"
EDITOR = "kubectl-edit"  # the field manager of every hand edit here
Json = dict[str, t.Any]
Undo = t.Callable[[], None]


@dataclass(frozen=True)
class State:
    name: str
    what: str  # the table's first column
    apply: t.Callable[[KubeCluster], Undo]
    ours: frozenset[str]  # drift rules reported; empty: clean
    equal: bool  # whether the state means the same to Kueue as the repository


def _groups(cluster: KubeCluster, cq: str) -> list[Json]:
    return list(cluster.get(KUEUE, "ClusterQueue", cq)["spec"]["resourceGroups"])


def _set_groups(cluster: KubeCluster, cq: str, groups: list[Json]) -> None:
    cluster.patch(KUEUE, "ClusterQueue", cq, {"spec": {"resourceGroups": groups}}, manager=EDITOR)


def _edit_groups(cq: str, change: t.Callable[[list[Json]], None]) -> t.Callable[..., Undo]:
    def apply(cluster: KubeCluster) -> Undo:
        before = _groups(cluster, cq)
        after = copy.deepcopy(before)
        change(after)
        _set_groups(cluster, cq, after)
        return lambda: _set_groups(cluster, cq, before)

    return apply


def _resource(groups: list[Json], flavor: str, resource: str) -> Json:
    found = next(f for f in groups[0]["flavors"] if f["name"] == flavor)
    return t.cast(Json, next(r for r in found["resources"] if r["name"] == resource))


def _respell(groups: list[Json]) -> None:
    """1Ti as bytes, "128" CPUs as millicores, "16" GPUs as a number: the same quantities."""
    for flavor in groups[0]["flavors"]:
        for res in flavor["resources"]:
            if res["nominalQuota"] == "1Ti":
                res["nominalQuota"] = str(2**40)
            elif res["name"] == "cpu" and res["nominalQuota"] == "128":
                res["nominalQuota"] = "128000m"
            elif res["name"] == "nvidia.com/gpu" and res["nominalQuota"] == "16":
                res["nominalQuota"] = 16


def _reorder_resources(groups: list[Json]) -> None:
    """coveredResources and each flavor's resources reversed together: the same groups."""
    groups[0]["coveredResources"].reverse()
    for flavor in groups[0]["flavors"]:
        flavor["resources"].reverse()


def _patch(
    api: str, kind: str, name: str, change: Json, undo: Json, ns: str | None = None
) -> t.Callable[..., Undo]:
    def apply(cluster: KubeCluster) -> Undo:
        cluster.patch(api, kind, name, change, namespace=ns, manager=EDITOR)

        def back() -> None:
            cluster.patch(api, kind, name, undo, namespace=ns, manager=EDITOR)

        return back

    return apply


def _defaults_written(cluster: KubeCluster) -> Undo:
    """The values the CRD defaulted (fields the repo leaves unset) written again by hand."""
    spec = cluster.get(KUEUE, "ClusterQueue", "team-a-cq")["spec"]
    written = {k: spec[k] for k in ("stopPolicy", "flavorFungibility") if k in spec}
    cluster.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": written}, manager=EDITOR)
    return lambda: None  # the same values: nothing to put back


def _create(*objects: Json) -> t.Callable[..., Undo]:
    def apply(cluster: KubeCluster) -> Undo:
        for obj in objects:
            cluster.create(copy.deepcopy(obj))

        def undo() -> None:
            for obj in reversed(objects):
                meta = obj["metadata"]
                if obj["kind"] == "Namespace":  # it may stay Terminating: unlabel it first
                    unlabel = {"metadata": {"labels": None}}
                    cluster.patch("v1", "Namespace", meta["name"], unlabel, manager=EDITOR)
                cluster.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"))

        return undo

    return apply


def _both(*steps: t.Callable[[KubeCluster], Undo]) -> t.Callable[..., Undo]:
    def apply(cluster: KubeCluster) -> Undo:
        undos = [step(cluster) for step in steps]

        def undo() -> None:
            for step in reversed(undos):
                step()

        return undo

    return apply


SCRATCH_NS = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": "scratch", "labels": {"platform.example.com/kueue": "enabled"}},
}
CQ_PATCHER = {
    "apiVersion": RBAC,
    "kind": "ClusterRole",
    "metadata": {"name": "cq-tweaker"},
    "rules": [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "verbs": ["patch"]}
    ],
}
CQ_PATCHERS = {
    "apiVersion": RBAC,
    "kind": "ClusterRoleBinding",
    "metadata": {"name": "team-a-cq-tweakers"},
    "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "cq-tweaker"},
    "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": "example-org:team-a"}],
}
FOREIGN_QUEUE = {
    "apiVersion": KUEUE,
    "kind": "LocalQueue",
    "metadata": {"name": "borrowed", "namespace": "team-a"},
    "spec": {"clusterQueue": "team-b-cq"},
}
GPUS = [{"name": "nvidia.com/gpu", "nominalQuota": "8"}]
COHORT_POOL = [
    {"coveredResources": ["nvidia.com/gpu"], "flavors": [{"name": "a100", "resources": GPUS}]}
]
TEAM_A_LABELS = {"platform.example.com/kueue": "enabled", "platform.example.com/tenant": "team-a"}


def _quota(groups: list[Json]) -> None:
    _resource(groups, "a100", "nvidia.com/gpu")["nominalQuota"] = "24"


def _no_borrowing_limit(groups: list[Json]) -> None:
    del _resource(groups, "a100", "nvidia.com/gpu")["borrowingLimit"]


def _flavors_reversed(groups: list[Json]) -> None:
    groups[0]["flavors"].reverse()


NO_RULES: frozenset[str] = frozenset()
STATES = (
    State("quantities", "quantities re-spelled: memory `1Ti` as bytes, cpu `\"128\"` as "
          "`\"128000m\"`, GPUs `\"16\"` as `16`", _edit_groups("team-a-cq", _respell),
          NO_RULES, equal=True),
    State("defaults", "CRD defaults written explicitly (stopPolicy, flavorFungibility) by "
          "another manager", _defaults_written, NO_RULES, equal=True),
    State("tracking", "Argo CD's label-tracking mark left on a ClusterQueue "
          "(`app.kubernetes.io/instance`)",
          _patch(KUEUE, "ClusterQueue", "team-b-cq",
                 {"metadata": {"labels": {"app.kubernetes.io/instance": "gpu-prod-platform"}}},
                 {"metadata": {"labels": {"app.kubernetes.io/instance": None}}}),
          NO_RULES, equal=True),
    State("metadata", "extra label `cost-center: ml` on a ClusterQueue, extra annotation "
          "`owner: alice` on a Namespace, by another manager",
          _both(_patch(KUEUE, "ClusterQueue", "team-a-cq",
                       {"metadata": {"labels": {"cost-center": "ml"}}},
                       {"metadata": {"labels": {"cost-center": None}}}),
                _patch("v1", "Namespace", "team-a",
                       {"metadata": {"annotations": {"owner": "alice"}}},
                       {"metadata": {"annotations": {"owner": None}}})),
          NO_RULES, equal=True),
    State("sets-reordered", "coveredResources and each flavor's resources listed in reverse "
          "(the same resource group)", _edit_groups("team-a-cq", _reorder_resources),
          NO_RULES, equal=True),
    State("flavors-reordered", "a ClusterQueue's flavors reordered (Kueue tries them in "
          "order: other GPUs first)", _edit_groups("team-a-cq", _flavors_reversed),
          frozenset({"drift-flavor"}), equal=False),
    State("hold", "stopPolicy Hold on a ClusterQueue (a field the repo leaves unset)",
          _patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {"stopPolicy": "Hold"}},
                 {"spec": {"stopPolicy": None}}),
          frozenset({"drift-stop-policy"}), equal=False),
    State("cohort-pool", "a Cohort gaining resourceGroups (the repo leaves them unset)",
          _patch(KUEUE, "Cohort", "ai-shared", {"spec": {"resourceGroups": COHORT_POOL}},
                 {"spec": {"resourceGroups": None}}),
          frozenset({"drift-cohort"}), equal=False),
    State("admitted-namespace", "a new Namespace with the admission label (in no Application)",
          _create(SCRATCH_NS), frozenset({"drift-admission-label"}), equal=False),
    State("rbac", "a ClusterRoleBinding letting a tenant group patch ClusterQueues "
          "(in no Application)", _create(CQ_PATCHER, CQ_PATCHERS),
          frozenset({"rbac-power"}), equal=False),
    State("foreign-queue", "a LocalQueue in team-a pointing at team-b's ClusterQueue "
          "(in no Application)", _create(FOREIGN_QUEUE), frozenset({"drift-quota"}),
          equal=False),
    State("quota", "a100 GPU quota 16 → 24", _edit_groups("team-a-cq", _quota),
          frozenset({"drift-quota"}), equal=False),
    State("label", "team-a's admission label set to `disabled`",
          _patch("v1", "Namespace", "team-a",
                 {"metadata": {"labels": {"platform.example.com/kueue": "disabled"}}},
                 {"metadata": {"labels": TEAM_A_LABELS}}),
          frozenset({"drift-label"}), equal=False),
    State("node-labels", "flavor a100's nodeLabels pointing at other nodes",
          _patch(KUEUE, "ResourceFlavor", "a100",
                 {"spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-A100-PCIE-40GB"}}},
                 {"spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}}}),
          frozenset({"drift-flavor"}), equal=False),
    State("borrowing-limit", "a borrowingLimit removed (unbounded borrowing)",
          _edit_groups("team-a-cq", _no_borrowing_limit), frozenset({"drift-quota"}),
          equal=False),
)  # fmt: skip
