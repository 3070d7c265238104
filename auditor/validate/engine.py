"""`validate`: every object, for the cluster it targets, against schemas, CEL and policies.

Per cluster: the version contract, JSON Schema and CEL rules from the committed schemas/, then
the policy checks on the objects whose structure is sound. With a connector, each object is
also dry-run applied (server-side apply, dryRun=All) so the real API server judges it.
Clusters are independent: they are shared among processes when there are cores for them
(auditor/speed/parallel.py), each cluster's work one plain function (`_cluster`).
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
import logging
import typing as t
from pathlib import Path

from auditor import rules
from auditor.errors import AuditorError, ClusterAccessError, internal_error, processing
from auditor.k8s.objects import ResourceKey
from auditor.kueue import release as kueue_release
from auditor.model import ClusterResult, Finding, Report, Resource, Severity
from auditor.render.source import UNRENDERED
from auditor.repo import cache as repo_cache
from auditor.repo import cached, suppressions
from auditor.repo.layout import Placed, Repository
from auditor.repo.profiles import ClusterProfile
from auditor.schemas import catalog, cel
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.validator import ClusterValidator, Verdict
from auditor.speed import collector, packs, parallel
from auditor.validate import kept

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

_RULES = rules.of(__name__)
SERVER_SIDE_REJECTED = _RULES["server-side-rejected"]

log = logging.getLogger(__name__)
Connector = t.Callable[[ClusterProfile], "KubeCluster"]
Note = t.Callable[[str], None]


@collector.seldom_during  # many long-lived objects, few cycles (speed/collector.py)
def validate(
    repo: Repository,
    schemas: Path,
    *,
    clusters: list[str] | None = None,
    strict: bool = False,
    server_side: Connector | None = None,
    note: Note | None = None,
    detail: Note | None = None,
    jobs: int | None = None,
    cache: bool = False,
    only: t.Collection[str] = (),
) -> Report:
    """Validate the clusters' objects, the clusters shared among processes when there are
    cores to spare (auditor/speed/parallel.py; `jobs`: how many), each cluster one plain function.

    With `cache`, what each file's objects were found to be (parsed documents, version
    contract, schema and CEL findings) is kept in the user cache directory and served again
    while the file, its cluster's schemas and the tool are unchanged (auditor/repo/cache.py);
    the policy checks run again only when what they read changed (validate/kept.py).

    `only`: the STAGES to report (reading the repository is always judged); without `policy`
    the policy checks do not run, nor are the tenants' profiles they read.
    """
    names = clusters or sorted(repo.clusters)
    require_schemas(repo, schemas, names)
    tool = packs.tool(repo, cache)
    policy = not only or POLICY in only
    # A dry run holds a client's connections, a git revision a `git cat-file` process: neither
    # survives a fork, so those clusters are judged one after another here.
    forkable = server_side is None and repo.root is not None
    if policy:
        if tool is not None:
            cached.tenants(repo, tool)
        elif forkable:
            shared_tenants(repo, jobs)
        repo.tenants  # noqa: B018 - parsed once here, inherited by every worker
        from auditor.validate import checks  # noqa: F401 - loaded before the fork, inherited
    placed, layout = repo.plan(names)  # one walk of the tree for every cluster
    found = layout_findings(repo, layout, names)
    job = functools.partial(_cluster_job, repo, schemas, tool, placed, server_side, policy)
    if forkable and parallel.processes(jobs, len(names)) > 1:
        cel.warm()  # once here, inherited: each worker would load it (~0.1 s) for its CRDs' rules
    results = parallel.run(job, names, jobs=jobs if forkable else 1)
    report = Report("validate", strict=strict)
    for result, findings, notes in results:
        found += findings
        for message, minor in notes:  # minor: what every run says, shown on asking (-v)
            ((detail if minor else note) or (lambda _m: None))(message)
        report.clusters.append(result)
    report.findings = collected(f for f in found if of_stages(f, only))
    return report


SHARED_TENANTS = 400  # fewer profiles are read here sooner than a fork and a pickle take


def shared_tenants(repo: Repository, jobs: int | None) -> None:
    """The tenants' profiles read by two processes when there are many (~0.1 ms each: 1,700
    are 0.2 s on one core, before the clusters' work is shared); a half comes back pickled.
    A broken profile is the error it is here: parallel.run reads a failed child's half again
    in this process."""
    names = repo.tenant_names()
    if len(names) < SHARED_TENANTS:
        return
    halves = [names[0::2], names[1::2]]
    read = parallel.run(repo.tenant_profiles, halves, jobs=jobs)
    found = {profile.name: profile for half in read for profile in half}
    repo.use_tenants({name: found[name] for name in names}, None)


STAGES = rules.VALIDATE_STAGES  # what `validate --only` may name: stages of rules.STAGES
POLICY = "policy"


def of_stages(finding: Finding, only: t.Collection[str]) -> bool:
    """Whether `finding` is reported when only the stages `only` are (none named: every
    stage); what reading the repository finds (stage `input`) always is."""
    return not only or finding.rule.stage in only or finding.rule.stage == "input"


def layout_findings(
    repo: Repository,
    layout: list[Finding],
    names: t.Iterable[str],
    today: datetime.date | None = None,
) -> list[Finding]:
    """What the layout says is wrong (`Repository.plan`), with the suppressions of the
    clusters' profiles applied once: a finding of one cluster (a rendered folder) by that
    cluster's entries, one of no cluster (a stray manifest, a folder of no cluster) by any
    validated cluster's, as `suppressions.Entry.covers` says; the same however many workers
    judge the clusters. Copies: `layout` stays as the plan made it."""
    entries = [e for name in names for e in suppressions.from_profile(repo.cluster(name))]
    out = [dataclasses.replace(f) for f in layout]
    suppressions.apply(out, entries, today or datetime.date.today())
    return out


def collected(found: t.Iterable[Finding]) -> list[Finding]:
    """The findings of every cluster as the report lists them: each once, by file, line,
    cluster and rule."""
    seen: set[str] = set()
    out: list[Finding] = []
    for finding in found:
        ident = json.dumps(finding.to_json(), sort_keys=True, default=str)
        if ident not in seen:
            seen.add(ident)
            out.append(finding)
    out.sort(key=lambda f: (f.file or "", f.line or 0, f.cluster or "", f.rule.id))
    return out


def require_schemas(repo: Repository, schemas: Path, names: t.Iterable[str]) -> None:
    """Refuse (a ConfigError saying how to get them) a cluster without schemas: none committed
    and none in the package for its Kueue release."""
    for name in names:
        schemas_of(repo, schemas, name)


def schemas_of(repo: Repository, schemas: Path, name: str) -> SchemaCatalog:
    """The schemas cluster `name` is judged by (catalog.find: committed, else the package's)."""
    return catalog.require(schemas, name, repo.cluster(name).kueue_version)


ClusterOutcome = tuple[ClusterResult, list[Finding], list[tuple[str, bool]]]  # notes: (text, minor)


def _cluster_job(
    repo: Repository,
    schemas: Path,
    tool: str | None,
    placed: list[Placed],
    server_side: Connector | None,
    policy: bool,
    name: str,
) -> ClusterOutcome:
    """One cluster's outcome, its files loaded (through its cache pack, when on) and judged
    (by the policy checks too, with `policy`)."""
    pack = packs.of_cluster(repo, schemas, name, tool)
    mine = [where for where in placed if where.cluster == name]
    outcome = _guarded(repo, schemas, name, server_side, mine, pack, policy=policy)
    if pack is not None:
        pack.save()
    return outcome


def validator_of(repo: Repository, schemas: Path, name: str) -> ClusterValidator:
    """The cluster's validator: its schemas (schemas_of), and its Kueue release (which kinds
    Kueue's webhooks decode and rewrite, for the findings that depend on it)."""
    known = kueue_release.nearest_release(repo.cluster(name).kueue_version)
    return ClusterValidator(schemas_of(repo, schemas, name), known)


def _guarded(
    repo: Repository,
    schemas: Path,
    name: str,
    server_side: Connector | None,
    placed: list[Placed],
    cache: repo_cache.FileCache | None = None,
    *,
    policy: bool = True,
) -> ClusterOutcome:
    """One cluster's outcome; a bug while judging it makes that cluster incomplete (exit 3),
    named in the report, and leaves the other clusters' findings standing."""
    try:
        with processing(f"validating cluster {name}"):
            return _cluster(repo, schemas, name, server_side, placed, cache, policy=policy)
    except AuditorError:
        raise
    except Exception as exc:
        log.debug("validating cluster %s failed", name, exc_info=True)
        return ClusterResult(name, "incomplete", [internal_error(exc)]), [], []


def _cluster(
    repo: Repository,
    schemas: Path,
    name: str,
    server_side: Connector | None,
    placed: list[Placed],
    cache: repo_cache.FileCache | None = None,
    *,
    policy: bool = True,
) -> ClusterOutcome:
    """Load, validate and check one cluster's files (`placed`), each served from the cluster's
    cache pack while unchanged; the policy checks too, with `policy`; dry-run on ask.
    Suppressions apply to every finding of the cluster."""
    notes: list[tuple[str, bool]] = []  # (message, minor)
    profile = repo.cluster(name)
    loaded = cached.load_placed(repo, placed, {name: cache} if cache is not None else {})
    findings = [f for f in loaded.findings if f.cluster == name]  # the loader names each's
    resources = loaded.for_cluster(name)
    validator = validator_of(repo, schemas, name)
    verdicts = kept.verdicts(resources, functools.partial(judge, validator, cluster=name), cache)
    for verdict in verdicts:
        validator.remember(verdict)
        findings.extend(verdict.findings)
    sound, invalid = sorted_out(resources, verdicts)
    notes += cluster_notes(name, validator.catalog, validator.skipped, validator.unsupported)
    if policy:
        findings.extend(_policy(repo, profile, sound, invalid, findings, resources, cache))
    result = ClusterResult(name, schemas=validator.catalog.source.to_json())
    if server_side is not None:
        findings.extend(
            _dry_run(server_side, profile, resources, result, lambda m: notes.append((m, False)))
        )
    accepted = suppressions.of_cluster(profile, resources)
    suppressions.apply(findings, accepted, datetime.date.today())
    return result, findings, notes


def _policy(
    repo: Repository,
    profile: ClusterProfile,
    sound: list[Resource],
    invalid: dict[ResourceKey, Finding],
    found: list[Finding],
    resources: list[Resource],
    cache: repo_cache.FileCache | None,
) -> list[Finding]:
    """The policy checks' findings on the sound objects (`found`: the cluster's findings so
    far, which say whether a folder went unrendered)."""
    from auditor.validate import checks  # the policy stage's alone: --only schema never loads it

    unrendered = any(f.rule.id in UNRENDERED for f in found)
    context = checks.CheckContext(
        repo, profile, tuple(sound), repo.tenants, invalid=invalid, unrendered=unrendered
    )
    return checks.run(context) if cache is None else kept.run(context, resources, cache)


def cluster_notes(
    name: str, found: SchemaCatalog, skipped: t.Collection[object], unsupported: t.Collection[str]
) -> list[tuple[str, bool]]:
    """What a run says of cluster `name`: its schemas' source, the CEL rules it left out."""
    notes = [_source_note(name, found)]
    if skipped:
        notes.append(
            (
                f"{name}: {len(skipped)} CEL transition rule(s) (oldSelf) not checked "
                "by validate: they judge a change to an object, which `plan` checks",
                True,
            )
        )
    if unsupported:
        notes.append(
            (
                f"{name}: {len(unsupported)} CEL rule(s) not checked offline: they "
                "need a function the offline evaluator lacks, e.g. "
                f"{sorted(unsupported)[0]}",
                False,
            )
        )
    return notes


def _source_note(name: str, found: SchemaCatalog) -> tuple[str, bool]:
    """Which schemas judged the cluster: said on every run when they are the package's (and
    how to match the live cluster instead), on asking (-v) when they are committed."""
    source = found.source
    if source.folder is not None:
        return f"{name}: schemas from {source.folder}/", True
    return (
        f"{name}: schemas from the package, those of Kueue {source.kueue} (its profile's "
        f"release) on Kubernetes {source.kubernetes}, as none are committed for it; "
        f"`kueue-gitops schemas fetch --cluster {name}` matches the live cluster exactly",
        False,
    )


def sorted_out(
    resources: list[Resource], verdicts: t.Iterable[Verdict]
) -> tuple[list[Resource], dict[ResourceKey, Finding]]:
    """The objects sound enough for the policy checks, and for each other object that has a
    finding, the finding that kept it out (a reference to it is invalid, not missing)."""
    sound: list[Resource] = []
    invalid: dict[ResourceKey, Finding] = {}
    for resource, verdict in zip(resources, verdicts, strict=True):
        if verdict.sound:
            sound.append(resource)
        elif verdict.findings:
            invalid[resource.key] = why_invalid(verdict.findings)
    return sound, invalid


def judge(validator: ClusterValidator, resource: Resource, cluster: str) -> Verdict:
    """The validator's verdict on one object (version contract, schema, CEL), its findings
    stamped with the cluster."""
    verdict = validator.judge(resource)
    for finding in verdict.findings:
        finding.cluster = cluster
    return verdict


def why_invalid(found: list[Finding]) -> Finding:
    """The finding that kept an object out of the policy checks: its first error."""
    return next((f for f in found if f.severity is Severity.ERROR), found[0])


def judged(exc: ClusterAccessError) -> bool:
    """Whether the API server refused the object itself (as opposed to failing to answer)."""
    from auditor.live import apierrors  # only a dry run meets one: its imports off other runs

    refusals = (apierrors.BadRequest, apierrors.Invalid, apierrors.WebhookDenied)
    return isinstance(exc, (*refusals, apierrors.Unfitting))


def _dry_run(
    connector: Connector,
    profile: ClusterProfile,
    resources: list[Resource],
    result: ClusterResult,
    say: Note,
) -> list[Finding]:
    """Server-side apply with dryRun=All, in sync order; rejections become findings."""
    from auditor.live import apierrors
    from auditor.live import apply as live_apply

    findings: list[Finding] = []
    created = {r.name for r in resources if r.kind == "Namespace"}
    waiting: list[str] = []
    cluster = None
    try:
        cluster = connector(profile)
        for resource, exc in live_apply.apply_each(
            cluster, resources, dry_run=True, field_validation="Strict"
        ):
            if exc is None:
                continue
            missing = isinstance(exc, apierrors.NotFound)
            if missing and resource.namespace in created:
                waiting.append(str(resource.key))  # its namespace is only dry-run created
                continue
            if not (isinstance(exc, apierrors.KindNotServed) or missing or judged(exc)):
                raise exc
            findings.append(
                Finding.about(
                    resource,
                    SERVER_SIDE_REJECTED,
                    f"the API server of {profile.name} rejects it: {exc}",
                    cluster=profile.name,
                )
            )
    except ClusterAccessError as exc:
        result.status = "incomplete"
        result.errors.append(str(exc))
    finally:
        result.throttled = cluster.throttled if cluster is not None else 0.0
    if waiting:
        say(
            f"{profile.name}: {len(waiting)} object(s) not dry-run: their namespace does not "
            f"exist yet (the repo creates it), e.g. {waiting[0]}"
        )
    return findings
