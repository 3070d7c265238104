"""JUnit output: valid against the JUnit XSD, one test case per finding with stable names, and
read back by junitparser the way CI systems read it."""

from __future__ import annotations

import dataclasses
import datetime
import io

import pytest
import xmlschema
from junitparser import Attr, Error, Failure, IntAttr, JUnitXml, Skipped, TestCase

from auditor import rules
from auditor.model import ClusterResult, Finding, Report, Suppression
from auditor.report import junit
from tests.conftest import ROOT

XSD = xmlschema.XMLSchema(ROOT / "tests/data/junit/junit.xsd")


class LocatedCase(TestCase):
    """A test case with the file and line attributes GitLab reads."""

    file = Attr()
    line = IntAttr()


def written(report: Report) -> str:
    out = io.StringIO()
    junit.write(report, out)
    XSD.validate(out.getvalue())
    return out.getvalue()


def cases(text: str) -> dict[tuple[str, str], TestCase]:
    xml = JUnitXml.fromstring(text)
    return {(c.classname, c.name): c for suite in xml for c in suite}


def flavor_missing(line: int, **kw: object) -> Finding:
    return Finding(
        rules.get("flavor-missing"),
        "no ResourceFlavor v100 on gpu-prod",
        cluster="gpu-prod",
        kind="ClusterQueue",
        name="team-a-cq",
        file="clusters/gpu-prod/clusterqueues.yaml",
        line=line,
        path="spec.resourceGroups[0].flavors[1].name",
        **kw,  # type: ignore[arg-type]
    )


LOW = Finding(
    rules.get("borrowing-over-lendable"),
    "team-a-cq may borrow 8 a100 GPUs but its cohort lends 4",
    cluster="gpu-prod",
    kind="ClusterQueue",
    name="team-a-cq",
    file="clusters/gpu-prod/clusterqueues.yaml",
    line=30,
)
YAML = Finding(rules.get("yaml-syntax"), "could not parse", file="tenants/team-a/x.yaml", line=3)


def test_the_schema_rejects_what_is_not_junit() -> None:
    assert not XSD.is_valid("<testsuite name='x'/>")  # tests, failures, errors are required
    assert not XSD.is_valid(
        "<testsuites><testsuite name='x' tests='1' failures='0' errors='0'>"
        "<testcase name='a' line='zero'/></testsuite></testsuites>"
    )


def test_one_case_per_finding_classname_rule_name_object() -> None:
    report = Report("validate", [flavor_missing(12), LOW, YAML], [ClusterResult("gpu-prod")])
    found = cases(written(report))
    assert set(found) == {
        ("flavor-missing", "gpu-prod/ClusterQueue/-/team-a-cq"),  # the README's name: no path
        ("borrowing-over-lendable", "gpu-prod/ClusterQueue/-/team-a-cq"),
        ("yaml-syntax", "repository/tenants/team-a/x.yaml"),
        ("kueue-gitops", "gpu-prod/complete"),
    }
    failed = found["flavor-missing", next(n for r, n in found if r == "flavor-missing")]
    [result] = failed.result
    assert isinstance(result, Failure) and result.message == "no ResourceFlavor v100 on gpu-prod"
    assert result.text == (
        "clusters/gpu-prod/clusterqueues.yaml:12: spec.resourceGroups[0].flavors[1].name: "
        "no ResourceFlavor v100 on gpu-prod"
    )
    located = LocatedCase.fromelem(failed)  # type: ignore[no-untyped-call]
    assert (located.file, located.line) == ("clusters/gpu-prod/clusterqueues.yaml", 12)
    warned = found["borrowing-over-lendable", "gpu-prod/ClusterQueue/-/team-a-cq"]
    assert warned.is_passed and warned.system_out.startswith("warning: clusters/gpu-prod/")
    assert found["kueue-gitops", "gpu-prod/complete"].is_passed


def test_counts_add_up_per_suite() -> None:
    report = Report("validate", [flavor_missing(12), LOW, YAML], [ClusterResult("gpu-prod")])
    xml = JUnitXml.fromstring(written(report))
    suites = {s.name: s for s in xml}
    prod = suites["kueue-gitops validate: gpu-prod"]
    assert (prod.tests, prod.failures, prod.errors, prod.skipped) == (3, 1, 0, 0)
    assert suites["kueue-gitops validate: repository"].failures == 1


def test_names_do_not_move_when_lines_or_messages_do() -> None:
    before = cases(written(Report("validate", [flavor_missing(12), LOW])))
    moved = dataclasses.replace(LOW, line=90, message="now 9 GPUs")
    after = cases(written(Report("validate", [moved, flavor_missing(40)])))
    assert set(before) == set(after)


def test_the_same_rule_twice_on_one_spot_is_numbered_not_merged() -> None:
    twice = [flavor_missing(12), flavor_missing(14)]
    names = sorted(n for _, n in cases(written(Report("validate", twice))))
    assert names[1] == names[0] + " #2"


def test_strict_fails_warnings_and_suppressed_findings_are_skipped() -> None:
    accepted = Suppression(
        "v100 nodes arrive next sprint", datetime.date(2027, 1, 31), "clusters/x.yaml:7"
    )
    report = Report("validate", [LOW, flavor_missing(12, suppressed=accepted)], strict=True)
    found = cases(written(report))
    assert isinstance(found["borrowing-over-lendable", "gpu-prod/ClusterQueue/-/team-a-cq"]
                      .result[0], Failure)  # fmt: skip
    [skipped] = [c for (rule, _), c in found.items() if rule == "flavor-missing"]
    [result] = skipped.result
    assert isinstance(result, Skipped)
    assert result.message == "suppressed until 2027-01-31: v100 nodes arrive next sprint"


def test_an_incomplete_cluster_is_an_error_case() -> None:
    report = Report("drift", [], [ClusterResult("gpu-prod", "incomplete", ["unreachable", "x"])])
    [case] = cases(written(report)).values()
    [result] = case.result
    assert isinstance(result, Error) and result.message == "unreachable"
    assert result.text == "unreachable\nx"


@pytest.mark.parametrize("command", ["validate", "drift"])
def test_a_clean_run_still_has_a_passing_case_per_cluster(command: str) -> None:
    report = Report(command, [], [ClusterResult("gpu-prod"), ClusterResult("gpu-staging")])
    xml = JUnitXml.fromstring(written(report))
    assert [(s.name, s.tests, s.failures) for s in xml] == [
        (f"kueue-gitops {command}: gpu-prod", 1, 0),
        (f"kueue-gitops {command}: gpu-staging", 1, 0),
    ]
