"""Whom the boundary probes act as, and how they read the API server's answers (the probes
themselves run against a real control plane: tests/integration/test_boundaries.py)."""

from __future__ import annotations

import dataclasses

from auditor.kueue import admission
from auditor.live.apierrors import Forbidden
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.repo.profiles import TenantProfile
from auditor.verify.actor import ActingTenant, by_policy, outcome, words_of
from auditor.verify.crossing import pick
from tests.conftest import ROOT

SAID = (
    'jobs.batch "j" is forbidden: ValidatingAdmissionPolicy '
    "'kueue-gitops-queue-name' with binding 'kueue-gitops-queue-name' denied request: use batch"
)
REFUSED = Forbidden(f"cluster c: create Job forbidden (403): {SAID}", code=403, said=SAID)


def declared(cluster: str = "gpu-staging") -> tuple[admission.Boundaries, list[TenantProfile]]:
    repo = Repository.open(ROOT)
    made = boundaries.boundaries(
        repo.cluster(cluster), repo.tenants, repo.load([cluster]).for_cluster(cluster)
    )
    return made, [repo.tenants[n] for n in sorted(repo.tenants)]


def test_the_first_tenant_with_a_group_and_a_queue_is_the_one_acted_as() -> None:
    made, tenants = declared()
    tenant = pick("gpu-staging", made, tenants)
    assert tenant == ActingTenant(
        "team-a",
        "example-org:team-a",
        "team-a",
        ("batch",),
        ("batch-low", "batch-standard"),
        ("tenant-batch",),
        ("team-b-cq",),
    )
    assert tenant is not None and tenant.user == "kueue-gitops-probe:team-a"


def test_without_a_group_there_is_nobody_to_act_as() -> None:
    made, tenants = declared()
    nameless = [dataclasses.replace(t, group=None) for t in tenants]
    assert pick("gpu-staging", made, nameless) is None


def test_a_refusal_counts_only_when_the_named_policy_made_it() -> None:
    assert by_policy(REFUSED, admission.QUEUE_POLICY)
    assert not by_policy(REFUSED, admission.PRIORITY_POLICY)
    assert not by_policy(None, admission.QUEUE_POLICY)  # accepted
    said = 'User "u" cannot create resource "jobs"'
    rbac = Forbidden(f"cluster c: create Job forbidden (403): {said}", code=403, said=said)
    assert not by_policy(rbac, admission.QUEUE_POLICY)
    assert outcome(None) == "was ACCEPTED"
    assert outcome(REFUSED).startswith('was refused: jobs.batch "j" is forbidden: Validating')
    assert words_of(rbac) == 'User "u" cannot create resource "jobs"'
