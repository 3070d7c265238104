"""`-o html`: one self-contained page, the report's pictures with their numbers beside them.

Drawn from the JSON report itself (`Report.to_json`, what `-o json` writes), so every chart shows
the report's own data: the page embeds, per chart, the part of the JSON it was drawn from
(`<script type="application/json" class="chart-data">`), a table of its numbers, and the chart
as SVG (auditor/report/charts.py). No script runs and nothing is fetched: the file opens from a
CI artifact offline. What each command shows is in docs/html-report.md.
"""

from __future__ import annotations

import html
import json
import typing as t

from auditor.k8s.quantity import QuantityError, parse
from auditor.model import Report
from auditor.report import charts
from auditor.report.charts import Chart

Doc = dict[str, t.Any]
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
@media (max-width:900px){figure{grid-template-columns:1fr}}
"""


def write(report: Report, stream: t.TextIO) -> None:
    doc: Doc = json.loads(json.dumps(report.to_json(), default=str))  # what -o json holds
    stream.write(page(doc))


def page(doc: Doc) -> str:
    """The whole HTML document for a JSON report."""
    title = f"kueue-gitops {doc['command']}: {doc['status']}"
    parts = [_verdict(doc)]
    for section, figures in sections(doc):
        parts.append(f"<h2>{_e(section)}</h2>")
        parts.extend(_figure(c) for c in figures)
    parts.append(_findings(doc))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head>"
        f"<body><main><h1>{_e(title)}</h1>{''.join(parts)}</main></body></html>\n"
    )


def sections(doc: Doc) -> list[tuple[str, list[Chart]]]:
    """The charts of a report, by section: what the command's JSON holds decides."""
    out: list[tuple[str, list[Chart]]] = []
    if "replay" in doc:
        out.append(("The simulated day, base and head", replay_charts(doc["replay"])))
    elif "sweep" in doc:
        out.append(("The sweep's frontier", [sweep_chart(doc["sweep"])]))
    elif "job" in doc:
        pass  # plan --job: a forecast, told in the findings and the JSON; nothing to draw
    elif doc["command"] == "plan":
        out.append(("Quota, base → head", plan_charts(doc)))
    if doc["command"] == "drift":
        out.append(("Drift", drift_charts(doc)))
    if "fleet" in doc:
        out.append(("The fleet's Kueue releases", fleet_charts(doc["fleet"])))
    if doc["command"] == "status" and "clusterQueues" in doc:
        out.append((f"Quota on {doc.get('cluster')}", status_charts(doc)))
    return [(name, figures) for name, figures in out if figures]


# --- plan --sweep ---------------------------------------------------------------------------


def sweep_chart(sweep: Doc) -> Chart:
    """Each point's change against the target tenant's p95 wait: those meeting the target, the
    others, and the frontier drawn large."""
    groups: dict[str, list[tuple[float, float]]] = {"meets": [], "misses": [], "frontier": []}
    rows = []
    for p in sweep["points"]:
        wait = float(p["p95WaitSeconds"] or 0.0)
        groups["meets" if p["meets"] else "misses"].append((p["change"], wait))
        if p["frontier"]:
            groups["frontier"].append((p["change"], wait))
        rows.append([*p["values"].values(), p["change"], wait, p["preemptions"], p["meets"]])
    labels = [a["label"] for a in sweep["axes"]]
    svg = charts.dots(
        "sweep",
        "The grid: change against p95 wait (the frontier large)",
        {k: v for k, v in groups.items() if v},
        x_title="change from the revision",
        y_title="p95 wait (s)",
        big=["frontier"],
    )
    return Chart(
        "sweep",
        "The sweep's points",
        [k for k, v in groups.items() if v],
        svg,
        [*labels, "change", "p95 wait (s)", "preemptions", "meets"],
        rows,
        {"points": sweep["points"]},
    )


# --- plan --replay --------------------------------------------------------------------------


def replay_charts(replay: Doc) -> list[Chart]:
    day = replay.get("timeline")
    out = []
    if day:
        out += [_gpus_in_use(day), _waits(day), _preemptions(day, replay)]
    out.append(_cohort_tree(replay) if replay.get("quota") else _borrowing(replay))
    return out


def gpus_by_tenant(day: Doc) -> dict[str, list[float]]:
    """`{tenant} {side}` -> GPUs in use at each sample (its LocalQueues added up)."""
    out: dict[str, list[float]] = {}
    for s in day["series"]:
        total = out.setdefault(f"{s['tenant']} {s['side']}", [0.0] * len(day["times"]))
        for i, g in enumerate(s["gpus"]):
            total[i] += g
    names = sorted(out, key=lambda n: (n.rsplit(" ", 1)[0], n.rsplit(" ", 1)[1] != "base"))
    return {n: [round(v, 3) for v in out[n]] for n in names}


def _gpus_in_use(day: Doc) -> Chart:
    series = gpus_by_tenant(day)
    hours = [round(x / 3600, 4) for x in day["times"]]
    names = list(series)
    svg = charts.lines(
        "gpus-in-use",
        "GPUs in use per tenant (base dashed, head solid)",
        hours,
        series,
        x_title="hours from the trace's start",
        y_title="GPUs",
        dashed=[n for n in names if n.endswith(" base")],
        colors=charts.paired_colors(names),
    )
    rows = [[_clock(x), *(series[n][i] for n in names)] for i, x in enumerate(day["times"])]
    return Chart(
        "gpus-in-use",
        "GPUs in use per tenant over the day",
        names,
        svg,
        ["time", *names],
        rows,
        {"times": day["times"], "series": series},
    )


def _waits(day: Doc) -> Chart:
    series = {
        f"{w['tenant']} {w['side']}": w["counts"]
        for w in sorted(day["waits"], key=lambda w: (w["tenant"], w["side"] != "base"))
    }
    names = list(series)
    svg = charts.bars(
        "waits",
        "Admission waits per tenant, base and head (Workloads)",
        day["waitBins"],
        series,
        y_title="Workloads",
        colors=charts.paired_colors(names, tint_base=True),
    )
    rows = [[b, *(series[n][i] for n in names)] for i, b in enumerate(day["waitBins"])]
    return Chart(
        "waits",
        "Admission waits per tenant as distributions",
        names,
        svg,
        ["wait", *names],
        rows,
        {"bins": day["waitBins"], "series": series},
    )


def _preemptions(day: Doc, replay: Doc) -> Chart:
    series: dict[str, list[tuple[float, float]]] = {}
    rows = []
    for p in day["preemptions"]:
        name = f"{p['preemptor']} → {p['victim']} ({p['side']})"
        series.setdefault(name, []).append((round(p["at"] / 3600, 4), p["count"]))
        rows.append([p["side"], _clock(p["at"]), p["preemptor"], p["victim"], p["count"], ""])
    livelocks = {}
    for side in ("base", "head"):
        at = replay[side].get("livelockAt") or []
        if at:
            livelocks[f"livelock ({side})"] = [(round(a / 3600, 4), 0.0) for a in at]
            rows += [[side, _clock(a), "", "", "", "livelock"] for a in at]
    series |= livelocks
    svg = charts.dots(
        "preemptions",
        "Preemptions: preemptor → victim tenant (livelocks on the axis, large)",
        series,
        x_title="hours from the trace's start",
        y_title=f"preemptions per {day['stepSeconds']:g} s",
        big=list(livelocks),
        xrange=(0.0, round(day["times"][-1] / 3600, 4)),
    )
    return Chart(
        "preemptions",
        "Preemptions on the day's timeline",
        list(series),
        svg,
        ["side", "time", "preemptor", "victim", "preemptions", "mark"],
        rows,
        {"preemptions": day["preemptions"], "livelocks": list(livelocks)},
    )


def _clock(seconds: float) -> str:
    """Trace time as h:mm:ss from the trace's start."""
    whole = round(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def _borrowing(replay: Doc) -> Chart:
    queues = sorted({g["name"] for s in ("base", "head") for g in replay[s]["clusterQueues"]})

    def of(side: str, key: str) -> list[float]:
        found = {g["name"]: g["borrowedGpus"][key] for g in replay[side]["clusterQueues"]}
        return [found.get(q, 0.0) for q in queues]

    series = {
        "borrowed peak base": of("base", "peak"),
        "borrowed peak head": of("head", "peak"),
        "borrowed mean base": of("base", "mean"),
        "borrowed mean head": of("head", "mean"),
    }
    svg = charts.bars(
        "borrowing",
        "GPUs each ClusterQueue borrows from its cohort, base and head",
        queues,
        series,
        y_title="GPUs",
        colors=charts.paired_colors(list(series), tint_base=True),
    )
    rows = [[q, *(series[n][i] for n in series)] for i, q in enumerate(queues)]
    return Chart(
        "borrowing",
        "Borrowing per ClusterQueue",
        list(series),
        svg,
        ["ClusterQueue", *series],
        rows,
        {"clusterQueues": queues, "series": series},
    )


def cohort_tree(replay: Doc) -> tuple[list[tuple[str, str]], dict[str, list[float]]]:
    """(cohort, ClusterQueue) in cohort order, and per side its nominal GPUs (its flavors
    added up), the most it used at once (its LocalQueues' GPUs in the timeline) and the most
    it borrowed."""
    quota, day = replay["quota"], replay.get("timeline") or {"series": []}
    queues = sorted(
        {
            (c["cohort"] or "(no cohort)", c["clusterQueue"])
            for cells in quota.values()
            for c in cells
        }
    )
    series: dict[str, list[float]] = {}
    for side in ("base", "head"):
        series[f"nominal {side}"] = [
            sum(_number(c["nominal"]) for c in quota.get(side, []) if c["clusterQueue"] == q)
            for _, q in queues
        ]
    for side in ("base", "head"):
        used = []
        for _, q in queues:
            mine = [s["gpus"] for s in day["series"] if (s["side"], s["clusterQueue"]) == (side, q)]
            used.append(round(max((sum(at) for at in zip(*mine, strict=True)), default=0.0), 3))
        series[f"used peak {side}"] = used
    for side in ("base", "head"):
        peak = {g["name"]: g["borrowedGpus"]["peak"] for g in replay[side]["clusterQueues"]}
        series[f"borrowed peak {side}"] = [peak.get(q, 0.0) for _, q in queues]
    return queues, series


def _cohort_tree(replay: Doc) -> Chart:
    queues, series = cohort_tree(replay)
    labels = [f"{cohort}/{q}" for cohort, q in queues]
    svg = charts.bars(
        "cohort-tree",
        "GPUs per ClusterQueue by cohort: nominal, used and borrowed, base and head",
        labels,
        series,
        y_title="GPUs",
        colors=charts.paired_colors(list(series), tint_base=True),
    )

    def flavors(side: str, q: str) -> str:
        cells = [c for c in replay["quota"].get(side, []) if c["clusterQueue"] == q]
        return ", ".join(f"{c['flavor']} {c['nominal']}" for c in cells) or "-"

    rows = [
        [cohort, q, flavors("base", q), flavors("head", q), *(series[n][i] for n in series)]
        for i, (cohort, q) in enumerate(queues)
    ]
    return Chart(
        "cohort-tree",
        "The cohort tree: nominal, used and borrowed GPUs per ClusterQueue and flavor",
        list(series),
        svg,
        ["cohort", "ClusterQueue", "flavors base", "flavors head", *series],
        rows,
        {"queues": [list(q) for q in queues], "series": series},
    )


# --- plan (offline, --live) -----------------------------------------------------------------


def quota_rows(doc: Doc) -> list[Doc]:
    """The plan's numeric quota changes: one per ClusterQueue/Cohort, flavor and resource."""
    return [
        c for c in doc.get("changes", []) if c.get("resource") and c.get("delta") not in (None, "")
    ]


def plan_charts(doc: Doc) -> list[Chart]:
    changes = quota_rows(doc)
    if not changes:
        return []
    labels = [
        f"{c['cluster']}/{c['name']} {c['flavor']} {c['resource']} {_field(c)}" for c in changes
    ]
    series = {
        "base": [_number(c["before"]) for c in changes],
        "head": [_number(c["after"]) for c in changes],
    }
    svg = charts.bars("quota", "Quota, base and head", labels, series, y_title="quantity")
    rows = [
        [lab, c["before"] if c["before"] is not None else "-", c["after"] or "-", c["delta"]]
        for lab, c in zip(labels, changes, strict=True)
    ]
    return [
        Chart(
            "quota",
            "Quota per ClusterQueue, flavor and resource, base → head",
            list(series),
            svg,
            ["queue flavor resource field", "base", "head", "change"],
            rows,
            {"labels": labels, "series": series},
        )
    ]


def _field(change: Doc) -> str:
    return str(change.get("path") or "").rsplit(".", 1)[-1]


def _number(raw: t.Any) -> float:
    if raw in (None, ""):
        return 0.0
    try:
        return float(parse(raw).value)
    except QuantityError:
        return 0.0


# --- drift, the fleet -----------------------------------------------------------------------


def drift_counts(doc: Doc) -> tuple[list[str], dict[str, list[float]]]:
    """Clusters, and per category the findings of each."""
    clusters = sorted(
        {c["name"] for c in doc["clusters"]}
        | {f["cluster"] for f in doc["findings"] if f.get("cluster")}
    )
    categories = sorted({f["category"] for f in doc["findings"]})
    series: dict[str, list[float]] = {
        cat: [
            sum(1 for f in doc["findings"] if f["category"] == cat and f.get("cluster") == c)
            for c in clusters
        ]
        for cat in categories
    }
    return clusters, series


def drift_charts(doc: Doc) -> list[Chart]:
    clusters, series = drift_counts(doc)
    if not clusters:
        return []
    svg = charts.bars(
        "drift",
        "Drift findings by cluster and category",
        clusters,
        series,
        y_title="findings",
        stacked=True,
    )
    rows = [[c, *(series[k][i] for k in series)] for i, c in enumerate(clusters)]
    return [
        Chart(
            "drift",
            "Drift by cluster and category",
            list(series),
            svg,
            ["cluster", *series],
            rows,
            {"clusters": clusters, "series": series},
        )
    ]


def fleet_charts(fleet: Doc) -> list[Chart]:
    members = fleet["clusters"]
    if not members:
        return []
    names = [m["cluster"] for m in members]
    series = {"minor releases behind": [m["minorsBehind"] or 0 for m in members]}
    svg = charts.bars(
        "fleet",
        f"Kueue minor releases behind the newest pinned ({fleet['newestPinned'] or '-'})",
        names,
        series,
        y_title="minor releases",
    )
    rows = [
        [
            m["cluster"],
            m["kueue"] or "-",
            m["minorsBehind"] if m["minorsBehind"] is not None else "-",
            "; ".join(
                f"{k}: {', '.join(v)}" for k, v in sorted((m["servedVersions"] or {}).items())
            )
            or "-",
        ]
        for m in members
    ]
    return [
        Chart(
            "fleet",
            "Kueue releases",
            list(series),
            svg,
            ["cluster", "Kueue", "minors behind", "served versions"],
            rows,
            {"clusters": names, "series": series},
        )
    ]


# --- status ---------------------------------------------------------------------------------


def quota_cells(doc: Doc) -> list[tuple[str, str, Doc]]:
    """(cohort, ClusterQueue, cell) in cohort order: the cohort tree's leaves."""
    cells = [
        (cq.get("cohort") or "(no cohort)", cq["name"], cell)
        for cq in doc["clusterQueues"]
        for cell in cq.get("quota", [])
    ]
    return sorted(cells, key=lambda c: (c[0], c[1]))


def status_charts(doc: Doc) -> list[Chart]:
    cells = quota_cells(doc)
    if not cells:
        return []
    labels = [f"{cohort}/{cq} {c['flavor']} {c['resource']}" for cohort, cq, c in cells]
    keys = (("nominal", "nominalQuota"), ("used", "used"), ("borrowed", "borrowed"))
    series = {name: [_number(c.get(key)) for _, _, c in cells] for name, key in keys}
    svg = charts.bars(
        "cohort-quota",
        "Nominal, used and borrowed per ClusterQueue and flavor, by cohort",
        labels,
        series,
        y_title="quantity",
    )
    rows = [
        [cohort, cq, c["flavor"], c["resource"], *(c.get(k) or "0" for _, k in keys)]
        for cohort, cq, c in cells
    ]
    return [
        Chart(
            "cohort-quota",
            "The cohort tree: nominal, used and borrowed per flavor",
            list(series),
            svg,
            ["cohort", "ClusterQueue", "flavor", "resource", "nominal", "used", "borrowed"],
            rows,
            {"labels": labels, "series": series},
        )
    ]


# --- the page's parts -----------------------------------------------------------------------


def _e(value: t.Any) -> str:
    return html.escape("" if value is None else str(value))


def _verdict(doc: Doc) -> str:
    counted = [f for f in doc["findings"] if f["severity"] == "error"]
    clusters = ", ".join(
        f"{c['name']} ({c['status']}{': ' + '; '.join(c['errors']) if c.get('errors') else ''})"
        for c in doc["clusters"]
    )
    return (
        f'<p class="verdict {_e(doc["status"])}"><strong>{_e(doc["status"])}</strong>: '
        f"{len(doc['findings'])} finding(s), {len(counted)} error(s); clusters: "
        f"{_e(clusters) or '-'}</p>"
    )


def _table(columns: list[str], rows: list[list[t.Any]], caption: str) -> str:
    head = "".join(f'<th scope="col">{_e(c)}</th>' for c in columns)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{_e(v)}</td>' if isinstance(v, int | float) else f"<td>{_e(v)}</td>"
            for v in row
        )
        + "</tr>"
        for row in rows
    )
    return (
        f"<table><caption>{_e(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def _figure(c: Chart) -> str:
    data = json.dumps(c.data, sort_keys=True).replace("</", "<\\/")
    return (
        f'<figure id="{c.key}" class="chart" data-series="{_e(json.dumps(c.series))}">'
        f'<figcaption id="title-{c.key}">{_e(c.title)}</figcaption>'
        f'<div class="picture">{c.svg}</div>'
        f'<div class="numbers">{_table(c.columns, c.rows, "The numbers: " + c.title)}</div>'
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
    return "<h2>Findings</h2>" + _table(cols, rows, "Every finding of the report")
