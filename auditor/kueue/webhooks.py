"""What Kueue's validating webhooks refuse that the CRDs' schemas and CEL rules do not express.

The rules, as Kueue's webhooks for ClusterQueue, Cohort and ResourceFlavor have them:

- ClusterQueue and Cohort: quotas (nominalQuota, borrowingLimit, lendingLimit) and
  fairSharing.weight are not negative, and a non-zero weight is above 1n; coveredResources are
  qualified names. A ClusterQueue also caps its flavors and covered resources in all and its
  flavor-resource pairs in a group, has a valid namespaceSelector, and its admission checks'
  onFlavors name only its own flavors (a release that accepts others is told what they do).
- ResourceFlavor: nodeLabels are valid labels, node taints have a valid key and value and are
  unique by key and effect, tolerations have a valid key.

The webhooks' other rules are the quotas check's (auditor/validate/checks/quotas.py: limits
without a parent, lendingLimit over nominalQuota, repeated flavors or resources, resources out of
coveredResources order): MIRRORED. This module's own rules are declared in webhooks.rules.yaml
beside it; the check kueue-webhook (auditor/validate/checks/kueue_webhook.py) reports them.

Which of them a release enforces, where it reports each, in what words, and its caps on counts
are not written here: each rule's passing and failing example from the catalogue is judged by
the release's own webhook code (`probes`, run by testenv/kueueapi, folded by `fold` into
auditor/kueue/api/<release>.json), so a cluster is held to what its release refuses.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

import yaml

from auditor import rules
from auditor.k8s import selectors
from auditor.k8s.names import label_errors, label_value_errors, qualified_name_errors
from auditor.k8s.objects import FieldPath, Json
from auditor.k8s.quantity import ZERO, Quantity, QuantityError, parse
from auditor.kueue import cohorts
from auditor.kueue.quota import QUOTA_FIELDS, cells, resource_groups
from auditor.kueue.release import Release, get, known

RULES = rules.of(__name__)  # declared beside this module, in webhooks.rules.yaml
QUANTITY_NEGATIVE = RULES["quantity-negative"]
FAIR_SHARING_WEIGHT_TINY = RULES["fair-sharing-weight-tiny"]
RESOURCE_NAME_INVALID = RULES["resource-name-invalid"]
QUOTA_TOO_MANY = RULES["quota-too-many"]
NAMESPACE_SELECTOR_INVALID = RULES["namespace-selector-invalid"]
FLAVOR_LABELS_INVALID = RULES["flavor-labels-invalid"]
FLAVOR_TAINT_REPEATED = RULES["flavor-taint-repeated"]
CHECK_FLAVOR_UNKNOWN = RULES["admission-check-flavor-unknown"]
# The same mistake on a release whose webhook accepts it: found here, never probed.
CHECK_FLAVOR_IGNORED = RULES["admission-check-flavor-ignored"]
OWN = tuple(r for r in RULES if r != CHECK_FLAVOR_IGNORED.id)
MIRRORED = (
    "limit-without-cohort",
    "lending-over-nominal",
    "flavor-repeated",
    "resource-repeated",
    "resource-order",
)
PROBED = (*OWN, *MIRRORED)
KINDS = ("ClusterQueue", "Cohort", "ResourceFlavor")
# The caps on counts a ClusterQueue webhook may have (testenv/kueueapi grows queues to find them).
LIMITS = ("flavors", "coveredResources", "flavorResourcePairs")


@dataclass(frozen=True)
class Violation:
    rule: rules.Rule
    path: FieldPath
    message: str


def violations(obj: Json, release: Release) -> list[Violation]:
    """What `release`'s webhooks refuse in `obj`, of the rules it enforces."""
    kind = obj.get("kind")
    found: list[Violation] = []
    if kind == "ResourceFlavor":
        found = list(_flavor(obj))
    elif kind in ("ClusterQueue", "Cohort"):
        found = [*_quantities(obj, release), *_names(obj)]
        if kind == "ClusterQueue":
            found += [
                *_totals(obj, release),
                *_selector(_dict(obj.get("spec")).get("namespaceSelector")),
                *_check_flavors(obj, release),
            ]
    # The caps on counts are the release's own (LIMITS), so those findings stand as found; an
    # onFlavors the release accepts is worded for what it does there.
    stand = (QUOTA_TOO_MANY, CHECK_FLAVOR_IGNORED)
    return [v for v in found if v.rule in stand or release.refuses(v.rule.id)]


def probes(served: t.Mapping[str, str]) -> dict[str, Json]:
    """Each probed rule's passing and failing example, as `<rule>:passes` and `<rule>:fails`,
    written in the version `served` names for its kind (the release's own API)."""
    found = {}
    for rule in PROBED:
        entry = rules.get(rule)
        for side, example in (("passes", entry.passes), ("fails", entry.fails)):
            body = yaml.safe_load(example.text)
            version = served.get(str(body.get("kind")))
            found[f"{rule}:{side}"] = cohorts.in_version(body, version) if version else body
    return found


def fold(verdicts: t.Mapping[str, Json]) -> dict[str, Json]:
    """Per probed rule, what the release's webhooks made of its examples: refused when the
    failing one is refused and the passing one is not, with the failing one's first error."""
    out = {}
    for rule in PROBED:
        passes, fails = verdicts[f"{rule}:passes"], verdicts[f"{rule}:fails"]
        errors = list(fails.get("errors") or [])
        refused = bool(errors) and not passes.get("errors")
        first = errors[0] if errors else {}
        out[rule] = {
            "refused": refused,
            "field": first.get("field") if refused else None,
            "detail": first.get("detail") if refused else None,
        }
    return out


def _dict(value: t.Any) -> dict[str, t.Any]:
    return value if isinstance(value, dict) else {}


def _list(value: t.Any) -> list[t.Any]:
    return value if isinstance(value, list) else []


def _quantity(raw: t.Any) -> Quantity | None:
    try:
        return parse(raw)
    except QuantityError:
        return None  # not a quantity at all: the schema's pattern refuses it


def _said(release: Release, rule: rules.Rule) -> str:
    """The release's own words for a rule it refuses."""
    found = release.webhook_rule(rule.id)
    return (found.detail if found else None) or rule.summary


def _quantities(obj: Json, release: Release) -> t.Iterator[Violation]:
    negative = _said(release, QUANTITY_NEGATIVE)
    for cell in cells(obj):
        for name in QUOTA_FIELDS:
            value = _quantity(cell.fields.get(name)) if name in cell.fields else None
            if value is not None and value < ZERO:
                yield Violation(QUANTITY_NEGATIVE, (*cell.path, name), f"{value}: {negative}")
    weight = _dict(_dict(obj.get("spec")).get("fairSharing")).get("weight")
    value = _quantity(weight) if weight is not None else None
    path: FieldPath = ("spec", "fairSharing", "weight")
    if value is not None and value < ZERO:
        yield Violation(QUANTITY_NEGATIVE, path, f"{value}: {negative}")
    elif value is not None and ZERO < value <= parse("1n"):
        yield Violation(FAIR_SHARING_WEIGHT_TINY, path, _said(release, FAIR_SHARING_WEIGHT_TINY))


def _names(obj: Json) -> t.Iterator[Violation]:
    for group in resource_groups(obj):
        for c, name in enumerate(group.covered):
            for why in qualified_name_errors(name):
                path = (*group.path, "coveredResources", c)
                yield Violation(RESOURCE_NAME_INVALID, path, f"{name!r}: {why}")


def _totals(obj: Json, release: Release) -> t.Iterator[Violation]:
    groups = list(resource_groups(obj))
    at: FieldPath = ("spec", "resourceGroups")
    counted = {
        "flavors": [(at, sum(len(g.flavors) for g in groups))],
        "coveredResources": [(at, sum(len(g.covered) for g in groups))],
        "flavorResourcePairs": [
            (g.path, sum(len(_list(_dict(f).get("resources"))) for f in g.flavors)) for g in groups
        ],
    }
    for name in LIMITS:
        cap = release.limit(name).max
        for path, count in counted[name]:
            if cap is not None and count > cap:
                yield Violation(
                    QUOTA_TOO_MANY,
                    path,
                    f"{count} {_LIMIT_WORDS[name]}: Kueue {release.version} takes at most {cap}",
                )


_LIMIT_WORDS = {
    "flavors": "flavors across all resourceGroups",
    "coveredResources": "covered resources across all resourceGroups",
    "flavorResourcePairs": "flavor-resource pairs in this resourceGroup",
}


def _check_flavors(obj: Json, release: Release) -> t.Iterator[Violation]:
    """Each admission check's onFlavors entry that names none of the queue's flavors."""
    spec = _dict(obj.get("spec"))
    flavors = {str(_dict(f).get("name")) for g in resource_groups(obj) for f in g.flavors}
    listed = ", ".join(sorted(flavors)) or "none"
    refused = release.refuses(CHECK_FLAVOR_UNKNOWN.id)
    checks = _list(_dict(spec.get("admissionChecksStrategy")).get("admissionChecks"))
    if _strategy_replaced(obj, release):
        checks = []  # what the webhook judges has no onFlavors
    for i, check in enumerate(checks):
        name = _dict(check).get("name")
        for j, flavor in enumerate(_list(_dict(check).get("onFlavors"))):
            if str(flavor) in flavors:
                continue
            path = ("spec", "admissionChecksStrategy", "admissionChecks", i, "onFlavors", j)
            if refused:
                why = f"{flavor!r} is not one of the queue's flavors ({listed})"
                yield Violation(CHECK_FLAVOR_UNKNOWN, path, why)
            else:
                yield Violation(
                    CHECK_FLAVOR_IGNORED,
                    path,
                    f"{flavor!r} is not one of the queue's flavors ({listed}): Kueue "
                    f"{release.version} accepts the queue, but no workload of it is ever "
                    f"assigned {flavor!r}, so admission check {name!r} never runs for it"
                    + _later(release, CHECK_FLAVOR_UNKNOWN),
                )


def _strategy_replaced(obj: Json, release: Release) -> bool:
    """Whether the webhook reads the queue converted from a version whose `spec.admissionChecks`
    (names) replaces admissionChecksStrategy: Kueue's v1beta1-to-v1beta2 conversion makes each
    name a rule of its own, with no onFlavors, over what the strategy said."""
    crd = release.crds.get("ClusterQueue")
    version = str(obj.get("apiVersion", "")).rpartition("/")[2]
    converted = crd is not None and crd.conversion == "Webhook" and version != crd.storage
    return (
        converted
        and version == "v1beta1"
        and bool(_list(_dict(obj.get("spec")).get("admissionChecks")))
    )


def _later(release: Release, rule: rules.Rule) -> str:
    """Which carried release after `release` first refuses what it accepts, if one does."""
    for version in known():
        newer = get(version)
        if newer and newer.minor > release.minor and newer.refuses(rule.id):
            return f"; Kueue {version}'s webhook refuses the queue"
    return ""


def _selector(selector: t.Any) -> t.Iterator[Violation]:
    for path, why in selectors.problems(selector):  # Kueue validates it as Kubernetes does
        yield Violation(NAMESPACE_SELECTOR_INVALID, ("spec", "namespaceSelector", *path), why)


def _flavor(obj: Json) -> t.Iterator[Violation]:
    spec = _dict(obj.get("spec"))
    for key, why in label_errors(_dict(spec.get("nodeLabels"))):
        yield Violation(FLAVOR_LABELS_INVALID, ("spec", "nodeLabels", key), why)
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(_list(spec.get("nodeTaints"))):
        taint, path = _dict(taint), ("spec", "nodeTaints", i)
        key, value = str(taint.get("key", "")), str(taint.get("value", ""))
        for why in qualified_name_errors(key):
            yield Violation(FLAVOR_LABELS_INVALID, (*path, "key"), f"{key!r}: {why}")
        for why in label_value_errors(value):
            yield Violation(FLAVOR_LABELS_INVALID, (*path, "value"), f"{value!r}: {why}")
        ident = (key, str(taint.get("effect", "")))
        if ident in seen:
            why = "taints must be unique by key and effect pair"
            yield Violation(FLAVOR_TAINT_REPEATED, path, why)
        seen.add(ident)
    for i, toleration in enumerate(_list(spec.get("tolerations"))):
        key = str(_dict(toleration).get("key") or "")
        for why in qualified_name_errors(key) if key else ():
            at: FieldPath = ("spec", "tolerations", i, "key")
            yield Violation(FLAVOR_LABELS_INVALID, at, f"{key!r}: {why}")
