"""`validate`: every object, for the cluster it targets, against schemas, CEL and policies.

Per cluster: the version contract, JSON Schema and CEL rules from the committed schemas/, then
the policy checks on the objects whose structure is sound. With a connector, each object is
also dry-run applied (server-side apply, dryRun=All) so the real API server judges it.
"""

from __future__ import annotations

import typing as t
from pathlib import Path

from auditor import checks, sync
from auditor.errors import ClusterAccessError, ConfigError
from auditor.model import ClusterResult, Finding, Report, Resource
from auditor.repo.layout import Repository
from auditor.repo.profiles import ClusterProfile
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.validator import ClusterValidator

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

Connector = t.Callable[[ClusterProfile], "KubeCluster"]
Note = t.Callable[[str], None]
# HTTP statuses meaning "the server judged the object and said no"; others mean we could not ask.
REJECTED = (400, 422)


def validate(
    repo: Repository,
    schemas: Path,
    *,
    clusters: list[str] | None = None,
    strict: bool = False,
    server_side: Connector | None = None,
    note: Note | None = None,
) -> Report:
    say = note or (lambda _m: None)
    names = clusters or sorted(repo.clusters)
    loaded = repo.load(names)
    report = Report("validate", strict=strict)
    report.findings.extend(loaded.findings)
    for name in names:
        profile = repo.cluster(name)
        catalog = SchemaCatalog(schemas, name)
        if not catalog.index:
            raise ConfigError(
                f"no schemas for cluster {name} in {schemas}: run "
                f"`kueue-gitops schemas fetch --cluster {name}`"
            )
        resources = loaded.for_cluster(name)
        validator = ClusterValidator(catalog)
        sound: list[Resource] = []
        for resource in resources:
            found, ok = validator.check(resource)
            for finding in found:
                finding.cluster = name
            report.findings.extend(found)
            if ok:
                sound.append(resource)
        if validator.skipped:
            say(
                f"{name}: {len(validator.skipped)} CEL transition rule(s) (oldSelf) not checked "
                "offline: they only apply when an object changes on the server"
            )
        report.findings.extend(
            checks.run(checks.CheckContext(repo, profile, tuple(sound), repo.tenants))
        )
        result = ClusterResult(name)
        if server_side is not None:
            report.findings.extend(_dry_run(server_side, profile, resources, result, say))
        report.clusters.append(result)
    return report


def _dry_run(
    connector: Connector,
    profile: ClusterProfile,
    resources: list[Resource],
    result: ClusterResult,
    say: Note,
) -> list[Finding]:
    """Server-side apply with dryRun=All, in sync order; rejections become findings."""
    from auditor.live.kube import KindNotServed, status_of

    findings: list[Finding] = []
    created = {r.name for r in resources if r.kind == "Namespace"}
    waiting: list[str] = []
    try:
        cluster = connector(profile)
        for resource in sorted(resources, key=sync.sync_order):
            try:
                cluster.apply(
                    resource.body,
                    manager=sync.ARGOCD_MANAGER,
                    dry_run=True,
                    field_validation="Strict",
                )
            except ClusterAccessError as exc:
                status = status_of(exc)
                if status == 404 and resource.namespace in created:
                    waiting.append(str(resource.key))  # its namespace is only dry-run created
                    continue
                if not isinstance(exc, KindNotServed) and status not in (*REJECTED, 404):
                    raise
                findings.append(
                    Finding.about(
                        resource,
                        "server-side-rejected",
                        f"the API server of {profile.name} rejects it: {exc}",
                        "server-side",
                        cluster=profile.name,
                    )
                )
    except ClusterAccessError as exc:
        result.status = "incomplete"
        result.errors.append(str(exc))
    if waiting:
        say(
            f"{profile.name}: {len(waiting)} object(s) not dry-run: their namespace does not "
            f"exist yet (the repo creates it), e.g. {waiting[0]}"
        )
    return findings
