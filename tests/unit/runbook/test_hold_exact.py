"""hold and resume keep a file's bytes (line endings, BOM, final newline) and patch live clusters
all or none. Clusters here are fakes at our client interface (get, can_i, patch)."""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest

from auditor.errors import ClusterAccessError
from auditor.k8s.objects import Json
from auditor.live.kube import KubeCluster, Limits
from auditor.repo.layout import Repository
from auditor.runbook import hold as runbook_hold

CQ = (
    "apiVersion: kueue.x-k8s.io/v1beta2{nl}kind: ClusterQueue{nl}metadata:{nl}  name: q{nl}"
    "spec:  # the queue{nl}  cohortName: pool{nl}  namespaceSelector: {{}}"
)


@pytest.mark.parametrize(
    "text",
    [
        CQ.format(nl="\r\n") + "\r\n",
        CQ.format(nl="\n").replace("metadata:\n", "metadata:\r\n") + "\n",  # mixed
        "\ufeff" + CQ.format(nl="\n") + "\n",  # a byte-order mark
        CQ.format(nl="\r\n"),  # no final newline
        CQ.format(nl="\r"),  # old Mac line ends: lone CRs
        "\ufeff" + CQ.format(nl="\r\n").replace("kind:", "\n\nkind:"),
    ],
    ids=["crlf", "mixed", "bom", "no-final-newline", "cr", "bom-crlf-lf-no-final-newline"],
)
def test_hold_then_resume_gives_back_the_same_bytes(text: str) -> None:
    held = runbook_hold.set_stop_policy(text, "q.yaml", "q", "Hold")
    added = [line for line in runbook_hold._lines(held) if runbook_hold.MARKER in line]
    [line] = added
    spec_line = next(x for x in runbook_hold._lines(text) if x.lstrip("\ufeff").startswith("spec:"))
    assert line.endswith(spec_line[len(spec_line.rstrip("\r\n")) :])  # the spec line's ending
    assert held.replace(line, "", 1) == text
    assert runbook_hold.stop_policy(held, "q.yaml", "q") == "Hold"
    assert runbook_hold.set_stop_policy(held, "q.yaml", "q", None) == text


# -- --apply: every cluster or none -------------------------------------------------------------


class Queues(KubeCluster):
    """A cluster's ClusterQueue `team-a-cq`, and what it refuses."""

    def __init__(
        self, name: str, *, down: bool = False, denied: bool = False, fails: int = 0
    ) -> None:
        self.name, self.limits = name, Limits()
        self.policy: str | None = None
        self.down, self.denied = down, denied
        self.fails = fails  # how many patches fail before they succeed again
        self.patches: list[Json] = []

    def _reach(self, what: str) -> None:
        if self.down:
            raise ClusterAccessError(f"cluster {self.name} is unreachable ({what})")

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Json:
        self._reach("GET")
        spec = {"stopPolicy": self.policy} if self.policy else {}
        return {"kind": kind, "metadata": {"name": name}, "spec": spec}

    def can_i(self, verb: str, api_version: str, kind: str, *args: t.Any) -> str | None:
        self._reach("access review")
        return "RBAC: no rule allows it" if self.denied else None

    def patch(self, api_version: str, kind: str, name: str, patch: Json, **kw: t.Any) -> Json:
        self._reach("patch")
        self.patches.append(patch)
        if self.fails:
            self.fails -= 1
            raise ClusterAccessError(f"cluster {self.name}: patch ClusterQueue {name} refused")
        self.policy = patch["spec"]["stopPolicy"]
        return {}


@pytest.fixture
def repo(repo_copy: Path) -> Repository:
    return Repository.open(repo_copy)


def live(*clusters: Queues) -> dict[str, KubeCluster]:
    return {c.name: c for c in clusters}


def test_nothing_is_patched_unless_every_cluster_answers_and_allows_it(repo: Repository) -> None:
    prod, staging = Queues("gpu-prod"), Queues("gpu-staging", down=True)
    with pytest.raises(ClusterAccessError, match="gpu-staging is unreachable") as e:
        runbook_hold.apply_live(repo, "team-a-cq", "Hold", live(prod, staging))
    assert "nothing patched, nothing committed" in str(e.value)
    prod, staging = Queues("gpu-prod", denied=True), Queues("gpu-staging")
    with pytest.raises(ClusterAccessError, match="gpu-prod: may not patch ClusterQueue team-a-cq"):
        runbook_hold.apply_live(repo, "team-a-cq", "Hold", live(prod, staging))
    assert prod.patches == staging.patches == []


def test_a_failed_patch_undoes_the_earlier_ones(repo: Repository) -> None:
    prod, staging = Queues("gpu-prod"), Queues("gpu-staging", fails=1)
    with pytest.raises(ClusterAccessError) as e:
        runbook_hold.apply_live(repo, "team-a-cq", "Hold", live(prod, staging))
    assert "undone on gpu-prod; nothing is changed live and nothing committed" in str(e.value)
    assert prod.patches == [{"spec": {"stopPolicy": "Hold"}}, {"spec": {"stopPolicy": None}}]
    assert prod.policy is None


def test_an_undo_that_fails_says_what_is_held_live_and_how_to_finish(repo: Repository) -> None:
    prod, staging = Queues("gpu-prod", fails=0), Queues("gpu-staging", fails=1)
    prod_patch = prod.patch

    def then_down(*args: t.Any, **kw: t.Any) -> Json:
        out = prod_patch(*args, **kw)
        prod.down = True  # gone right after the hold landed
        return out

    prod.patch = then_down  # type: ignore[method-assign]
    with pytest.raises(ClusterAccessError) as e:
        runbook_hold.apply_live(repo, "team-a-cq", "Hold", live(prod, staging))
    message = str(e.value)
    assert "stopPolicy Hold is STILL LIVE on gpu-prod" in message
    assert "`kueue-gitops hold team-a-cq --apply` again" in message
    assert "`kueue-gitops resume team-a-cq --cluster gpu-prod --apply`" in message
    assert prod.policy == "Hold"


def test_when_every_cluster_takes_it_each_is_patched_once(repo: Repository) -> None:
    prod, staging = Queues("gpu-prod"), Queues("gpu-staging")
    assert runbook_hold.apply_live(repo, "team-a-cq", "Hold", live(prod, staging)) == [
        "gpu-prod",
        "gpu-staging",
    ]
    assert (prod.policy, staging.policy) == ("Hold", "Hold")
    assert len(prod.patches) == len(staging.patches) == 1
