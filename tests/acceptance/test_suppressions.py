"""Suppressions through the CLI: a finding accepted on purpose, by an annotation on the object or
an entry in the cluster profile, is shown as suppressed in every format, fails nothing, and
counts again once its expiry date has passed."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest
from junitparser import JUnitXml, Skipped

from tests.acceptance.half_migrated import CQS, half_migrated
from tests.acceptance.validating import committed_repo, validate

ANNOTATION = "suppress.kueue-gitops.io/field-of-other-version"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "repo")


def add(repo: Path, annotation: str | None) -> int:
    """Append the queue; the line of its first annotation."""
    path = repo / CQS
    before = path.read_text()
    path.write_text(before + half_migrated(annotation))
    lines = half_migrated(annotation).splitlines()
    first = next(i for i, text in enumerate(lines) if "sync-options" in text)
    return len(before.splitlines()) + 1 + first  # the text starts on a new line


PROD = ("--cluster", "gpu-prod")  # other clusters may hold suppressions of their own


def report(repo: Path) -> tuple[int, dict[str, t.Any]]:
    result = validate(repo, *PROD, "-o", "json")
    return result.exit_code, json.loads(result.stdout)


def test_an_annotation_suppresses_the_finding_in_every_format(repo: Path) -> None:
    line = add(repo, f'{ANNOTATION}: "2999-01-31: migrated with the rest in PLAT-7"')
    code, doc = report(repo)
    assert (code, doc["status"]) == (0, "clean")
    [found] = doc["findings"]
    assert (found["rule"], found["severity"]) == ("field-of-other-version", "error")
    assert found["suppressed"] == {
        "reason": "migrated with the rest in PLAT-7",
        "expires": "2999-01-31",
        "source": f"{CQS}:{line + 1}",
    }

    text = validate(repo, *PROD).stdout
    assert "suppressed until 2999-01-31: migrated with the rest in PLAT-7" in text
    assert "validate: clean: 0 error(s), 0 warning(s), 1 suppressed" in text
    github = validate(repo, *PROD, "-o", "github").stdout
    assert github.startswith("::notice file=clusters/gpu-prod/clusterqueues.yaml")
    assert "| suppressed error | gpu-prod |" in validate(repo, *PROD, "-o", "markdown").stdout
    [run] = json.loads(validate(repo, *PROD, "-o", "sarif").stdout)["runs"]
    [result] = run["results"]
    assert result["suppressions"][0]["status"] == "accepted"
    assert "PLAT-7" in result["suppressions"][0]["justification"]
    xml = JUnitXml.fromstring(validate(repo, *PROD, "-o", "junit").stdout)
    [case] = [c for suite in xml for c in suite if c.classname == "field-of-other-version"]
    assert isinstance(case.result[0], Skipped)


def test_an_expired_suppression_counts_again_and_says_so(repo: Path) -> None:
    add(repo, f'{ANNOTATION}: "2020-01-31: migrated with the rest in PLAT-7"')
    code, doc = report(repo)
    assert (code, doc["status"]) == (1, "findings")
    [found] = doc["findings"]
    assert "suppressed" not in found
    assert "its suppression expired on 2020-01-31" in found["message"]


def test_a_profile_entry_suppresses_by_rule_and_object(repo: Path) -> None:
    add(repo, None)
    profile = repo / "clusters/gpu-prod/profile.yaml"
    profile.write_text(
        profile.read_text()
        + "  suppressions:\n"
        + "    - rule: field-of-other-version\n"
        + "      kind: ClusterQueue\n"
        + "      name: half-migrated\n"
        + "      reason: accepted until the v1beta2 migration lands\n"
        + "      expires: 2999-12-31\n"
    )
    entry = len(profile.read_text().splitlines()) - 4  # the `- rule:` line
    code, doc = report(repo)
    assert code == 0
    [found] = doc["findings"]
    assert found["suppressed"]["source"] == f"clusters/gpu-prod/profile.yaml:{entry}"

    other = profile.read_text().replace("name: half-migrated", "name: another-queue")
    profile.write_text(other)
    assert report(repo)[0] == 1  # the entry names another object: nothing suppressed


def test_an_unreadable_annotation_is_an_error_and_suppresses_nothing(repo: Path) -> None:
    add(repo, 'suppress.kueue-gitops.io/field-of-other-versoin: "2999-01-31: a typo in the rule"')
    code, doc = report(repo)
    assert code == 1
    rules = {f["rule"]: f for f in doc["findings"]}
    assert set(rules) == {"field-of-other-version", "suppression-invalid"}
    assert "did you mean field-of-other-version" in rules["suppression-invalid"]["message"]


def test_an_unknown_rule_in_the_profile_is_a_configuration_error(repo: Path) -> None:
    profile = repo / "clusters/gpu-prod/profile.yaml"
    profile.write_text(
        profile.read_text()
        + "  suppressions:\n"
        + "    - {rule: no-such-rule, reason: because we said so, expires: 2999-01-01}\n"
    )
    result = validate(repo)
    assert result.exit_code == 2 and "no rule 'no-such-rule'" in result.stderr


@pytest.mark.parametrize("jobs", ["2", "3"])
def test_layout_and_loading_findings_are_suppressed_alike_whatever_the_workers(
    repo: Path, jobs: str
) -> None:
    """A profile's entries cover the layout's findings (of no cluster: any cluster's entry)
    and its files' loading problems the same in one process as in one worker per cluster."""
    profile = repo / "clusters/gpu-prod/profile.yaml"
    profile.write_text(
        profile.read_text()
        + "  suppressions:\n"
        + "    - {rule: stray-manifest, reason: moved in the next sprint, expires: 2999-12-31}\n"
        + "    - {rule: yaml-syntax, reason: a draft still being written, expires: 2999-12-31}\n"
    )
    (repo / "tenants/team-a/stray.yaml").write_text("apiVersion: v1\nkind: Namespace\n")
    (repo / "tenants/team-a/gpu-prod/draft.yaml").write_text("a: [\n")
    (repo / "tenants/team-b/gpu-staging/bad.yaml").write_text("a: [\n")  # not gpu-prod's
    serial = validate(repo, "-o", "json", "--jobs", "1")
    forked = validate(repo, "-o", "json", "--jobs", jobs)
    assert json.loads(serial.stdout) == json.loads(forked.stdout)
    assert serial.exit_code == forked.exit_code == 1  # gpu-staging's bad file still counts
    findings = json.loads(serial.stdout)["findings"]
    found = {(f["rule"], f["file"]): f for f in findings}
    assert [f["rule"] for f in findings].count("stray-manifest") == 1  # once, suppressed
    assert found["stray-manifest", "tenants/team-a/stray.yaml"]["suppressed"] is not None
    assert found["yaml-syntax", "tenants/team-a/gpu-prod/draft.yaml"]["suppressed"] is not None
    assert found["yaml-syntax", "tenants/team-b/gpu-staging/bad.yaml"].get("suppressed") is None
