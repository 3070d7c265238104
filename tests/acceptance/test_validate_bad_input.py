"""Bad input through the CLI: each case is a finding with file and line, and the run goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.acceptance.validating import committed_repo, validate

BAD = "tenants/team-a/gpu-prod/bad.yaml"
LQ = (
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: team-a}\n"
)
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "repo")


CASES: list[tuple[str, bytes, str, int]] = [
    ("malformed", b"kind: [unclosed\nmetadata: {}\n", "yaml-syntax", 2),
    ("duplicate-key", (LQ + "spec: {}\nspec: {}\n").encode(), "yaml-duplicate-key", 5),
    ("not-a-mapping", b"- just\n- a list\n", "not-a-mapping", 1),
    ("missing-kind", b"apiVersion: v1\nmetadata: {name: x}\n", "missing-identity", 1),
    ("missing-name", b"apiVersion: v1\nkind: Namespace\nmetadata: {}\n", "missing-identity", 1),
    (
        "unknown-kind",
        b"apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n",
        "unknown-kind",
        2,
    ),
    ("alias-bomb", BOMB.encode(), "yaml-too-large", 1),
    ("non-utf8", b"apiVersion: v1\nkind: Namespace\nmetadata: {name: caf\xe9}\n", "not-utf8", 3),
    (
        "same-object-twice",
        (
            LQ + "spec: {clusterQueue: team-a-cq}\n---\n" + LQ + "spec: {clusterQueue: team-a-cq}\n"
        ).encode(),
        "duplicate-object",
        6,
    ),
]


@pytest.mark.parametrize(
    ("data", "rule", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_a_finding_and_the_run_goes_on(
    repo: Path,
    data: bytes,
    rule: str,
    line: int,
) -> None:
    (repo / BAD).write_bytes(data)
    # A second, independent problem elsewhere: it must still be reported.
    other = repo / "tenants/team-b/gpu-staging/localqueues.yaml"
    other.write_text(other.read_text() + "  typo: 1\n")
    result = validate(repo, "-o", "json")
    assert result.exit_code == 1
    assert "Traceback" not in result.output + result.stderr
    report = json.loads(result.stdout)
    found = [f for f in report["findings"] if f["rule"] == rule]
    assert found, report["findings"]
    assert (found[0]["file"], found[0]["line"]) == (BAD, line)
    assert found[0]["message"]
    assert any(f["file"] == str(other.relative_to(repo)) for f in report["findings"])
    assert report["status"] == "findings"


def test_a_symlink_out_of_the_repository_is_not_read(repo: Path, tmp_path: Path) -> None:
    secret = tmp_path.parent / f"{tmp_path.name}-outside.yaml"
    secret.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: stolen}\n")
    (repo / BAD).symlink_to(secret)
    result = validate(repo, "-o", "json")
    assert result.exit_code == 1 and "Traceback" not in result.output
    [found] = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "symlink-outside"]
    assert (found["file"], found["line"]) == (BAD, 1)
    assert "stolen" not in result.stdout
