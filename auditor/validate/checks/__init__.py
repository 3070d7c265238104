"""Policy checks: one module per check, registered explicitly below.

A check module defines `ID` (kebab-case), `RULES` (its rules, declared beside it in
`<module>.rules.yaml`: `rules.of(__name__)`) and `check(ctx) -> Iterator[Finding]`, which
yields findings of those rules; each rule carries its severity, category and documentation.
"""

from __future__ import annotations

import datetime
import functools
import typing as t
from dataclasses import dataclass, field
from types import ModuleType

from auditor.errors import ConfigError, processing
from auditor.k8s.objects import ResourceKey
from auditor.model import Finding, Resource
from auditor.repo.profiles import ClusterProfile, TenantProfile
from auditor.validate.checks import (
    admission_policies,
    alert_coverage,
    cohort_tree,
    default_localqueue,
    default_priority_class,
    fair_sharing,
    flavors,
    kueue_config,
    kueue_webhook,
    localqueue_target,
    multikueue,
    namespace_selector,
    preemption,
    preemption_policy,
    priority,
    priority_levels,
    prune_guard,
    quantities,
    quotas,
    self_heal,
    stop_policy,
    tenant_objects,
    tenant_powers,
    tenant_rbac,
)

if t.TYPE_CHECKING:
    from auditor.repo.layout import Repository


@dataclass(frozen=True)
class CheckContext:
    """What a check sees: one cluster, its objects from the repo, and every profile."""

    repo: Repository
    cluster: ClusterProfile
    resources: tuple[Resource, ...]
    tenants: dict[str, TenantProfile]
    today: datetime.date = field(default_factory=datetime.date.today)  # evidence expires
    # Objects kept out of `resources` for a real type error, with the finding that says why,
    # so a reference to one is reported as invalid, not missing.
    invalid: t.Mapping[ResourceKey, Finding] = field(default_factory=dict)

    def of_kind(self, *kinds: str) -> list[Resource]:
        if len(kinds) == 1:
            return list(self._by_kind.get(kinds[0], ()))
        return [r for r in self.resources if r.kind in kinds]

    @functools.cached_property
    def _by_kind(self) -> dict[str, list[Resource]]:
        """The objects of each kind, in their order: every check asks for a few kinds."""
        out: dict[str, list[Resource]] = {}
        for resource in self.resources:
            out.setdefault(resource.kind, []).append(resource)
        return out


# The check modules, in the order they run; a new check is imported above and added here.
_MODULES: tuple[ModuleType, ...] = (
    tenant_objects,
    localqueue_target,
    namespace_selector,
    quotas,
    cohort_tree,
    flavors,
    preemption,
    preemption_policy,
    fair_sharing,
    multikueue,
    self_heal,
    priority,
    priority_levels,
    tenant_rbac,
    tenant_powers,
    quantities,
    kueue_webhook,
    stop_policy,
    prune_guard,
    default_localqueue,
    default_priority_class,
    alert_coverage,
    kueue_config,
    admission_policies,
)

CHECKS: dict[str, ModuleType] = {m.ID: m for m in _MODULES}


def get(check_id: str) -> ModuleType:
    try:
        return CHECKS[check_id]
    except KeyError:
        raise ConfigError(f'no such check: "{check_id}"') from None


def run(ctx: CheckContext, only: t.Iterable[str] | None = None) -> list[Finding]:
    """Run the checks (all, or `only`) on one cluster; stamp the cluster on their findings."""
    modules = [get(i) for i in only] if only is not None else list(CHECKS.values())
    findings: list[Finding] = []
    for module in modules:
        with processing(f"running check {module.ID} on cluster {ctx.cluster.name}"):
            for finding in module.check(ctx):
                if module.RULES.get(finding.rule.id) is not finding.rule:
                    raise AssertionError(
                        f"check {module.ID} yielded a rule it does not declare: {finding.rule.id}"
                    )
                finding.cluster = finding.cluster or ctx.cluster.name
                findings.append(finding)
    return findings
