"""`-o html`: one self-contained page, the report's pictures with their numbers beside them.

Drawn from the JSON report itself (`Report.to_json`, what `-o json` writes), so every chart shows
the report's own data: the page embeds, per chart, the part of the JSON it was drawn from
(`<script type="application/json" class="chart-data">`), a table of its numbers, and the chart
as SVG (auditor/report/charts.py), each page's in its module of
auditor/report/pages/. No script runs and nothing is fetched: the file opens from a
CI artifact offline. What each command shows is in docs/html-report.md.
"""

from __future__ import annotations

import json
import typing as t

from auditor.model import Report
from auditor.report.charts import Chart
from auditor.report.pages.parts import Doc, e, table
from auditor.report.pages.sections import lead, sections

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1400px;padding:0 1rem;
 color:#111}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}
.verdict{padding:.6rem 1rem;border-radius:6px;background:#eef6ee}
.verdict.findings{background:#fdecea}.verdict.incomplete{background:#fff4e0}
figure{margin:1rem 0;display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:1rem;
 align-items:start}
figure svg{width:100%;height:auto}
figure .numbers{max-height:420px;overflow:auto}
figcaption{grid-column:1/-1;font-weight:600}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
caption{text-align:left;font-style:italic}
.answer{margin:1rem 0;padding:.6rem 1rem;border-left:5px solid #0072B2;background:#f3f7fb}
.answer.misses{border-left-color:#D55E00}.answer .headline{color:#444;margin-top:0}
#target,#recommended,.answer dl{font-size:1.1rem}.answer dl{display:grid;
 grid-template-columns:max-content 1fr;gap:.2rem 1rem}.answer dt{font-weight:600}
.answer dd{margin:0}.answer ul{margin:0;padding-left:1.2rem}
@media (max-width:900px){figure{grid-template-columns:1fr}}
"""


def write(report: Report, stream: t.TextIO) -> None:
    doc: Doc = json.loads(json.dumps(report.to_json(), default=str))  # what -o json holds
    stream.write(page(doc))


def page(doc: Doc) -> str:
    """The whole HTML document for a JSON report."""
    title = f"kueue-gitops {doc['command']}: {doc['status']}"
    parts = [_verdict(doc), lead(doc)]
    for section, figures in sections(doc):
        parts.append(f"<h2>{e(section)}</h2>")
        parts.extend(_figure(c) for c in figures)
    parts.append(_findings(doc))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{STYLE}</style></head>"
        f"<body><main><h1>{e(title)}</h1>{''.join(parts)}</main></body></html>\n"
    )


def _verdict(doc: Doc) -> str:
    counted = [f for f in doc["findings"] if f["severity"] == "error"]
    clusters = ", ".join(
        f"{c['name']} ({c['status']}{': ' + '; '.join(c['errors']) if c.get('errors') else ''})"
        for c in doc["clusters"]
    )
    return (
        f'<p class="verdict {e(doc["status"])}"><strong>{e(doc["status"])}</strong>: '
        f"{len(doc['findings'])} finding(s), {len(counted)} error(s); clusters: "
        f"{e(clusters) or '-'}</p>"
    )


def _figure(c: Chart) -> str:
    data = json.dumps(c.data, sort_keys=True).replace("</", "<\\/")
    return (
        f'<figure id="{c.key}" class="chart" data-series="{e(json.dumps(c.series))}">'
        f'<figcaption id="title-{c.key}">{e(c.title)}</figcaption>'
        f'<div class="picture">{c.svg}</div>'
        f'<div class="numbers">{table(c.columns, c.rows, "The numbers: " + c.title)}</div>'
        f'<script type="application/json" class="chart-data">{data}</script>'
        "</figure>"
    )


def _findings(doc: Doc) -> str:
    if not doc["findings"]:
        return "<h2>Findings</h2><p>No findings.</p>"
    cols = ["severity", "rule", "cluster", "category", "object", "where", "message"]
    rows = [
        [
            f["severity"] + (" (suppressed)" if f.get("suppressed") else ""),
            f["rule"],
            f.get("cluster") or "",
            f["category"],
            " ".join(x for x in (f.get("kind"), f.get("namespace"), f.get("name")) if x),
            f"{f['file']}:{f['line']}" if f.get("file") else "",
            f["message"],
        ]
        for f in doc["findings"]
    ]
    return "<h2>Findings</h2>" + table(cols, rows, "Every finding of the report")
