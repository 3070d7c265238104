"""auditor.kueue.release: what this tool carries of each Kueue release, how a missing one is
named, and how the knowledge is derived from a release's files (tests/integration/
test_kueue_api.py derives every pinned release again and compares)."""

from __future__ import annotations

import typing as t

import yaml

from auditor.kueue import release, webhooks
from auditor.repo.layout import Repository
from auditor.sandbox import releases
from tests.conftest import ROOT
from tests.estate import ESTATE

Json = dict[str, t.Any]


def test_every_release_a_profile_names_is_carried_whole() -> None:
    for profile in Repository.open(ESTATE).clusters.values():
        version = profile.kueue_version
        assert version, f"{profile.file}: names no Kueue release"
        known = release.get(version)
        assert known is not None, (
            f"{profile.file}: Kueue {version} is not carried: {release.add_command(version)}"
        )
        assert known.doc["configuration"] and known.doc["frameworks"], version
        assert known.crds["ClusterQueue"].served, version
        assert set(known.doc["webhooks"]["rules"]) == set(webhooks.PROBED), version
        assert set(known.doc["webhooks"]["limits"]) == set(webhooks.LIMITS), version


def test_every_carried_release_is_pinned_so_it_can_be_derived_again() -> None:
    testenv = ROOT / "testenv"
    control_plane = next(
        line.split()[1]
        for line in (testenv / "go.mod").read_text().splitlines()
        if line.strip().startswith("sigs.k8s.io/kueue ")
    )
    assert set(release.known()) == {control_plane, *releases.pinned(testenv)}


def test_the_estate_runs_three_releases_each_carried() -> None:
    by_cluster = {n: p.kueue_version for n, p in Repository.open(ESTATE).clusters.items()}
    assert by_cluster == {"gpu-legacy": "v0.9.1", "gpu-prod": "v0.17.0", "gpu-staging": "v0.19.2"}


def test_the_nearest_carried_release() -> None:
    assert release.known() == ["v0.9.1", "v0.17.0", "v0.19.2"]
    assert release.nearest("v0.19.5") == "v0.19.2"  # the same minor's
    assert release.nearest("v0.18.0") == "v0.17.0"  # a tie between minors: the older
    assert release.nearest("v0.20.0") == "v0.19.2"
    assert release.nearest("v0.10.0") == "v0.9.1"
    assert release.nearest(None) == release.nearest("latest") == "v0.19.2"
    assert release.nearest_release("v0.18.0").version == "v0.17.0"
    assert "testenv/kueue-v0.18.0/" in release.add_command("v0.18.0")
    assert "kueue-gitops sandbox kueue-api --kueue v0.18.0 --write" in release.add_command(
        "v0.18.0"
    )


def test_what_the_carried_releases_say_of_their_crds() -> None:
    legacy, current = release.get("v0.9.1"), release.get("v0.19.2")
    assert legacy is not None and current is not None
    assert legacy.crds["Cohort"].served == ("v1alpha1",) and legacy.converted == []
    assert current.crds["ClusterQueue"].storage == "v1beta2"
    assert current.crds["ClusterQueue"].deprecated == ("v1beta1",)
    assert current.converted == [
        "clusterqueues", "cohorts", "localqueues", "multikueueclusters", "workloads"
    ]  # fmt: skip
    assert "LocalQueue" not in current.webhook_kinds  # LocalQueues have no webhook
    assert current.webhook_kinds["ClusterQueue"] == {
        "mutating": ["CREATE"], "validating": ["CREATE", "UPDATE"]
    }  # fmt: skip


def crd(plural: str, kind: str, *versions: tuple[str, bool, bool]) -> Json:
    return {
        "metadata": {"name": f"{plural}.kueue.x-k8s.io"},
        "spec": {
            "names": {"plural": plural, "kind": kind},
            "versions": [
                {"name": n, "served": True, "storage": s, **({"deprecated": True} if d else {})}
                for n, s, d in versions
            ],
        },
    }


def test_crds_are_read_with_the_conversion_their_install_patches_in() -> None:
    bases = [
        crd("clusterqueues", "ClusterQueue", ("v1beta1", False, True), ("v1beta2", True, False)),
        crd("topologies", "Topology", ("v1beta2", True, False)),
    ]
    patch = {
        "metadata": {"name": "clusterqueues.kueue.x-k8s.io"},
        "spec": {"conversion": {"strategy": "Webhook"}},
    }
    found = release.crds_of(bases, [patch])
    assert found["clusterqueues"] == {
        "kind": "ClusterQueue",
        "served": ["v1beta1", "v1beta2"],
        "storage": "v1beta2",
        "deprecated": ["v1beta1"],
        "conversion": "Webhook",
    }
    assert found["topologies"]["conversion"] == "None"


def test_webhook_kinds_are_the_kueue_kinds_the_configurations_send() -> None:
    crds = {"clusterqueues": {"kind": "ClusterQueue"}, "workloads": {"kind": "Workload"}}
    configs = yaml.safe_load_all(
        """
        kind: ValidatingWebhookConfiguration
        webhooks:
          - rules: [{apiGroups: [kueue.x-k8s.io], operations: [CREATE, UPDATE],
                     resources: [clusterqueues]}]
          - rules: [{apiGroups: [kueue.x-k8s.io], operations: [UPDATE],
                     resources: [workloads, workloads/status]}]
          - rules: [{apiGroups: [batch], operations: [CREATE], resources: [jobs]}]
        ---
        kind: MutatingWebhookConfiguration
        webhooks:
          - rules: [{apiGroups: [kueue.x-k8s.io], operations: [CREATE],
                     resources: [clusterqueues]}]
        """.replace("\n        ", "\n")
    )
    assert release.webhook_kinds(configs, crds) == {
        "ClusterQueue": {"mutating": ["CREATE"], "validating": ["CREATE", "UPDATE"]},
        "Workload": {"validating": ["UPDATE"]},
    }


def test_probes_are_the_catalogues_examples_in_the_releases_own_api() -> None:
    legacy = webhooks.probes({"ClusterQueue": "v1beta1", "Cohort": "v1alpha1"})
    current = webhooks.probes({"ClusterQueue": "v1beta2", "Cohort": "v1beta2"})
    assert set(current) == {f"{r}:{s}" for r in webhooks.PROBED for s in ("passes", "fails")}
    cq = current["limit-without-cohort:passes"]
    assert cq["apiVersion"] == "kueue.x-k8s.io/v1beta2" and "cohortName" in cq["spec"]
    old = legacy["limit-without-cohort:passes"]
    assert old["apiVersion"] == "kueue.x-k8s.io/v1beta1" and "cohortName" not in old["spec"]
    assert old["spec"]["cohort"] == cq["spec"]["cohortName"]


def test_a_rule_is_refused_only_when_its_failing_example_is_and_its_passing_one_is_not() -> None:
    ok: Json = {"webhook": True, "errors": []}
    refused: Json = {"webhook": True, "errors": [{"field": "spec.x", "detail": "no"}]}
    verdicts = {f"{r}:passes": ok for r in webhooks.PROBED} | {
        f"{r}:fails": refused for r in webhooks.PROBED
    }
    verdicts["resource-order:fails"] = ok  # this release lets it through
    verdicts["quantity-negative:passes"] = refused  # this example fails for another reason
    folded = webhooks.fold(verdicts)
    assert folded["flavor-repeated"] == {"refused": True, "field": "spec.x", "detail": "no"}
    assert folded["resource-order"]["refused"] is False
    assert folded["quantity-negative"]["refused"] is False


def test_what_the_carried_releases_say_of_their_gates_and_default_names() -> None:
    legacy, prod, staging = (release.get(v) for v in ("v0.9.1", "v0.17.0", "v0.19.2"))
    assert legacy is not None and prod is not None and staging is not None
    assert legacy.default_name("LocalQueue") is None  # no LocalQueue defaulting before v0.10
    assert prod.default_name("LocalQueue") == staging.default_name("LocalQueue") == "default"
    assert prod.default_name("WorkloadPriorityClass") is None  # v0.18's
    assert staging.default_name("WorkloadPriorityClass") == "default"
    assert prod.gates["LocalQueueDefaulting"] == release.Gate(True, "", locked=True)
    assert "LocalQueueDefaulting" not in staging.gates  # graduated, then removed
    assert staging.gates["MultiKueueManagerQuotaAutomation"] == release.Gate(False, "ALPHA")
    assert "MultiKueueManagerQuotaAutomation" not in prod.gates
    assert legacy.gates["TopologyAwareScheduling"].default is False


def test_default_names_are_read_from_the_releases_constants() -> None:
    constants = """
const (
\tQueueLabel = "kueue.x-k8s.io/queue-name"
\t// DefaultLocalQueueName is ...
\tDefaultLocalQueueName kueue.LocalQueueName = "default"
\tDefaultWorkloadPriorityClassName = "fallback"
)
"""
    assert release.default_names(constants) == {
        "LocalQueue": "default", "WorkloadPriorityClass": "fallback"
    }  # fmt: skip
    assert release.default_names('const QueueLabel = "x"') == {}


def test_the_fields_a_release_webhook_holds_immutable_are_its_own_codes() -> None:
    """Found by each release's ValidateUpdate (testenv/kueueapi): v0.19 holds a ClusterQueue's
    concurrentAdmissionPolicy, which v0.17 does not have."""
    current, previous = release.get("v0.19.2"), release.get("v0.17.0")
    assert current is not None and previous is not None
    assert current.immutable("ClusterQueue") == ("spec.concurrentAdmissionPolicy",)
    assert previous.immutable("ClusterQueue") == ()
    assert current.immutable("ResourceFlavor") == ()
