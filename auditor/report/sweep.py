"""`plan sweep` for people: the grid's points as a table (the frontier marked), the target, and
the smallest change that meets it."""

from __future__ import annotations

import typing as t

from auditor.report.markdown import cell, table_row
from auditor.report.replay import duration

if t.TYPE_CHECKING:  # renderers read a sweep's shape; they do not depend on the pipeline
    from auditor.replay.sweep import Point, Sweep


def _headline(s: Sweep) -> str:
    return (
        f"{s.cluster}: {len(s.points)} alternatives to {s.revision}, {s.workloads} Workloads "
        f"each over {s.days} trace(s), simulated through Kueue {s.release or '?'}'s scheduler"
    )


def _target(s: Sweep) -> str:
    return "target: " + s.target.said(duration)


def _capacity(s: Sweep) -> str:
    return (
        f"what the nodes hold: {s.capacity}; a point whose quotas add up past it is infeasible "
        "(never meets the target, never on the frontier)"
    )


def _now(s: Sweep) -> str:
    return "now: " + ", ".join(f"{a.label} {n or '-'}" for a, n in zip(s.axes, s.now, strict=True))


def _rows(s: Sweep) -> list[list[str]]:
    head = [*(a.label for a in s.axes), "change", "p95 wait", "preemptions", "livelocks",
            "never admitted", "nodes hold it", "meets", "frontier"]  # fmt: skip
    rows = [head]
    for p in s.points:
        rows.append(
            [
                *p.values,
                f"{p.change:g}",
                duration(p.p95_wait),
                str(p.preemptions),
                str(p.livelocks),
                str(p.never_admitted),
                "yes" if p.feasible else "no: " + ", ".join(p.over),
                "yes" if p.meets else "no",
                "*" if p.frontier else "",
            ]
        )
    return rows


def _best(s: Sweep) -> str:
    best: Point | None = s.best
    if best is None:
        return (
            "no point meets the target" + s.beyond_nodes() + ": widen the grid or relax the target"
        )
    moved = [
        f"{a.label} {n or '-'} -> {v}"
        for a, n, v in zip(s.axes, s.now, best.values, strict=True)
        if n != v
    ]
    return (
        "smallest change that meets the target: "
        + ("; ".join(moved) or "none (as it is)")
        + f" (on the frontier; the rule: {s.chosen_as})"
    )


def _apart(s: Sweep) -> list[str]:
    """The Workloads no point admits, each LocalQueue's with Kueue's reason."""
    return [
        f"never admitted at any point, not counted against the target: {a.workloads} Workload(s) "
        f"of {a.namespace}/{a.local_queue}: {a.reason}"
        for a in s.apart
    ]


def text(s: Sweep, stream: t.TextIO) -> None:
    stream.write(f"plan sweep — {_headline(s)}\n{_target(s)}\n{_now(s)}\n{_capacity(s)}\n\n")
    table = _rows(s)
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        stream.write("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() + "\n")
    stream.write(f"\n{_best(s)}\n")
    stream.write("".join(f"{line}\n" for line in _apart(s)))
    if s.stamp is not None:
        stream.write("\n" + "".join(f"{line}\n" for line in s.stamp.lines()))


def markdown(s: Sweep, stream: t.TextIO) -> None:
    icon = "✅" if s.best is not None else "❌"
    stream.write(f"### {icon} Plan by sweep\n\n{_headline(s)}; {cell(_target(s))}; ")
    stream.write(f"{cell(_now(s))}; {cell(_capacity(s))}.\n\n**{cell(_best(s))}**\n\n")
    stream.write("".join(f"- {cell(line)}\n" for line in _apart(s)) + ("\n" if s.apart else ""))
    table = _rows(s)
    stream.write(table_row(table[0]) + "\n" + table_row(["---"] * len(table[0])) + "\n")
    stream.write("".join(table_row(r) + "\n" for r in table[1:]))
    if s.stamp is not None:
        stream.write("\n" + "".join(f"- {cell(line)}\n" for line in s.stamp.lines()))
