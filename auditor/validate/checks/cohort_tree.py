"""Cohort trees Kueue can use: no cycles, and no parent that is not there.

Cohorts hang below one another by `spec.parentName`. A loop of parents disables every member of
the tree (Kueue admits nothing there until it is broken), and the webhook does not refuse one. A
`parentName` that names no Cohort is accepted too, as an implicit cohort with no quota and no
parent: the subtree is cut off from the tree and the pool it was meant to share, usually by a
typo. (A ClusterQueue's `cohortName` without a Cohort object is ordinary and not reported.)

Its rules, each with an example that passes and one that fails, are declared beside it in
cohort_tree.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.kueue import cohorts
from auditor.model import Finding
from auditor.validate.checks import protocol
from auditor.validate.checks._common import KUEUE

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
COHORT_CYCLE = RULES["cohort-cycle"]
COHORT_PARENT_MISSING = RULES["cohort-parent-missing"]

ID = "cohort-tree"
RERUN = protocol.CLUSTER


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    defined = {r.name: r for r in ctx.of_kind("Cohort") if r.key.group == KUEUE}
    holders = [r.body for r in ctx.of_kind("ClusterQueue", "Cohort") if r.key.group == KUEUE]
    forest = cohorts.Forest.of(holders)
    for loop in forest.cycles():
        cohort = defined[loop[0]]
        shown = " -> ".join((*loop, loop[0]))
        yield Finding.about(
            cohort,
            COHORT_CYCLE,
            f"Cohorts {shown} form a cycle: Kueue admits nothing in the whole tree while it "
            "lasts; make one of them a root (remove its parentName) or point it elsewhere",
            path=["spec", cohorts.parent_field(cohort.body)],
        )
    for name, cohort in sorted(defined.items()):
        parent = cohorts.parent_of(cohort.body)
        if parent is None or parent in defined or ctx.unrendered:  # unrendered: maybe unread
            continue
        field = cohorts.parent_field(cohort.body)
        yield Finding.about(
            cohort,
            COHORT_PARENT_MISSING,
            f"Cohort {name} has {field} {parent}, but no Cohort {parent} exists on "
            f"{ctx.cluster.name} (known: {', '.join(sorted(defined))}): Kueue makes an empty "
            f"implicit cohort of it, cutting {name}'s subtree off the tree it was meant for; "
            "define it or fix the name",
            path=["spec", field],
        )
