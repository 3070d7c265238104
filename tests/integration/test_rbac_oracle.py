"""The RBAC model against the API server's own authorizer, verb by verb.

For every verb discovery lists for ClusterQueues, Namespaces and Roles (plus `bind` and `escalate`
on Roles, which only RBAC asks), one group gets it through a ClusterRole and ClusterRoleBinding,
another through a Role or ClusterRole and a RoleBinding in team-a. SubjectAccessReview is asked,
for every group, every (verb, resource) cluster-wide and in each namespace; then:
- validate's tenant-rbac check (the RoleBindings and Roles sit in team-a's tenant folder) flags a
  grant iff SubjectAccessReview allows it a verb the tenant baseline forbids in team-a;
- drift (the grants live, not in the repo) reports, for each group, exactly the watched powers
  SubjectAccessReview allows it;
- plan (the grants added by a commit) reports exactly the same powers as gained.
"""

from __future__ import annotations

import json
import shutil
import typing as t
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from auditor.k8s.rbac import WATCHED, Power
from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import run_line, start_sandbox
from tests.integration.drift_live import CLUSTER, KUEUE, drift_json, servable_repo, sync
from tests.unit.conftest import Revisions
from tests.unit.validate.checks.helpers import run_check

RBAC = "rbac.authorization.k8s.io/v1"
Json = dict[str, t.Any]
KINDS = ((KUEUE, "ClusterQueue"), ("v1", "Namespace"), (RBAC, "Role"))
RBAC_ONLY = {"roles": ("bind", "escalate")}  # asked by RBAC itself, never listed by discovery
NAMESPACES = ("team-a", "team-b")
GRANTED_IN = "team-a"
TENANT_READS = ("get", "list", "watch")  # the tenant baseline: read, submit jobs, nothing else
PLATFORM_FILE = f"clusters/{CLUSTER}/oracle-rbac.yaml"
TENANT_FILE = f"tenants/{GRANTED_IN}/{CLUSTER}/oracle-rbac.yaml"


@dataclass(frozen=True)
class Resource:
    group: str
    name: str
    namespaced: bool
    verbs: tuple[str, ...]


@dataclass(frozen=True)
class Grant:
    """One verb on one resource for one group, cluster-wide or in GRANTED_IN."""

    resource: Resource
    verb: str
    in_namespace: bool

    @property
    def name(self) -> str:  # of the role, the binding, and (with colons) the group
        return f"oracle-{'ns' if self.in_namespace else 'cluster'}-{self.resource.name}-{self.verb}"

    @property
    def group(self) -> str:
        return self.name.replace("-", ":", 2)

    def objects(self) -> list[tuple[str, Json]]:
        """(where in the repo, object): the role, then the binding."""
        rule = {"apiGroups": [self.resource.group], "resources": [self.resource.name],
                "verbs": [self.verb]}  # fmt: skip
        # A Role cannot reach a cluster-scoped kind, so those namespace grants use a ClusterRole.
        role_kind = "Role" if self.in_namespace and self.resource.namespaced else "ClusterRole"
        if self.in_namespace and self.resource.name == "namespaces":
            role_kind = "Role"  # ... except a namespace, which a Role reaches as itself
        ns = {"namespace": GRANTED_IN} if self.in_namespace else {}
        role = {"apiVersion": RBAC, "kind": role_kind, "rules": [rule],
                "metadata": {"name": self.name, **(ns if role_kind == "Role" else {})}}  # fmt: skip
        binding = {
            "apiVersion": RBAC,
            "kind": "RoleBinding" if self.in_namespace else "ClusterRoleBinding",
            "metadata": {"name": self.name, **ns},
            "roleRef": {"apiGroup": RBAC.split("/")[0], "kind": role_kind, "name": self.name},
            "subjects": [{"apiGroup": RBAC.split("/")[0], "kind": "Group", "name": self.group}],
        }
        tenant = TENANT_FILE if self.in_namespace else PLATFORM_FILE
        return [(tenant if role_kind == "Role" else PLATFORM_FILE, role), (tenant, binding)]


Question = tuple[str, Power]  # (group, power asked)


@dataclass
class Oracle:
    box: Sandbox
    repo: Path  # synced, without the grants: what drift compares with
    revisions: Revisions  # base: that repo; head: with the grants
    resources: list[Resource]
    grants: list[Grant]
    allowed: set[Question]  # SubjectAccessReview's yes answers
    asked: int


def discover(cluster: KubeCluster) -> list[Resource]:
    found = []
    for api_version, kind in KINDS:
        res = cluster.resource(api_version, kind)
        group = api_version.rpartition("/")[0]
        verbs = res.verbs + RBAC_ONLY.get(res.plural, ())
        found.append(Resource(group, res.plural, res.namespaced, verbs))
    return found


def questions(resources: list[Resource]) -> list[Power]:
    out = []
    for res in resources:
        for verb in res.verbs:
            out.append(Power(verb, res.group, res.name))
            out += [Power(verb, res.group, res.name, ns) for ns in NAMESPACES]
    return out


def review(cluster: KubeCluster, group: str, power: Power) -> bool:
    attrs: Json = {"verb": power.verb, "group": power.group, "resource": power.resource}
    if power.namespace:
        attrs["namespace"] = power.namespace
        if power.resource == "namespaces":
            attrs["name"] = power.namespace  # a namespace's own request carries it as its name
    answer = cluster.create(
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {"user": "oracle:probe", "groups": [group], "resourceAttributes": attrs},
        }
    )
    return bool(answer["status"].get("allowed"))


@pytest.fixture(scope="module")
def oracle(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[Oracle]:
    box = start_sandbox(toolchain, sandboxes_dir, "rbac-oracle")
    cluster = box.connect()
    repo = servable_repo(tmp_path_factory.mktemp("oracle-repo"), cluster)
    sync(box, repo)
    resources = discover(cluster)
    grants = [Grant(r, v, ns) for r in resources for v in r.verbs for ns in (False, True)]
    files: dict[str, list[Json]] = {}
    for grant in grants:
        for where, obj in grant.objects():
            cluster.create(obj)
            files.setdefault(where, []).append(obj)
    revisions = Revisions(shutil.copytree(repo, tmp_path_factory.mktemp("oracle-git") / "r"))
    revisions.commit("base")
    for where, objs in files.items():
        revisions.write(where, yaml.safe_dump_all(objs, sort_keys=False))
    revisions.commit("the oracle's grants")
    asked = [(g.group, q) for g in grants for q in questions(resources)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda gq: review(cluster, *gq), asked))
    yield Oracle(box, repo, revisions, resources, grants,
                 {q for q, yes in zip(asked, answers, strict=True) if yes}, len(asked))  # fmt: skip
    revisions.repo.close()
    box.down()


def test_the_questions_cover_every_discovered_verb_and_the_grants_took(oracle: Oracle) -> None:
    verbs = {r.name: set(r.verbs) for r in oracle.resources}
    assert {"create", "update", "patch", "delete", "deletecollection"} <= verbs["clusterqueues"]
    assert {"update", "patch"} <= verbs["namespaces"] and {"bind"} <= verbs["roles"]
    assert oracle.asked == len(oracle.grants) * len(questions(oracle.resources))
    # Each group is allowed its own verb (in team-a, for the namespace grants) and nothing else.
    for grant in oracle.grants:
        mine = {p for g, p in oracle.allowed if g == grant.group}
        assert {(p.verb, p.resource) for p in mine} == {(grant.verb, grant.resource.name)}
        assert {p.namespace for p in mine} == (
            {GRANTED_IN} if grant.in_namespace else {None, *NAMESPACES}
        )


def meaningful(oracle: Oracle, power: Power) -> bool:
    """Watched, and a request the API server really makes: a namespace only for namespaced
    resources, and for a namespace itself."""
    res = next(r for r in oracle.resources if r.name == power.resource)
    watched = any(
        (w.group, w.resource) == (power.group, power.resource) and power.verb in w.verbs
        for w in WATCHED
    )
    return watched and (power.namespace is None or res.namespaced or res.name == "namespaces")


def assert_reports_exactly_what_sar_allows(oracle: Oracle, reported: dict[str, set[str]]) -> None:
    """Each group's reported powers, widened as the authorizer widens them (cluster-wide covers
    every namespace), answer every meaningful question as SubjectAccessReview did."""
    by_text = {str(p): p for p in questions(oracle.resources)}
    for grant in oracle.grants:
        held = [by_text[text] for text in reported.get(grant.group, set())]
        for power in questions(oracle.resources):
            if meaningful(oracle, power):
                ours = any(h.covers(power) for h in held)
                assert ours == ((grant.group, power) in oracle.allowed), (grant.group, str(power))
    assert set(reported) <= {g.group for g in oracle.grants}


def test_drift_reports_exactly_the_watched_powers_sar_allows(oracle: Oracle) -> None:
    code, report = drift_json(oracle.repo, oracle.box.kubeconfig)
    assert code == 1
    found = [f for f in report["findings"] if f["rule"] == "rbac-power"]
    assert [f for f in report["findings"] if f["rule"] != "rbac-power"] == []
    reported: dict[str, set[str]] = {}
    for f in found:
        reported.setdefault(f["subject"].removeprefix("Group "), set()).update(f["powers"])
    assert_reports_exactly_what_sar_allows(oracle, reported)
    # The motivating case: a deletecollection grant, and the path it comes through.
    [dc] = [
        f for f in found if f["subject"] == "Group oracle:cluster:clusterqueues-deletecollection"
    ]
    assert dc["powers"] == ["deletecollection clusterqueues.kueue.x-k8s.io cluster-wide"]
    assert "oracle-cluster-clusterqueues-deletecollection -> ClusterRole " in dc["message"]
    assert dc["message"].endswith("-> rules[0]; the repo grants it no such power")


def test_plan_reports_exactly_the_watched_powers_sar_allows_as_gained(oracle: Oracle) -> None:
    result = run_line(
        ["kueue-gitops", "--repo", str(oracle.revisions.root), "plan", "diff", "--base", "HEAD~1",
         "--head", "HEAD", "--cluster", CLUSTER, "-o", "json"]
    )  # fmt: skip
    changes = [c for c in json.loads(result.stdout)["changes"] if c["category"] == "rbac"]
    assert {c["action"] for c in changes} == {"gains"}
    group_of = {g.name: g.group for g in oracle.grants}
    reported: dict[str, set[str]] = {}
    for c in changes:
        reported.setdefault(group_of[c["name"]], set()).add(c["path"])
    assert_reports_exactly_what_sar_allows(oracle, reported)


def test_validate_flags_a_tenant_grant_iff_sar_allows_a_verb_the_baseline_forbids(
    oracle: Oracle,
) -> None:
    findings = run_check(oracle.revisions.root, "tenant-rbac")
    flagged = {f.name for f in findings}
    expected = {
        g.name
        for g in oracle.grants
        if g.in_namespace
        and any(
            gr == g.group and p.namespace == GRANTED_IN and p.verb not in TENANT_READS
            for gr, p in oracle.allowed
        )
    }
    assert flagged == expected
    assert {f.file for f in findings} <= {TENANT_FILE}
    # Reads pass: every namespace grant of get, list or watch is allowed by SAR and not flagged.
    reads = {g.name for g in oracle.grants if g.in_namespace and g.verb in TENANT_READS}
    assert reads and not reads & flagged
