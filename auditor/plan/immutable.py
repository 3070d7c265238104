"""Changes the API server will refuse: the CRDs' transition rules on base and head, offline,
and the fields Kueue's webhooks hold immutable.

Which fields cannot change (LocalQueue `spec.clusterQueue`, a topology-aware flavor's node
labels, ...) is not written here: the committed schemas say it, as CEL rules reading `oldSelf`,
and each one a change breaks is an error at the changed field's line, with the rule's message.
The head revision's schemas/ are used: the ones the change will be synced against (else the
package's set of the head profile's Kueue release, as validate judges a cluster without any).
Kueue's Go webhooks hold more (a ClusterQueue's `concurrentAdmissionPolicy` from v0.19): which,
the cluster's release says (its own ValidateUpdate found them, auditor/kueue/release.py).
"""

from __future__ import annotations

import typing as t
from pathlib import Path

from auditor import rules
from auditor.errors import ConfigError
from auditor.kueue import KUEUE_GROUP, release
from auditor.model import Finding, Resource, format_path
from auditor.plan.model import ClusterPlan
from auditor.repo.layout import Repository
from auditor.schemas import catalog as schemas_catalog
from auditor.schemas import cel, transitions
from auditor.schemas.catalog import SchemaCatalog

_RULES = rules.of(__name__)
PLAN_IMMUTABLE_FIELD = _RULES["plan-immutable-field"]

SCHEMAS = Path("schemas")
KindRules = tuple[dict[str, t.Any], tuple[cel.Rule, ...]]  # a kind's schema, its transition rules


def findings(plan: ClusterPlan, head: Repository) -> t.Iterator[Finding]:
    """An error for each transition rule an object changed from base to head breaks."""
    catalog: SchemaCatalog | None = None
    profile = plan.head.profile or plan.base.profile
    kueue = release.nearest_release(profile.kueue_version if profile else None)
    kinds: dict[tuple[str, str], KindRules | None] = {}
    for key, new in sorted(plan.head.objects.items()):
        old = plan.base.objects.get(key)
        if old is None or old.body == new.body:
            continue
        if catalog is None:
            catalog = _catalog(plan.name, head)
        yield from refused(plan.name, catalog, kueue, old, new, kinds)


def refused(
    cluster: str,
    catalog: SchemaCatalog,
    kueue: release.Release,
    old: Resource,
    new: Resource,
    kinds: dict[tuple[str, str], KindRules | None] | None = None,
) -> t.Iterator[Finding]:
    """The errors for one object changed from `old` to `new`: the transition rules of its
    schema in `catalog` it breaks, and the fields `kueue`'s webhook holds that it changes
    (`kinds` keeps each kind's rules between calls)."""
    kinds = {} if kinds is None else kinds
    kind = (new.api_version, new.kind)
    if kind not in kinds:
        kinds[kind] = _kind_rules(catalog, *kind)
    found = kinds[kind]
    if found is not None:
        yield from _broken(cluster, catalog.folder, found, old, new)
    if new.key.group == KUEUE_GROUP:
        yield from _held(cluster, kueue, catalog.schema(*kind) or {}, old, new)


def _held(
    cluster: str, kueue: release.Release, schema: dict[str, t.Any], old: Resource, new: Resource
) -> t.Iterator[Finding]:
    """An error for each field Kueue's webhook holds immutable that the change sets, changes
    or removes (compared as stored: with the schema's defaults)."""
    before, after = cel.with_defaults(schema, old.body), cel.with_defaults(schema, new.body)
    for name in kueue.immutable(new.kind):
        path = tuple(name.split("."))
        if _at(before, path) == _at(after, path):
            continue
        yield Finding.about(
            new,
            PLAN_IMMUTABLE_FIELD,
            f"{new.key} changes {name}: Kueue {kueue.version}'s webhook holds it immutable "
            '("field is immutable"), so the API server refuses the update and the sync will '
            "fail; hold admission, then remove the object and add it anew in separate changes",
            path=path if _at(after, path) is not None else path[:-1],
            cluster=cluster,
        )


def _at(body: t.Any, path: tuple[str, ...]) -> t.Any:
    for step in path:
        body = body.get(step) if isinstance(body, dict) else None
    return body


def _catalog(cluster: str, head: Repository) -> SchemaCatalog:
    """The head's schemas of `cluster`: committed at the head, else the package's set of the
    Kueue release its head profile names (catalog.find)."""
    found = schemas_catalog.find(SCHEMAS, cluster, head.cluster(cluster).kueue_version, head.tree)
    if found is None:
        raise ConfigError(
            f"{SCHEMAS}/{cluster}/ is not in {head.label} and the package carries no schemas "
            f"of its Kueue release: plan needs them to know which fields the API server will "
            f"not change; run `kueue-gitops schemas fetch --cluster {cluster}` and commit it"
        )
    return found


def _kind_rules(catalog: SchemaCatalog, api_version: str, kind: str) -> KindRules | None:
    schema = catalog.schema(api_version, kind)
    if schema is None:  # a kind the cluster does not serve: validate reports it
        return None
    transition = tuple(r for r in cel.collect(schema) if r.transition)
    return (schema, transition) if transition else None


def _broken(
    cluster: str, folder: str, found: KindRules, old: Resource, new: Resource
) -> t.Iterator[Finding]:
    schema, transition = found
    # A stored object has its defaults; a version change is read as the same fields (Kueue's
    # conversions keep every field a transition rule reads).
    before, after = cel.with_defaults(schema, old.body), cel.with_defaults(schema, new.body)
    for violation in transitions.evaluate(transition, before, after):
        yield Finding.about(
            new,
            PLAN_IMMUTABLE_FIELD,
            f"{new.key} changes {format_path(violation.path)}: {violation.message} (rule in "
            f"{folder}: {violation.rule}); the API server refuses to change it on an existing "
            "object, so the sync will fail; hold admission, then remove the object and add it "
            "anew in separate changes",
            path=violation.path,
            cluster=cluster,
        )
