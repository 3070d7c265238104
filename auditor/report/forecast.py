"""`plan job FILE` for people: when the Job would be admitted, where, whom it would
preempt, or why never; then what changed on the cluster until then."""

from __future__ import annotations

import typing as t

from auditor.report.replay import duration

if t.TYPE_CHECKING:  # renderers read a forecast's shape; they do not depend on the pipeline
    from auditor.replay.livestart import Forecast


def text(f: Forecast, stream: t.TextIO) -> None:
    where = f"{f.job.namespace}/{f.job.local_queue}"
    stream.write(
        f"plan job — {f.cluster}: the Job in {where} submitted now, simulated through Kueue "
        f"{f.release or '?'}'s scheduler from the cluster as it is\n"
    )
    if f.admitted_at is None:
        stream.write(f"never admitted: {f.pending_reason or 'no reason given by Kueue'}\n")
    else:
        stream.write(
            f"admitted after {duration(f.admitted_at)} on {f.cluster_queue} ({f.flavors})\n"
        )
        stream.write(f"preempts: {', '.join(f.victims) or 'nothing'}\n")
    if f.changes:
        stream.write("\n")
    for c in f.changes:
        by = f" by {c['by']}" if c.get("by") else ""
        on = f" ({c['flavors']})" if c.get("flavors") else ""
        stream.write(f"  {duration(c['at'])}  {c['workload']} {c['kind']}{by}{on}\n")
    if f.stamp is not None:
        stream.write("\n" + "".join(f"{line}\n" for line in f.stamp.lines()))
