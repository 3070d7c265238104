"""An editor's session (auditor/validate/session.py, the language server's and the resident's
engine) on a cluster whose ClusterQueues file holds many queues: an edit of one queue's quota
judges that queue alone, runs the per-object checks on that queue (on that file, when the file
as it was is not known) and localqueue-target on the LocalQueues naming that queue alone; after
each edit of a series (queues, a Namespace, a platform binding) the findings are those a cold
`validate` reports for the same files, in every file (a LocalQueue of a queue made invalid, a
finding whose line moved)."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest

from auditor.model import Resource
from auditor.validate import checks, engine
from auditor.validate.session import Session
from tests.conftest import run_line
from tests.estate import copy_estate

CQ = "clusters/gpu-prod/clusterqueues.yaml"
LQ = "tenants/team-a/gpu-prod/localqueues.yaml"
NS = "tenants/team-a/gpu-prod/namespace.yaml"
ADMITTED = "    platform.example.com/kueue: enabled\n"
BINDINGS = "clusters/gpu-prod/bindings.yaml"
BINDING = """apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ops-admin
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: Group
    name: example-org:platform
"""
SPARE = 40  # queues added to the file
EDITED = "spare-20"
NOT_SELECTED = "lq-namespace-not-selected"
TOO_BROAD = "namespace-selector-too-broad"  # the spare queues' `namespaceSelector: {}`
HELD = "  stopPolicy: Hold\n"
UNTOLERATED = "flavor-not-tolerated"
PREEMPTS = "  preemption:\n    reclaimWithinCohort: Any\n"
SPARE_QUEUE = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: spare-{n:02d}
  annotations:
    argocd.argoproj.io/sync-options: Prune=false,Delete=false
spec:
  cohortName: ai-shared
  namespaceSelector: {{}}
  resourceGroups:
    - coveredResources: [cpu]
      flavors:
        - name: cpu-only
          resources:
            - name: cpu
              nominalQuota: "{n}"
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The estate without argocd/ (as the benchmark's corpus), its gpu-prod ClusterQueues file
    holding 40 more queues, and a file of the platform's binding."""
    repo = copy_estate(tmp_path / "repo", "clusters", "tenants", "schemas")
    (repo / BINDINGS).write_text(BINDING)
    with (repo / CQ).open("a") as f:
        f.write("".join(SPARE_QUEUE.format(n=n) for n in range(SPARE)))
    return repo


def validated(repo: Path) -> list[dict[str, t.Any]]:
    """What a cold `validate -o json` reports for the files on disk."""
    result = run_line(["kueue-gitops", "--repo", str(repo), "validate", "-o", "json", "--no-cache"])
    assert result.exit_code in (0, 1), result.output
    return t.cast(list[dict[str, t.Any]], json.loads(result.stdout)["findings"])


def reported(session: Session) -> list[dict[str, t.Any]]:
    return t.cast(
        list[dict[str, t.Any]], json.loads(json.dumps([f.to_json() for f in session.findings]))
    )


def quota_of(text: str, queue: str, old: str, new: str) -> str:
    """`text` with `old` replaced by `new` in the document of ClusterQueue `queue` alone."""
    docs = text.split("\n---\n")
    [at] = [i for i, d in enumerate(docs) if f"  name: {queue}\n" in d]
    assert old in docs[at], (queue, old)
    docs[at] = docs[at].replace(old, new, 1)
    return "\n---\n".join(docs)


def replaced(old: str, new: str) -> t.Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


def on(queue: str, old: str, new: str) -> t.Callable[[str], str]:
    return lambda text: quota_of(text, queue, old, new)


def test_a_quota_edit_judges_the_queue_alone_and_reruns_per_object_checks_on_it_alone(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session(repo)
    judged: list[Resource] = []
    runs: list[tuple[str, set[str]]] = []  # each check run: its id, the files of its objects
    queues_of: dict[str, list[set[str]]] = {}  # each check's runs: the ClusterQueues it saw
    queues: list[set[str]] = []  # each run of localqueue-target: the files of its LocalQueues
    judge, run_noting = engine.judge, checks.run_noting

    def counted_judge(validator: t.Any, resource: Resource, cluster: str) -> t.Any:
        judged.append(resource)
        return judge(validator, resource, cluster)

    def noted_run(module: t.Any, ctx: checks.CheckContext) -> t.Any:
        runs.append((module.ID, {r.file for r in ctx.resources}))
        queues_of.setdefault(module.ID, []).append({r.name for r in ctx.of_kind("ClusterQueue")})
        if module.ID == "localqueue-target":
            queues.append({r.file for r in ctx.of_kind("LocalQueue")})
        return run_noting(module, ctx)

    monkeypatch.setattr(engine, "judge", counted_judge)
    monkeypatch.setattr(checks, "run_noting", noted_run)
    text = quota_of((repo / CQ).read_text(), EDITED, 'nominalQuota: "20"', 'nominalQuota: "21"')
    session.edit(CQ, text.encode())

    assert [r.name for r in judged] == [EDITED]  # the 41 queues left as they were keep theirs
    per_object = {i for i, m in checks.CHECKS.items() if m.RERUN.per_object}
    assert {i for i, _ in runs} & per_object  # they ran again, on the edited file alone
    assert [(i, files) for i, files in runs if i in per_object and files - {CQ}] == []
    assert queues == []  # no LocalQueue names spare-20

    # team-a's queue: localqueue-target runs on the LocalQueue naming it alone, and the
    # per-object checks on that queue alone (the file as it was is known now)
    queues_of.clear()
    text = quota_of(text, "team-a-cq", 'nominalQuota: "256"', 'nominalQuota: "255"')
    session.edit(CQ, text.encode())
    assert queues == [{LQ}]
    assert {i: q for i, q in queues_of.items() if i in per_object} == {
        i: [{"team-a-cq"}] for i in per_object if i in queues_of
    }
    assert "namespace-selector" in queues_of
    (repo / CQ).write_text(text)
    assert reported(session) == validated(repo)

    # a LocalQueue sent to another queue: the admission policies, made of the queues' names
    # and namespaces, are not made again
    runs.clear()
    lq = (repo / LQ).read_text().replace("clusterQueue: team-a-cq", "clusterQueue: team-b-cq")
    session.edit(LQ, lq.encode())
    assert "localqueue-target" in {i for i, _ in runs}
    assert "admission-policies" not in {i for i, _ in runs}
    (repo / LQ).write_text(lq)
    assert reported(session) == validated(repo)


def test_after_each_edit_the_findings_are_a_cold_validates(
    repo: Path,
) -> None:
    session = Session(repo)
    edits: list[tuple[str, str, t.Callable[[str], str], str | None]] = [
        # (what, the file, the edit, a rule the cold run then reports)
        ("a number", CQ, on(EDITED, '"20"', "1"), None),
        # `true == 1` in Python: the verdict on the queue as it was must not be kept
        ("a boolean", CQ, on(EDITED, "nominalQuota: 1", "nominalQuota: true"), "schema"),
        # team-a's LocalQueue, in another file, sends its jobs to a queue that does not admit it
        ("team-a's selector", CQ, on("team-a-cq", "tenant: team-a", "tenant: b"), NOT_SELECTED),
        # both findings' lines move, and the LocalQueue's message names the queue's line
        ("a line above", CQ, lambda s: "# the platform team's queues\n" + s, NOT_SELECTED),
        ("the queue mended", CQ, on(EDITED, "true", '"20"'), NOT_SELECTED),
        # findings of the per-object checks about the one queue edited
        ("a stopped queue", CQ, on(EDITED, "spec:\n", "spec:\n" + HELD), "stop-policy-holds"),
        ("preempting", CQ, on(EDITED, HELD, PREEMPTS), "preemption-policy-too-broad"),
        ("as it was", CQ, on(EDITED, PREEMPTS, ""), None),
        # team-b does not tolerate a100-spot
        ("team-b's flavor", CQ, on("team-b-cq", "name: h100", "name: a100-spot"), UNTOLERATED),
        ("team-b's as it was", CQ, on("team-b-cq", "name: a100-spot", "name: h100"), None),
        # its body and first line as they were, its fields a line lower (a finding about one)
        ("a comment in it", CQ, on(EDITED, "metadata:\n", "metadata:\n  # spare\n"), TOO_BROAD),
        ("team-a's selector mended", CQ, on("team-a-cq", "tenant: b", "tenant: team-a"), None),
        # the LocalQueue's namespace, in a third file, loses the label the queue selects
        ("team-a's namespace", NS, replaced(ADMITTED, ""), NOT_SELECTED),
        (
            "the same text",
            NS,
            lambda s: s,
            "admission-policies-stale",
        ),  # its namespace not admitted
        ("team-a's namespace mended", NS, replaced("  labels:\n", "  labels:\n" + ADMITTED), None),
        # a platform binding (a file of bindings alone: rerun on that file's)
        ("a tenant's binding", BINDINGS, replaced(":platform", ":team-a"), "rbac-tenant-power"),
        ("an outsider's", BINDINGS, replaced(":team-a", ":contractors"), "rbac-platform-power"),
        ("the platform's", BINDINGS, replaced(":contractors", ":platform"), None),
        # a LocalQueue in another file sends its jobs to a queue made invalid
        ("team-a's quota", CQ, on("team-a-cq", '"256"', "lots"), "lq-cluster-queue-invalid"),
        ("team-a's mended", CQ, on("team-a-cq", "lots", '"256"'), None),
    ]
    assert reported(session) == validated(repo)
    for what, path, edit, rule in edits:
        text = edit((repo / path).read_text())
        session.edit(path, text.encode())
        (repo / path).write_text(text)
        cold = validated(repo)
        assert reported(session) == cold, what
        if rule is not None:
            assert rule in {f["rule"] for f in cold}, what
        if rule in (NOT_SELECTED, "lq-cluster-queue-invalid"):
            assert LQ in {f["file"] for f in cold if f["rule"] == rule}
    assert {"lq-cluster-queue-invalid", NOT_SELECTED}.isdisjoint(
        f.rule.id for f in session.findings
    )
