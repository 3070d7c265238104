"""A replay's base → head comparison for people: text for a terminal, markdown for a PR comment."""

from __future__ import annotations

import typing as t

from auditor.report.markdown import cell, table_row

if t.TYPE_CHECKING:  # renderers read a comparison's shape; they do not depend on the pipeline
    from auditor.replay.comparison import Comparison, Flag
    from auditor.replay.sides import Group


def marker(cluster: str) -> str:
    """The PR comment's hidden first line: one comment per cluster, edited in place."""
    return f"<!-- kueue-gitops-replay cluster={cluster} -->"


SIMULATED = (
    "Simulated: the nodes (kwok, one per flavor with the capacity the cluster profile declares), "
    "the pods' run times (the trace's, ended by kwok) and time itself (compressed by the speed). "
    "Real: Kueue's scheduler, quota, borrowing and preemption (the release the profile names, "
    "with the repository's Configuration), kube-scheduler and the API server, applied from each "
    "revision's clusters/ and tenants/ folders."
)

_COLUMNS = (
    "wait p50",
    "wait p95",
    "wait max",
    "GPU-h",
    "borrowed peak",
    "borrowed mean",
    "preempted",
    "never admitted",
)


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.1f}m"
    return f"{seconds / 3600:.1f}h"


def _p95(g: Group) -> str:
    """The p95 wait, with its range over the side's replays when there were several."""
    if g.p95_range is None:
        return duration(g.wait_p95)
    low, high = g.p95_range
    return f"{duration(g.wait_p95)} ({duration(low)}..{duration(high)})"


def _values(g: Group) -> list[str]:
    return [
        duration(g.wait_p50),
        _p95(g),
        duration(g.wait_max),
        f"{g.gpu_hours:.1f}",
        f"{g.borrowing_peak:g}",
        f"{g.borrowing_mean:.2f}",
        str(g.preemptions),
        str(g.never_admitted),
    ]


def _pair(before: str, after: str) -> str:
    return before if before == after else f"{before} → {after}"


def rows(comparison: Comparison, kind: str) -> list[list[str]]:
    """One row per tenant (kind "tenants") or ClusterQueue: its name, then base → head values."""
    base_groups = comparison.base.tenants if kind == "tenants" else comparison.base.cluster_queues
    head_groups = comparison.head.tenants if kind == "tenants" else comparison.head.cluster_queues
    find = comparison.base.tenant if kind == "tenants" else comparison.base.cluster_queue
    names = sorted({g.name for g in base_groups} | {g.name for g in head_groups})
    head_of = {g.name: g for g in head_groups}
    out = []
    for name in names:
        before = _values(find(name))
        after = _values(head_of[name]) if name in head_of else before
        out.append([name, *(_pair(b, a) for b, a in zip(before, after, strict=True))])
    return out


def _reasons(comparison: Comparison) -> list[str]:
    out = []
    for side in (comparison.base, comparison.head):
        merged: dict[str, int] = {}
        victims = []
        for g in side.tenants:
            for why, n in g.preemption_reasons.items():
                merged[why] = merged.get(why, 0) + n
            if g.preemptions:
                victims.append(f"{g.name} {g.preemptions}")
        why = ", ".join(f"{k} {v}" for k, v in sorted(merged.items())) or "none"
        out.append(
            f"{side.label}: {side.preemptions} preemption(s); victims: "
            f"{', '.join(victims) or 'none'}; reasons: {why}"
        )
    return out


SIMULATED_CLOCK = (
    "Simulated (--engine sim): the API (in memory), the job controller (a preempted Job stops at "
    "once, a running one ends after the trace's run time) and the clock, which jumps from one "
    "event to the next. Kueue's own code decides every admission, borrowing, preemption and "
    "requeue: the scheduler, flavor assigner, preemptor, caches and workload handlers of the "
    "release the cluster profile names, with the revision's objects and fair sharing. The same "
    "trace and revisions give the same answer every time (docs/replay.md)."
)


def _headline(c: Comparison) -> str:
    if c.engine == "sim":
        return (
            f"{c.cluster}: {c.workloads} Workloads over {duration(c.trace_seconds)} of trace, "
            f"simulated through Kueue {c.kueue_version or '?'}'s scheduler"
        )
    times = len(c.base.runs)
    return (
        f"{c.cluster}: {c.workloads} Workloads over {duration(c.trace_seconds)} of trace, "
        f"replayed at {c.speed:g}x through Kueue {c.kueue_version or '?'}"
        + (f", {times} times per side (medians; p95 ranges in parentheses)" if times else "")
    )


def _honesty(c: Comparison) -> str:
    if c.engine == "sim":
        return SIMULATED_CLOCK
    said = (
        f"{SIMULATED} Waits are in trace time. Two replays of one configuration agree on a "
        f"tenant's p95 wait within {c.agreement:.0%} or {duration(c.tolerance_seconds)}, "
        "whichever is larger, when it waits behind its own work; within "
        f"{c.reclaimer_agreement:.0%} when it waits to reclaim what it lent. Preemption counts "
        "vary more: each re-admission after an eviction races the next arrival. "
        + (
            "A wait is flagged only when every head replay waits longer than every base replay."
            if c.base.runs
            else "--repeat 3 replays each side three times and shows the spread."
        )
    )
    worst = max((s.distortion for s in (c.base, c.head) if s.distortion is not None), default=None)
    if worst is not None:
        said += (
            f" At {c.speed:g}x, the latencies the speed multiplies (job controller, kwok, Kueue's"
            f" requeue) added {worst:.0%} to a median run"
        )
        said += (
            "." if worst <= c.max_distortion else f": above {c.max_distortion:.0%}, lower --speed."
        )
    return said


def flag_text(f: Flag) -> str:
    if f.kind == "wait-p95-rises":
        return f"{f.tenant}: p95 admission wait rises from {duration(f.base)} to {duration(f.head)}"
    if f.kind == "preemption-loop":
        shown = "; ".join(f.cycle[:6]) + ("; ..." if len(f.cycle) > 6 else "")
        return f"{f.tenant}: preemption loop on the head: {shown}"
    return f"{f.tenant}: {f.head:g} Workload(s) never admitted (base: {f.base:g})"


def simulated_lines(c: Comparison) -> list[str]:
    """What only the simulation says: who preempted whom, wait peaks, loops."""
    if c.engine != "sim":
        return []
    out = []
    for side in (c.base, c.head):
        for g in side.tenants:
            parts = []
            if g.preempted_by:
                by = ", ".join(f"{n} by {who}" for who, n in sorted(g.preempted_by.items()))
                parts.append(f"preempted {by}")
            if g.preempted_others:
                parts.append(f"preempted {g.preempted_others} of others'")
            if g.wait_peak:
                parts.append(
                    f"wait peaks at hour {g.wait_peak[0]:02d} ({duration(g.wait_peak[1])} mean)"
                )
            if g.pending_reason:
                parts.append(f"never admitted: {g.pending_reason}")
            if parts:
                out.append(f"{side.label} {g.name}: " + "; ".join(parts))
        for loop in side.loops:
            out.append(f"{side.label}: preemption loop ({loop.key}): " + "; ".join(loop.cycle[:6]))
        if side.livelocks:
            first = ", ".join(f"{at:.0f}s" for at in side.livelocks[:5])
            out.append(
                f"{side.label}: a livelock at {len(side.livelocks)} instant(s) ({first}"
                f"{', ...' if len(side.livelocks) > 5 else ''}): Kueue preempted a Workload and "
                "readmitted it ahead of its preemptor, again and again; the simulation moved on at "
                "each (in a cluster each round waits for the victim's pods to stop)"
            )
        if side.backlog and side.backlog.at_end:
            b = side.backlog
            out.append(
                f"{side.label}: a standing backlog: {b.at_end:,} Workload(s) still pending at the "
                f"trace's end ({duration(c.trace_seconds)}); pending peaked at {b.peak:,} "
                f"({duration(b.peak_at)} in) and averaged {b.mean:,.0f} over the trace"
                + (
                    f"; {b.at_stop:,} still waited when the simulation stopped, "
                    f"{duration(b.stopped_at - c.trace_seconds)} after the trace's end "
                    "(counted never admitted)"
                    if b.at_stop
                    else f"; all admitted {duration(b.stopped_at - c.trace_seconds)} after it"
                )
            )
        if side.stalled:
            out.append(
                f"{side.label}: gave up on {len(side.stalled)} instant(s) after too many cycles"
            )
    return out


# -- text -----------------------------------------------------------------------------------


def stamp_lines(c: Comparison) -> list[str]:
    """What a simulation ran with (auditor/replay/stamp.py): its release, gates, scheduler
    settings and what it does not model. A simulated comparison carries them; the real engine's
    is the sandbox's own Kueue and has none."""
    lines = getattr(c, "stamp_lines", None)  # SimulatedComparison's, without importing the engine
    return list(lines()) if callable(lines) else []


def text(c: Comparison, stream: t.TextIO) -> None:
    stream.write(f"plan by replay — {_headline(c)}\n")
    stream.write(f"base {c.base.revision} → head {c.head.revision}\n")
    for kind, title in (("tenants", "tenant"), ("cluster_queues", "ClusterQueue")):
        table = [[title, *_COLUMNS], *rows(c, kind)]
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        stream.write("\n")
        for r in table:
            stream.write("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
            stream.write("\n")
    stream.write("\n" + "\n".join(_reasons(c) + simulated_lines(c)) + "\n")
    for side in (c.base, c.head):
        if side.deadline_passed:
            stream.write(f"{side.label}: the deadline passed before every Workload finished\n")
    flags = c.flags()
    stream.write(
        "\n"
        + ("\n".join(f"! {flag_text(f)}" for f in flags) if flags else "no tenant waits longer")
    )
    stream.write(f"\n\n{_honesty(c)}\n")
    stream.write("".join(f"{line}\n" for line in stamp_lines(c)))


# -- markdown -------------------------------------------------------------------------------


def chart(c: Comparison) -> str:
    """A mermaid bar chart of each tenant's p95 wait, base and head side by side, in minutes."""
    labels, values = [], []
    for g in c.head.tenants:
        for side in (c.base, c.head):
            labels.append(f'"{g.name} {side.label}"')
            values.append(f"{(side.tenant(g.name).wait_p95 or 0) / 60:.1f}")
    return "\n".join(
        [
            "```mermaid",
            "xychart-beta",
            '    title "p95 admission wait per tenant (trace minutes)"',
            f"    x-axis [{', '.join(labels)}]",
            '    y-axis "minutes"',
            f"    bar [{', '.join(values)}]",
            "```",
        ]
    )


DAY_POINTS = 48  # the most samples a day chart draws (mermaid labels each one)


def day_chart(c: Comparison) -> str:
    """A mermaid line chart of the GPUs each tenant holds over the day, one line per tenant and
    side (mermaid draws no legend: the caption names them in order), from the replay's
    timeline (auditor/replay/timeline.py), at most DAY_POINTS samples."""
    if c.timeline is None or not c.timeline.times:
        return ""
    times = c.timeline.times
    every = max(1, -(-len(times) // DAY_POINTS))
    picked = list(range(0, len(times), every))
    names, lines = [], []
    for side in ("base", "head"):
        for tenant, gpus in c.timeline.gpus_by_tenant(side).items():
            names.append(f"{tenant} {side}")
            lines.append(f"    line [{', '.join(f'{gpus[i]:g}' for i in picked)}]")
    labels = ", ".join(f'"{times[i] / 3600:.1f}h"' for i in picked)
    return "\n".join(
        [
            "```mermaid",
            "xychart-beta",
            '    title "GPUs in use per tenant over the simulated day"',
            f"    x-axis [{labels}]",
            '    y-axis "GPUs"',
            *lines,
            "```",
            f"_Lines, in order: {', '.join(names)}._",
        ]
    )


def markdown(c: Comparison, stream: t.TextIO) -> None:
    flags = c.flags()
    icon = "❌" if flags else "✅"
    stream.write(f"{marker(c.cluster)}\n### {icon} Plan by replay\n\n{_headline(c)}; ")
    stream.write(f"base `{c.base.revision}` → head `{c.head.revision}`.\n\n")
    for f in flags:
        stream.write(f"- **{cell(flag_text(f))}**\n")
    if flags:
        stream.write("\n")
    for kind, title in (("tenants", "tenant"), ("cluster_queues", "ClusterQueue")):
        stream.write(table_row([title, *_COLUMNS]) + "\n")
        stream.write(table_row(["---"] * (len(_COLUMNS) + 1)) + "\n")
        for r in rows(c, kind):
            stream.write(table_row(r) + "\n")
        stream.write("\n")
    stream.write("".join(f"- {cell(r)}\n" for r in _reasons(c) + simulated_lines(c)) + "\n")
    stream.write(chart(c) + "\n\n")
    day = day_chart(c)
    if day:
        stream.write(
            day + " All the day's charts, with their numbers: `plan replay ... -o html` "
            "(the pull-request workflow keeps it as the run's `replays-html` artifact).\n\n"
        )
    stamped = "".join(f"- {cell(line)}\n" for line in stamp_lines(c))
    stream.write(
        f"<details><summary>What is simulated</summary>\n\n{_honesty(c)}\n\n"
        + (stamped + "\n" if stamped else "")
        + "</details>\n"
    )
