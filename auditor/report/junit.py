"""JUnit XML: one test case per cluster and rule, failed by its findings."""

from __future__ import annotations

import itertools
import typing as t
from xml.etree import ElementTree as ET

from auditor.model import Finding, Report


def write(report: Report, stream: t.TextIO) -> None:
    suite = ET.Element("testsuite", name=f"kueue-gitops {report.command}")

    def key(f: Finding) -> tuple[str, str]:
        return (f.cluster or "repository", f.rule)

    cases = 0
    failures = 0
    for (cluster, rule), group in itertools.groupby(sorted(report.findings, key=key), key):
        case = ET.SubElement(suite, "testcase", classname=cluster, name=rule)
        cases += 1
        for f in group:
            tag = "failure" if f.severity == "error" else "system-out"
            node = ET.SubElement(case, tag)
            where = f"{f.file}:{f.line}: " if f.file else ""
            node.text = where + f.message
            if tag == "failure":
                node.set("message", f.message)
                failures += 1
    for c in report.clusters:
        case = ET.SubElement(suite, "testcase", classname=c.name, name="complete")
        cases += 1
        for error in c.errors:
            ET.SubElement(case, "error", message=error).text = error
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    stream.write(ET.tostring(suite, encoding="unicode") + "\n")
