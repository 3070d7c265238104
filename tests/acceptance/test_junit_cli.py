"""`validate -o junit` through the CLI: valid JUnit XML that CI systems can follow from run to
run (test names do not move when lines do), read back with junitparser."""

from __future__ import annotations

from pathlib import Path

import xmlschema
from junitparser import Failure, JUnitXml

from tests.acceptance.half_migrated import CQS, half_migrated
from tests.acceptance.validating import committed_repo, validate
from tests.conftest import ROOT

XSD = xmlschema.XMLSchema(ROOT / "tests/data/junit/junit.xsd")


def junit(repo: Path) -> JUnitXml:
    result = validate(repo, "--cluster", "gpu-prod", "--cluster", "gpu-staging", "-o", "junit")
    assert result.exit_code == 1, result.output
    XSD.validate(result.stdout)
    return JUnitXml.fromstring(result.stdout)


def test_findings_are_test_cases_with_stable_names(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo")
    path = repo / CQS
    path.write_text(path.read_text() + half_migrated(None).replace("    argocd", "    x-argocd"))
    first = junit(repo)
    path.write_text("# a comment that moves every line down\n" + path.read_text())
    second = junit(repo)

    def cases(xml: JUnitXml) -> set[tuple[str, str]]:
        return {(c.classname, c.name) for suite in xml for c in suite}

    assert cases(first) == cases(second)
    assert ("field-of-other-version", "gpu-prod/ClusterQueue/-/half-migrated") in cases(second)
    [moved] = [c for suite in second for c in suite if c.classname == "field-of-other-version"]
    assert ": spec.cohort: " in moved.result[0].text  # the field is in the text, not the name
    assert ("kueue-gitops", "gpu-staging/complete") in cases(second)
    failed = [c for suite in second for c in suite if c.result]
    assert {c.classname for c in failed} == {"field-of-other-version", "prune-unguarded"}
    assert all(isinstance(c.result[0], Failure) for c in failed)
    suites = {s.name: s for s in second}
    assert suites["kueue-gitops validate: gpu-prod"].failures == 2
