"""The plan for people: text for a terminal, markdown for one pull-request comment."""

from __future__ import annotations

import typing as t

from auditor.model import Finding
from auditor.report import cohort_diagram
from auditor.report.markdown import SPLIT, cell, table_row

if t.TYPE_CHECKING:  # renderers read a plan's shape; they do not depend on the plan package
    from auditor.plan.model import Change, ClusterPlan, Plan

MARKER = "<!-- kueue-gitops-plan -->"  # the PR comment is found by it and updated in place
_ICON = {"clean": "✅", "findings": "❌", "incomplete": "⚠️"}


def _findings_of(plan: Plan, cluster: str | None) -> list[Finding]:
    return [f for f in plan.report.findings if f.cluster == cluster]


def _headline(plan: Plan) -> str:
    errors = sum(f.severity == "error" for f in plan.report.findings)
    warnings = len(plan.report.findings) - errors
    touched = sum(bool(c.changes) for c in plan.clusters)
    return (
        f"{plan.change_count} change(s) in {touched} cluster(s); "
        f"{errors} error(s), {warnings} warning(s)"
    )


# -- text -----------------------------------------------------------------------------------


def text(plan: Plan, stream: t.TextIO) -> None:
    stream.write(f"plan {plan.base} → {plan.head}\n")
    for cluster in plan.clusters:
        findings = _findings_of(plan, cluster.name)
        if not cluster.changes and not findings:
            continue
        stream.write(f"\ncluster {cluster.name}\n")
        for change in cluster.changes:
            where = f"  ({change.file}:{change.line})" if change.file else ""
            stream.write(f"  {change.category:<9} {change.summary}{where}\n")
        for f in findings:
            stream.write(f"  {f.severity.upper():<9} {f.message}  [{f.rule.id}]\n")
    for f in _findings_of(plan, None):
        stream.write(f"{f.file}:{f.line}: {f.severity}: {f.message}  [{f.rule.id}]\n")
    for c in plan.report.clusters:
        for error in c.errors:
            stream.write(f"INCOMPLETE {c.name}: {error}\n")
    if not plan.live:
        stream.write("(offline: not weighed against live usage; --live does)\n")
    stream.write(f"plan: {plan.report.status}: {_headline(plan)}\n")


# -- markdown -------------------------------------------------------------------------------


def _obj(change: Change) -> str:
    key = change.key
    return f"{key.kind} `{key.namespace + '/' if key.namespace else ''}{key.name}`"


def _at(file: str | None, line: int | None) -> str:
    return f"`{file}:{line}`" if file else ""


def _quota_table(changes: list[Change], out: t.TextIO) -> None:
    """One row per queue, flavor, resource and field: before → after and the signed change."""
    out.write("| Queue | Flavor | Resource | Field | Before → after | Change | Where |\n")
    out.write("|---|---|---|---|---|---|---|\n")
    for c in changes:
        flavor, resource = c.cell or ("", "")
        field = (c.path or "").rpartition(".")[2]
        before = c.before if c.before is not None else "—"
        after = c.after if c.after is not None else "—"
        row = [_obj(c), flavor, f"`{resource}`", field, f"{before} → {after}", c.delta or c.action]
        out.write(table_row([*row, _at(c.file, c.line)]) + "\n")


def _counts(findings: list[Finding]) -> str:
    errors = sum(f.severity == "error" for f in findings)
    return f"{errors} error(s), {len(findings) - errors} warning(s)"


def _cluster_markdown(plan: Plan, cluster: ClusterPlan, out: t.TextIO, *, shown: bool) -> None:
    """A cluster's section: a <details> of its own, after a line where a long comment may be
    cut into the next (github pr-comment splits there, never inside a cluster)."""
    findings = _findings_of(plan, cluster.name)
    out.write(f"\n{SPLIT}\n<details{' open' if shown else ''}>\n")
    out.write(
        f"<summary><strong>Cluster <code>{cluster.name}</code></strong>: "
        f"{len(cluster.changes)} change(s), {_counts(findings)}</summary>\n\n"
    )
    for f in findings:
        icon = "❌" if f.severity == "error" else "⚠️"
        out.write(f"- {icon} **{f.severity}** ({_at(f.file, f.line) or f.kind}): {f.message}\n")
    if findings:
        out.write("\n")
    quota = [c for c in cluster.changes if c.category == "quota"]
    if quota:
        out.write("**Quota**\n\n")
        _quota_table(quota, out)
        out.write("\n")
    tree = cohort_diagram.diagram(cluster)
    if tree:
        out.write(f"**Cohort tree** (before → after)\n\n```mermaid\n{tree}```\n\n")
    for category, title in (
        ("cohort", "Cohorts"),
        ("admission", "Admission"),
        ("object", "Objects"),
    ):
        chosen = [c for c in cluster.changes if c.category == category]
        if chosen:
            out.write(f"**{title}**\n\n")
            for c in chosen:
                out.write(f"- {cell(c.summary)} {_at(c.file, c.line)}\n")
            out.write("\n")
    if cluster.live_checked:
        out.write("_Checked against live usage._\n")
    elif plan.live and not any(c.name == cluster.name and c.errors for c in plan.report.clusters):
        out.write(
            "_Nothing here needs live usage (no cut, removal, admission loss or admission "
            "policy change)._\n"
        )
    out.write("\n</details>\n")


def _verdict(plan: Plan, shown: list[ClusterPlan]) -> str:
    """What changed (clusters and queues) and the risks found, before any detail."""
    queues = sorted(
        {
            f"`{c.key.name}` ({cluster.name})"
            for cluster in shown
            for c in cluster.changes
            if c.key.kind in ("ClusterQueue", "LocalQueue", "Cohort")
        }
    )
    risky = [f for f in plan.report.findings if f.suppressed is None]
    rules: dict[str, int] = {}
    for f in risky:
        rules[f.rule.id] = rules.get(f.rule.id, 0) + 1
    risks = (
        _counts(risky) + ": " + ", ".join(f"`{r}` ({n})" for r, n in sorted(rules.items()))
        if risky
        else "none found"
    )
    changed = ", ".join(f"`{c.name}`" for c in shown if c.changes) or "none"
    return (
        f"- **Clusters changed:** {changed}\n"
        f"- **Queues changed:** {', '.join(queues) or 'none'}\n"
        f"- **Risks:** {risks}\n"
    )


def markdown(plan: Plan, stream: t.TextIO) -> None:
    status = plan.report.status
    stream.write(f"{MARKER}\n### {_ICON[status]} kueue-gitops plan: {_headline(plan)}\n\n")
    stream.write(f"`{plan.base}` → `{plan.head}`\n\n")
    shown = [c for c in plan.clusters if c.changes or _findings_of(plan, c.name)]
    stream.write(_verdict(plan, shown))
    for c in plan.report.clusters:
        if c.errors:
            stream.write(f"\n**{c.name} incomplete:** " + "; ".join(c.errors) + "\n")
    unplaced = _findings_of(plan, None)
    if unplaced:
        stream.write("\n**Repository problems at the head revision**\n\n")
        for f in unplaced:
            stream.write(f"- ❌ {_at(f.file, f.line)}: {cell(f.message)}\n")
    for cluster in shown:
        _cluster_markdown(plan, cluster, stream, shown=len(shown) == 1)
    if not plan.change_count:
        stream.write("\nNo change to any cluster.\n")
    elif not plan.live:
        stream.write("\n_Not checked against live usage (offline)._\n")
