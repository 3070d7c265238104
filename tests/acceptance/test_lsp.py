"""`kueue-gitops lsp` end to end: a client speaks the Language Server Protocol to the command
over its stdin and stdout, and after each edit of a series the diagnostics it was sent are the
findings `validate -o json` reports for the same files written to disk."""

from __future__ import annotations

import asyncio
import json
import typing as t
from collections.abc import Callable
from pathlib import Path

import pytest
from lsprotocol import types
from pygls import uris

from auditor import rules
from auditor.rules import render
from auditor.validate.session import Session
from tests.acceptance.lsp_editor import LQ, Editor
from tests.conftest import run_line
from tests.estate import copy_estate

NS = "tenants/team-a/gpu-prod/namespace.yaml"
RBAC = "tenants/team-a/gpu-prod/rbac.yaml"
CQ = "clusters/gpu-prod/clusterqueues.yaml"
PROFILE = "tenants/team-a/profile.yaml"
NEW = "tenants/team-a/gpu-prod/extra.yaml"
NEW_TEXT = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-z\n"  # not team-a's
Edit = tuple[str, Callable[[str], str]]

CLUSTER_ROLE = """---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: team-a-everything
rules:
  - apiGroups: ["*"]
    resources: ["*"]
    verbs: ["*"]
"""
SUPPRESSED = """  annotations:
    suppress.kueue-gitops.io/lq-cluster-queue-missing: "2099-01-01: the queue is being moved"
"""


def replaced(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)

    return edit


# Each edit applies to the text as the previous ones left it; most leave a finding behind.
EDITS: list[Edit] = [
    (LQ, replaced("clusterQueue: team-a-cq", "clusterQueue: nope-cq")),  # a missing target
    (NS, replaced("    platform.example.com/kueue: enabled\n", "")),  # no admission label
    (LQ, replaced("  annotations:\n", SUPPRESSED)),  # the missing target, suppressed
    (RBAC, lambda text: text + CLUSTER_ROLE),  # a cluster-scoped kind in a tenant folder
    (LQ, replaced("clusterQueue: nope-cq", "clusterQueue: [team-a-cq")),  # YAML syntax
    (LQ, replaced("clusterQueue: [team-a-cq", "clusterQueue: team-a-cq")),
    (CQ, replaced("  queueingStrategy: BestEffortFIFO\n", "  queueingStrategy: Sideways\n")),
    (
        NS,
        replaced(
            "    platform.example.com/tenant: team-a\n",
            "    platform.example.com/kueue: enabled\n    platform.example.com/tenant: team-a\n",
        ),
    ),
    (CQ, replaced("  queueingStrategy: Sideways\n", "  queueingStrategy: BestEffortFIFO\n")),
    (CQ, replaced('nominalQuota: "256"', "nominalQuota: 256000m")),  # not canonical
    (LQ, lambda text: text + "---\n" + text),  # the LocalQueue twice
    (PROFILE, replaced("      clusterQueues: [team-a-cq]\n", "      clusterQueues: []\n")),
    (RBAC, replaced(CLUSTER_ROLE, "")),
    (RBAC, replaced("name: kueue-gitops:tenant-submitter", "name: admin")),  # a built-in role
    (RBAC, replaced("name: admin", "name: nobody-defines-this")),  # an unresolved role
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    copy_estate(repo, "clusters", "tenants", "schemas", "argocd")
    return repo


def validated(repo: Path) -> list[dict[str, t.Any]]:
    """What `validate -o json` reports for the files on disk (one worker per cluster)."""
    result = run_line(
        ["kueue-gitops", "--repo", str(repo), "validate", "-o", "json", "--no-cache", "--jobs", "3"]
    )
    assert result.exit_code in (0, 1), result.output
    return t.cast(list[dict[str, t.Any]], json.loads(result.stdout)["findings"])


def placed(found: list[dict[str, t.Any]]) -> list[str]:
    """The findings an editor can show (those in a file), each as its JSON, in one order."""
    return sorted(json.dumps(f, sort_keys=True) for f in found if f["file"])


def check_diagnostics(editor: Editor) -> None:
    """Each diagnostic is its finding: code, severity, line, message."""
    for uri, found in editor.diagnostics.items():
        lines = Path(t.cast(str, uris.to_fs_path(uri))).read_text().splitlines()
        for d in found:
            data = t.cast(dict[str, t.Any], d.data)
            assert uri == editor.uri(data["file"])
            assert d.code == data["rule"] and d.source == "kueue-gitops"
            assert d.range.start.line == d.range.end.line == data["line"] - 1
            # a parser that stops at the end of the file names the line after the last
            text = lines[data["line"] - 1] if data["line"] <= len(lines) else ""
            assert text[d.range.start.character : d.range.end.character] == text.strip()
            assert data["message"] in d.message
            wanted = (
                types.DiagnosticSeverity.Hint
                if "suppressed" in data
                else types.DiagnosticSeverity.Error
                if data["severity"] == "error"
                else types.DiagnosticSeverity.Warning
            )
            assert d.severity == wanted, data


def test_the_language_server_publishes_what_validate_reports_after_every_edit(
    repo: Path,
) -> None:
    async def session() -> None:
        editor = Editor(repo)
        await editor.start()
        session = Session(repo)  # the server's engine in this process: the report's order too
        try:
            expected = validated(repo)
            assert editor.findings() == placed(expected)
            assert [f.to_json() for f in session.findings] == expected
            texts: dict[str, str] = {}
            seen: set[str] = set()
            for path, edit in EDITS:
                texts[path] = edit(texts.get(path) or (repo / path).read_text())
                await editor.type(path, texts[path])
                session.edit(path, texts[path].encode())
                (repo / path).write_text(texts[path])
                expected = validated(repo)
                assert editor.findings() == placed(expected), path
                assert json.loads(json.dumps([f.to_json() for f in session.findings])) == expected
                check_diagnostics(editor)
                seen |= {f["rule"] for f in expected}
            # a file the editor creates, then closes unsaved (deleted from disk)
            await editor.type(NEW, NEW_TEXT)
            (repo / NEW).write_text(NEW_TEXT)
            expected = validated(repo)
            assert editor.findings() == placed(expected)
            seen |= {f["rule"] for f in expected}
            (repo / NEW).unlink()  # it was never saved: closing it leaves nothing behind
            await editor.close(NEW)
            assert editor.findings() == placed(validated(repo))
            # the series reaches the kinds of finding it was written for
            assert {
                "lq-cluster-queue-missing",
                "lq-namespace-not-selected",
                "tenant-kind-not-allowed",
                "yaml-syntax",
                "schema",
                "lq-cluster-queue-invalid",
                "quantity-not-canonical",
                "duplicate-object",
                "lq-cluster-queue-not-authorised",
                "tenant-foreign-namespace",
                "rbac-builtin-role",
                "rbac-unresolved-role",
            } <= seen, seen
            # hover on a finding's line: its rule's documentation, as `explain` gives it
            [lq_finding] = [
                d for d in editor.diagnostics[editor.uri(LQ)] if d.code == "duplicate-object"
            ]
            hover = await editor.client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=editor.uri(LQ)),
                    position=lq_finding.range.start,
                )
            )
            assert hover is not None
            content = t.cast(types.MarkupContent, hover.contents)
            rule = rules.get("duplicate-object")
            assert rule.summary in content.value and rule.help in content.value
            assert render.help_markdown(rule) in content.value
        finally:
            await editor.stop()

    asyncio.run(session())


HALF_MIGRATED = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: {name}
spec:
  cohort: ai-shared
"""


def test_a_finding_the_baseline_holds_is_a_hint_and_a_new_one_an_error(repo: Path) -> None:
    """`lsp --baseline FILE` shows what the pull-request check given FILE would fail on."""
    (repo / CQ).write_text((repo / CQ).read_text() + HALF_MIGRATED.format(name="old-q"))
    file = repo / "kueue-gitops-baseline.yaml"
    argv = ["kueue-gitops", "--repo", str(repo), "validate", "--baseline", str(file)]
    assert run_line([*argv, "--write-baseline"]).exit_code == 0

    def shown(editor: Editor) -> dict[str, tuple[types.DiagnosticSeverity | None, str]]:
        found = editor.diagnostics[editor.uri(CQ)]
        return {t.cast(dict[str, str], d.data)["name"]: (d.severity, d.message) for d in found}

    async def session() -> None:
        editor = Editor(repo, "--baseline", file.name)  # from the repository's root
        await editor.start()
        try:
            [(severity, message)] = shown(editor).values()
            assert severity == types.DiagnosticSeverity.Hint
            assert message.startswith(f"baselined ({file}:")
            await editor.type(CQ, (repo / CQ).read_text() + HALF_MIGRATED.format(name="new-q"))
            now = shown(editor)
            assert now["old-q"][0] == types.DiagnosticSeverity.Hint
            assert now["new-q"][0] == types.DiagnosticSeverity.Error
            assert "field of kueue.x-k8s.io/v1beta1" in now["new-q"][1]
            check_diagnostics(editor)
        finally:
            await editor.stop()

    asyncio.run(session())
