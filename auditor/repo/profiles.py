"""Cluster and tenant profiles: the facts about the platform that are not Kubernetes objects.

Profiles are validated against their own JSON Schemas when read; a bad profile is a
configuration error (exit 2), because every later check would be built on it.
"""

from __future__ import annotations

import datetime
import functools
import json
import re
import typing as t
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import fastjsonschema

from auditor import rules
from auditor.errors import ConfigError
from auditor.kueue import versions
from auditor.model import Resource
from auditor.repo import cache, outfile

PROFILE_API_VERSION = "kueue-gitops.io/v1alpha1"
PROFILE_FILE = "profile.yaml"


@functools.cache
def _fast_validator(name: str) -> t.Callable[[t.Any], t.Any]:
    """Built once per run (a repo with thousands of tenants validates thousands of profiles),
    its code kept in the user cache as the manifests' validators are: generating it costs
    ~0.02 s a schema, on one core before the clusters' work is shared among processes."""
    schema = _schema(name)
    text = json.dumps(schema, sort_keys=True)
    code = cache.kept_code(
        f"{CODE_FORMAT}\0{fastjsonschema.VERSION}\0{text}",
        functools.partial(fastjsonschema.compile_to_code, schema),
        f"{name} validator",
    )
    scope: dict[str, t.Any] = {}
    exec(code, scope)  # our own compiled fastjsonschema output
    if VALIDATE not in scope:  # pragma: no cover - a schema with its own $id
        return t.cast(t.Callable[[t.Any], t.Any], fastjsonschema.compile(schema))
    return t.cast(t.Callable[[t.Any], t.Any], scope[VALIDATE])


CODE_FORMAT = 1  # bump when what `_fast_validator` keeps changes
VALIDATE = "validate"  # the name fastjsonschema gives a schema's validating function


@functools.cache
def _schema(name: str) -> dict[str, t.Any]:
    text = resources.files("auditor.repo").joinpath(f"profile_schemas/{name}.json").read_text()
    return t.cast(dict[str, t.Any], json.loads(text))


SCHEMA_NAMES = ("clusterprofile", "tenantprofile")
EXPORTED = "schemas/_profiles"  # `_`: never a cluster's name, so never a cluster's schema folder


def owner_problem(owner: str) -> str | None:
    """Why a profile would refuse `owner` (its schema's pattern), or None."""
    pattern = _schema("clusterprofile")["$defs"]["owners"]["items"]["pattern"]
    if re.fullmatch(pattern, owner):
        return None
    return f"{owner!r} is no GitHub @ORG/TEAM, @USER or e-mail address (CODEOWNERS names it)"


def exported_schemas() -> dict[str, str]:
    """The profiles' JSON Schemas as the repository holds them: path below the root -> text."""
    return {
        f"{EXPORTED}/{name}.json": resources.files("auditor.repo")
        .joinpath(f"profile_schemas/{name}.json")
        .read_text()
        for name in SCHEMA_NAMES
    }


def export_schemas(root: Path) -> list[tuple[str, bool]]:
    """Write the profiles' JSON Schemas under `root`/EXPORTED: each path, and whether it changed."""
    out = []
    for path, text in exported_schemas().items():
        target = root / path
        changed = not target.is_file() or target.read_text() != text
        if changed:
            outfile.write_whole(target, text, what="the profiles' schemas")
        out.append((path, changed))
    return out


@dataclass(frozen=True)
class ProfileSuppression:
    """A finding the cluster profile accepts on purpose (spec.suppressions): the rule, and the
    kind, namespace and name it is limited to (None: any)."""

    rule: str
    reason: str
    expires: datetime.date
    line: int
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class ClusterProfile:
    name: str
    file: str
    context: str
    owners: tuple[str, ...]
    kueue_api_versions: tuple[str, ...]
    admission_label: tuple[str, str]
    tenant_label: str | None
    capacity: dict[str, dict[str, t.Any]]
    verify_allowed: bool = False
    trusted_subjects: tuple[str, ...] = ()  # drift does not report their RBAC powers
    kueue_version: str | None = None  # the Kueue release it runs, e.g. v0.17.0
    argocd_version: str | None = None  # the Argo CD release syncing it: its kustomize and helm
    exact_renderers: bool = False  # only that release's kustomize and helm may render its folders
    platform_identities: tuple[str, ...] = ()  # alone may change namespaces' admission labels
    policy_enforcement: str = "Deny"  # the admission policies' action: Deny, or Warn to roll out
    alerts: dict[str, dict[str, dict[str, t.Any]]] = field(default_factory=dict)  # name -> ranges
    priority_order: tuple[str, ...] = ()  # WorkloadPriorityClasses, lowest first
    platform_levels: tuple[str, ...] | None = None  # None: the classes no tenant may use
    preemption_allowed: dict[str, dict[str, str]] = field(default_factory=dict)  # cq -> policies
    suppressions: tuple[ProfileSuppression, ...] = ()

    def admits(self, labels: t.Mapping[str, t.Any] | None) -> bool:
        """Whether a namespace with these labels may submit work: it carries the admission label."""
        key, value = self.admission_label
        return bool((labels or {}).get(key) == value)

    @property
    def kueue_api(self) -> str:
        """The apiVersion to read and write Kueue objects in on this cluster."""
        return versions.api_version(self.kueue_api_versions)


@dataclass(frozen=True)
class TenantCluster:
    namespaces: tuple[str, ...]
    cluster_queues: tuple[str, ...]


@dataclass(frozen=True)
class Evidence:
    """A record that preempted jobs resume without harm: what was shown, where, when, until when."""

    aspect: str  # checkpointing | idempotentOutput
    validated: str
    reference: str
    date: datetime.date
    expires: datetime.date

    @property
    def path(self) -> tuple[str, ...]:
        return ("spec", "preemption", self.aspect)


EVIDENCE_ASPECTS = ("checkpointing", "idempotentOutput")


@dataclass(frozen=True)
class TenantProfile:
    name: str
    file: str
    owners: tuple[str, ...]
    group: str | None
    clusters: dict[str, TenantCluster]
    workload_priority_classes: tuple[str, ...] = ()
    pod_priority_classes: tuple[str, ...] = ()
    evidence: dict[str, Evidence] = field(default_factory=dict)  # by aspect
    flavors: tuple[str, ...] | None = None  # the ResourceFlavors its jobs tolerate (None: all)
    extra: dict[str, t.Any] = field(default_factory=dict)

    def missing_evidence(self) -> list[str]:
        """The aspects of preemption safety this tenant has no record for."""
        return [a for a in EVIDENCE_ASPECTS if a not in self.evidence]


def _validate(resource: Resource, schema_name: str, folder: str) -> dict[str, t.Any]:
    try:
        _fast_validator(schema_name)(resource.body)
        errors = []
    except fastjsonschema.JsonSchemaException:  # let jsonschema say precisely what and where
        import jsonschema  # only for a profile that fails: ~0.1 s of imports off every run

        validator = jsonschema.Draft202012Validator(_schema(schema_name))
        errors = sorted(validator.iter_errors(resource.body), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        line = resource.line_of(list(err.absolute_path))
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        raise ConfigError(
            f"{resource.file}:{line}: invalid {schema_name} at {where}: {err.message}"
        )
    name = resource.body["metadata"]["name"]
    if name != folder:
        raise ConfigError(
            f"{resource.file}:{resource.line_of(['metadata', 'name'])}: "
            f"profile name {name!r} must equal its folder name {folder!r}"
        )
    return t.cast(dict[str, t.Any], resource.body["spec"])


def cluster_profile(resource: Resource, folder: str) -> ClusterProfile:
    spec = _validate(resource, "clusterprofile", folder)
    label = spec["admissionLabel"]
    return ClusterProfile(
        name=folder,
        file=resource.file,
        context=spec["context"],
        owners=tuple(spec["owners"]),
        kueue_api_versions=tuple(spec["kueue"]["apiVersions"]),
        admission_label=(label["key"], label["value"]),
        tenant_label=spec.get("tenantLabel"),
        capacity=spec["capacity"],
        verify_allowed=bool(spec.get("verify", {}).get("allowed")),
        trusted_subjects=tuple(spec.get("drift", {}).get("trustedSubjects", [])),
        kueue_version=spec["kueue"].get("version"),
        argocd_version=spec.get("argocd", {}).get("version"),
        exact_renderers=spec.get("argocd", {}).get("renderers") == "exact",
        platform_identities=tuple(spec.get("platformIdentities", ())),
        policy_enforcement=spec.get("admissionPolicies", {}).get("enforcement", "Deny"),
        alerts=spec.get("alerts", {}),
        priority_order=tuple(spec.get("priority", {}).get("workloadOrder", ())),
        platform_levels=(
            tuple(spec["priority"]["platformLevels"])
            if "platformLevels" in spec.get("priority", {})
            else None
        ),
        preemption_allowed=spec.get("preemption", {}).get("allow", {}),
        suppressions=tuple(
            _suppression(resource, i, entry) for i, entry in enumerate(spec.get("suppressions", []))
        ),
    )


def _suppression(resource: Resource, index: int, entry: dict[str, t.Any]) -> ProfileSuppression:
    path = ("spec", "suppressions", index)
    try:
        rules.get(entry["rule"])
    except rules.UnknownRule as exc:
        line = resource.line_of((*path, "rule"))
        raise ConfigError(f"{resource.file}:{line}: {exc}") from None
    return ProfileSuppression(
        rule=entry["rule"],
        reason=" ".join(entry["reason"].split()),
        expires=_date(resource, (*path, "expires"), entry["expires"]),
        line=resource.line_of(path),
        kind=entry.get("kind"),
        namespace=entry.get("namespace"),
        name=entry.get("name"),
    )


def tenant_profile(resource: Resource, folder: str) -> TenantProfile:
    spec = _validate(resource, "tenantprofile", folder)
    prio = spec.get("priorityClasses", {})
    pre = spec.get("preemption", {})
    return TenantProfile(
        name=folder,
        file=resource.file,
        owners=tuple(spec["owners"]),
        group=spec.get("group"),
        clusters={
            c: TenantCluster(tuple(v["namespaces"]), tuple(v["clusterQueues"]))
            for c, v in spec["clusters"].items()
        },
        workload_priority_classes=tuple(prio.get("workload", [])),
        pod_priority_classes=tuple(prio.get("pod", [])),
        evidence={a: _evidence(resource, a, pre[a]) for a in EVIDENCE_ASPECTS if a in pre},
        flavors=tuple(spec["flavors"]) if "flavors" in spec else None,
    )


def _evidence(resource: Resource, aspect: str, record: dict[str, t.Any]) -> Evidence:
    dates = {k: _date(resource, ("spec", "preemption", aspect, k), record[k]) for k in DATES}
    if dates["expires"] <= dates["date"]:
        line = resource.line_of(("spec", "preemption", aspect, "expires"))
        raise ConfigError(
            f"{resource.file}:{line}: preemption.{aspect} expires before it was validated"
        )
    return Evidence(aspect, record["validated"], record["reference"], **dates)


DATES = ("date", "expires")


def _date(resource: Resource, path: tuple[str | int, ...], value: t.Any) -> datetime.date:
    """A YAML date (the loader gives datetime.date) or an ISO 8601 string."""
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value
    try:
        return datetime.date.fromisoformat(str(value))
    except ValueError:
        field_name = ".".join(map(str, path[1:]))
        raise ConfigError(
            f"{resource.file}:{resource.line_of(path)}: {field_name} must be a date "
            f"(YYYY-MM-DD), not {value!r}"
        ) from None
