"""`plan sweep`: the answer first (the target, and the recommended change with what it
yields), then the frontier: every point's change against the target tenant's p95 wait, the
frontier and the recommended point drawn large. Read from the report's `sweep` section as
auditor/replay/sweep.py writes it."""

from __future__ import annotations

import typing as t

from auditor.report import charts
from auditor.report.charts import Chart
from auditor.report.pages.parts import Doc, e, table
from auditor.report.replay import duration


def target_said(target: Doc) -> str:
    """The target in words, as the text report says it."""
    parts = []
    if target.get("p95WaitSeconds") is not None:
        parts.append(f"{target.get('tenant')}'s p95 wait ≤ {duration(target['p95WaitSeconds'])}")
    if target.get("preemptions") is not None:
        parts.append(f"preemptions ≤ {target['preemptions']}")
    if not target.get("livelockAllowed"):
        parts.append("no livelock")
    return ", ".join([*parts, "nothing never admitted"])


def _yields(p: Doc) -> str:
    return (
        f"p95 wait {duration(p['p95WaitSeconds'])}, {p['preemptions']} preemption(s), "
        f"{p.get('livelocks', 0)} livelock(s), {p.get('neverAdmitted', 0)} never admitted"
    )


def lead(sweep: Doc) -> str:
    """The target, then the recommended change (the smallest that meets it) or that none does."""
    said = (
        f"{sweep['cluster']}: {len(sweep['points'])} alternatives to {sweep['revision']}, "
        f"{sweep['workloads']} Workloads each over {sweep.get('days', 1)} trace(s), simulated "
        f"through Kueue {sweep.get('kueueVersion') or '?'}'s scheduler"
    )
    best = sweep.get("best")
    out = [
        f'<p class="headline">{e(said)}</p>',
        f'<p id="target"><strong>Target</strong>: {e(target_said(sweep["target"]))}</p>',
    ]
    if best is None:
        out.append(
            '<p id="recommended" class="misses"><strong>No point meets the target</strong>: '
            "widen the grid or relax the target; the frontier below shows the nearest.</p>"
        )
    else:
        rows = [
            [a["label"], a.get("now") or "-", best["values"][a["label"]]]
            for a in sweep["axes"]
            if (a.get("now") or "-") != best["values"][a["label"]]
        ]
        moved = "; ".join(f"{label} {now} → {to}" for label, now, to in rows)
        out.append(
            f'<p id="recommended" class="meets"><strong>Recommended change</strong>: '
            f"{e(moved or 'none (the revision as it is meets the target)')} "
            f"(size {best['change']:g}): {e(_yields(best))}</p>"
        )
        if rows:
            out.append(table(["field", "now", "recommended"], rows, "The recommended change"))
    out += _assumed(sweep)
    return f'<section id="answer" class="answer" aria-label="The answer">{"".join(out)}</section>'


def _assumed(sweep: Doc) -> list[str]:
    """What the answer rests on, where the sweep says it: how the recommendation is chosen (its
    tie-break), the Workloads no point admits (apart, not counted against the target), and what
    the nodes' capacity was read from."""
    out = []
    if sweep.get("bestChosenAs"):
        out.append(f'<p id="chosen-as">Chosen as {e(sweep["bestChosenAs"])}.</p>')
    apart = sweep.get("neverAdmittedAnywhere") or []
    if apart:
        items = "".join(
            f"<li>{e(a['namespace'])}/{e(a['localQueue'])}: {e(a['workloads'])} Workload(s), "
            f"{e(a['reason'])}</li>"
            for a in apart
        )
        out.append(
            '<div id="never-admitted"><p>Never admitted at any point of the grid, so not '
            f"counted against the target:</p><ul>{items}</ul></div>"
        )
    if sweep.get("capacity"):
        out.append(f'<p id="capacity">Quotas checked against {e(sweep["capacity"])}.</p>')
    return out


def chart(sweep: Doc) -> Chart:
    """Each point's change against the target tenant's p95 wait: those meeting the target, the
    others, the frontier and the recommended point drawn large; the table lists the frontier
    first."""
    best = sweep.get("best")
    groups: dict[str, list[tuple[float, float]]] = {
        "meets": [],
        "misses": [],
        "infeasible": [],  # its quotas beyond what the nodes hold
        "frontier": [],
        "recommended": [],
    }

    def recommended(p: Doc) -> bool:
        return best is not None and p["values"] == best["values"]

    for p in sweep["points"]:
        at = (p["change"], float(p["p95WaitSeconds"] or 0.0))
        verdict = "meets" if p["meets"] else "misses"
        groups["infeasible" if p.get("feasible") is False else verdict].append(at)
        for name, member in (("frontier", p["frontier"]), ("recommended", recommended(p))):
            if member:
                groups[name].append(at)
    drawn = {k: v for k, v in groups.items() if v}
    svg = charts.dots(
        "sweep",
        "The frontier: change against p95 wait (frontier and recommended large)",
        drawn,
        x_title="change from the revision",
        y_title="p95 wait (s)",
        big=["frontier", "recommended"],
    )
    ordered = sorted(sweep["points"], key=lambda p: (not p["frontier"], p["change"]))
    return Chart(
        "sweep",
        "The frontier, then the grid's other points",
        list(drawn),
        svg,
        [
            *(a["label"] for a in sweep["axes"]),
            "change",
            "p95 wait (s)",
            "preemptions",
            "meets",
            "frontier",
            "recommended",
            "over capacity",
        ],
        [_row(p, recommended(p)) for p in ordered],
        {"points": sweep["points"], "best": best},
    )


def _row(p: Doc, recommended: bool) -> list[t.Any]:
    wait = float(p["p95WaitSeconds"] or 0.0)
    return [*p["values"].values(), p["change"], wait, p["preemptions"],
            "yes" if p["meets"] else "no",
            "*" if p["frontier"] else "", "◀" if recommended else "",
            "; ".join(p.get("overCapacity") or [])]  # fmt: skip
