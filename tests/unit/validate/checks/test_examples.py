"""Every check documents a passing and a failing example; both must be true."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from auditor.validate import checks
from tests.unit.validate.checks.helpers import context, run_check, write

EXAMPLE = re.compile(r"^(Passes|Fails) \((?P<file>[^)]+)\)::\n\n(?P<body>(?:(?: {4}.*)?\n)+)", re.M)


def examples(check_id: str) -> dict[str, tuple[str, str]]:
    doc = checks.get(check_id).__doc__ or ""
    return {m[1]: (m["file"], textwrap.dedent(m["body"])) for m in EXAMPLE.finditer(doc)}


@pytest.mark.parametrize("check_id", sorted(checks.CHECKS))
def test_each_check_documents_one_passing_and_one_failing_example(check_id: str) -> None:
    module = checks.get(check_id)
    assert set(examples(check_id)) == {"Passes", "Fails"}
    assert module.LEVELS and set(module.LEVELS.values()) <= {"error", "warning"}
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", check_id)
    assert module.__name__.endswith(check_id.replace("-", "_"))


@pytest.mark.parametrize("check_id", sorted(checks.CHECKS))
@pytest.mark.parametrize("kind", ["Passes", "Fails"])
def test_documented_examples_do_what_they_say(repo_copy: Path, check_id: str, kind: str) -> None:
    file, body = examples(check_id)[kind]
    write(repo_copy, file, body)
    cluster = file.split("/")[1] if file.startswith("clusters/") else "gpu-prod"
    if file.startswith("tenants/") and file.count("/") == 3:
        cluster = file.split("/")[2]
    findings = run_check(repo_copy, check_id, cluster)
    if kind == "Passes":
        assert findings == [], [f.message for f in findings]
    else:
        assert findings, "the failing example yields no finding"
        assert all(f.file == file for f in findings), [(f.file, f.message) for f in findings]


def test_the_repository_itself_passes_every_check_without_errors() -> None:
    root = Path(__file__).resolve().parents[3]
    for cluster in ("gpu-prod", "gpu-staging"):
        findings = checks.run(context(root, cluster))
        assert [f for f in findings if f.severity == "error"] == [], [f.message for f in findings]
