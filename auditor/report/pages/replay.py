"""`plan replay`: the simulated day, base and head: GPUs in use per tenant, waits as
distributions, preemptions on the timeline (livelocks marked) and the cohort tree."""

from __future__ import annotations

from auditor.report import charts
from auditor.report.charts import Chart
from auditor.report.pages.parts import Doc, clock, number


def figures(replay: Doc) -> list[Chart]:
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
    rows = [[clock(x), *(series[n][i] for n in names)] for i, x in enumerate(day["times"])]
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
        whole=True,
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
        rows.append([p["side"], clock(p["at"]), p["preemptor"], p["victim"], p["count"], ""])
    livelocks = {}
    for side in ("base", "head"):
        at = replay[side].get("livelockAt") or []
        if at:
            livelocks[f"livelock ({side})"] = [(round(a / 3600, 4), 0.0) for a in at]
            rows += [[side, clock(a), "", "", "", "livelock"] for a in at]
    series |= livelocks
    svg = charts.dots(
        "preemptions",
        "Preemptions: preemptor → victim tenant (livelocks on the axis, large)",
        series,
        x_title="hours from the trace's start",
        y_title=f"preemptions per {day['stepSeconds']:g} s",
        big=list(livelocks),
        xrange=(0.0, round(day["times"][-1] / 3600, 4)),
        whole=True,
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
            sum(number(c["nominal"]) for c in quota.get(side, []) if c["clusterQueue"] == q)
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
        whole=True,
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
