"""JUnit XML: one test case per finding, failed by an error; one per cluster for completeness.

A test case is named by what it is about, never by a line number or message, so the same
finding keeps its name from run to run and CI systems can follow it (flaky, fixed, new):
classname is the rule, name is cluster/kind/namespace/name (`-` for a part that does not apply;
the README's contract), and the file and line are attributes; the field path leads the text. A
warning is a passing case with its text in system-out (a failure under --strict); a suppressed
or baselined finding is skipped, with its reason. Each cluster also has a
`kueue-gitops`.`<cluster>/complete` case, an error when the cluster could not be read.

The shape is the common JUnit XML that Jenkins' junit-10.xsd describes, with GitLab's and
pytest's `file` and `line` attributes on test cases (tests/data/junit/junit.xsd checks it).
"""

from __future__ import annotations

import collections
import typing as t
from xml.etree import ElementTree as ET

from auditor.model import Finding, Report

COMPLETE = "kueue-gitops"  # classname of the per-cluster completeness cases


def case_name(f: Finding) -> str:
    parts: tuple[str | None, ...] = (f.cluster or "repository", f.kind, f.namespace, f.name)
    if not f.kind and f.file:  # about a file, not an object (a YAML error, a stray file)
        parts = (f.cluster or "repository", f.file)
    return "/".join(p or "-" for p in parts)


def _case(suite: ET.Element, f: Finding, name: str, counted: bool) -> None:
    """A finding's test case: failed when it counts, skipped when suppressed, else passed with
    the finding as its output (a warning)."""
    case = ET.SubElement(suite, "testcase", classname=f.rule.id, name=name)
    case.set("time", "0")  # a finding is not a timed test
    if f.file:
        case.set("file", f.file)
        case.set("line", str(f.line or 1))
    said = f"{f.path}: {f.message}" if f.path else f.message  # the field, in the text
    text = f"{f.file}:{f.line or 1}: {said}" if f.file else said
    if f.suppressed is not None:
        why = f.suppressed.describe()
        ET.SubElement(case, "skipped", message=why).text = f"{text}\n{f.suppressed.source}"
    elif counted:
        node = ET.SubElement(case, "failure", message=f.message, type=str(f.severity))
        node.text = text
    else:
        ET.SubElement(case, "system-out").text = f"{f.severity}: {text}"


def write(report: Report, stream: t.TextIO) -> None:
    counted = {id(f) for f in report.counted()}
    suites: dict[str, ET.Element] = {}
    totals: collections.Counter[str] = collections.Counter()

    def suite(cluster: str | None) -> ET.Element:
        name = cluster or "repository"
        if name not in suites:
            suites[name] = ET.Element("testsuite", name=f"kueue-gitops {report.command}: {name}")
        return suites[name]

    names: collections.Counter[tuple[str, str]] = collections.Counter()
    for f in sorted(report.findings, key=_order):
        name = case_name(f)
        names[f.rule.id, name] += 1
        if names[f.rule.id, name] > 1:  # the same rule twice on one object: number the repeats
            name += f" #{names[f.rule.id, name]}"
        _case(suite(f.cluster), f, name, counted=id(f) in counted)
    for c in report.clusters:
        case = ET.SubElement(
            suite(c.name), "testcase", classname=COMPLETE, name=f"{c.name}/complete"
        )
        case.set("time", "0")
        if c.status == "incomplete":
            errors = c.errors or ["could not be read completely"]
            node = ET.SubElement(case, "error", message=errors[0], type="incomplete")
            node.text = "\n".join(errors)
    root = ET.Element("testsuites", name=f"kueue-gitops {report.command}")
    for name in sorted(suites):
        node = suites[name]
        cases = node.findall("testcase")
        counts = {
            "tests": len(cases),
            "failures": sum(1 for c in cases if c.find("failure") is not None),
            "errors": sum(1 for c in cases if c.find("error") is not None),
            "skipped": sum(1 for c in cases if c.find("skipped") is not None),
        }
        for key, value in counts.items():
            node.set(key, str(value))
            totals[key] += value
        node.set("time", "0")
        root.append(node)
    for key in ("tests", "failures", "errors"):
        root.set(key, str(totals[key]))
    ET.indent(root)
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(ET.tostring(root, encoding="unicode") + "\n")


def _order(f: Finding) -> tuple[str, str, str, str, int]:
    return (f.cluster or "", f.rule.id, case_name(f), f.path or "", f.line or 0)
