"""`kueue-gitops init`: a repository from nothing, from the templates shipped in the package.

The platform content a cluster needs (its profile, flavors, a cohort, priority levels, the
platform ClusterRoles tenants are bound to, alerts, Kueue's Configuration) and the Argo CD
objects that sync it come from `templates/`, one file each with `${name}` placeholders. This
repository's own `clusters/` and `argocd/` are those templates filled in (a test holds them
equal), so what `init` writes is what this project runs its tests and demo against.
Kueue's Configuration is written only for a release whose Configuration API (derived from its
Go types, auditor/kueue/api/) accepts every field of the template.
"""

from __future__ import annotations

import json
import re
import typing as t
from dataclasses import dataclass, field
from importlib import resources

import yaml

from auditor import rules
from auditor.errors import ConfigError
from auditor.k8s.objects import KUEUE_GROUP
from auditor.kueue import config as kueue_config
from auditor.onboard.files import DNS_LABEL, Plan
from auditor.onboard.new_tenant import Quota
from auditor.repo.profiles import PROFILE_FILE
from auditor.repo.root import CLUSTERS

_PLACEHOLDER = re.compile(r"\$\{([a-z_]+)\}")
ARGOCD = "argocd"
# What a cluster gets when init is told nothing of its hardware: one GPU flavor, to be edited.
DEFAULT_CAPACITY = ("gpu.cpu=64", "gpu.memory=512Gi", "gpu.nvidia.com/gpu=8")
POOL_LABEL = "kueue-gitops.io/pool"


def template(path: str) -> str:
    """A template's text, as shipped in the package."""
    return resources.files("auditor.onboard").joinpath("templates", path).read_text()


def render(path: str, values: t.Mapping[str, str]) -> str:
    """Template `path` with every `${name}` filled in; a name without a value is a bug."""

    def value(match: re.Match[str]) -> str:
        if match[1] not in values:
            raise KeyError(f"template {path} needs ${{{match[1]}}}")
        return values[match[1]]

    return _PLACEHOLDER.sub(value, template(path))


@dataclass(frozen=True)
class ClusterStart:
    """What `init` (or `cluster add` without --like) is told, or assumes, about one cluster."""

    name: str
    owners: tuple[str, ...]
    kueue_version: str
    context: str | None = None
    admission: tuple[str, str] = ("kueue-gitops.io/admission", "enabled")
    tenant_label: str = "kueue-gitops.io/tenant"
    capacity: tuple[Quota, ...] = field(
        default_factory=lambda: tuple(Quota.parse(q, "--capacity") for q in DEFAULT_CAPACITY)
    )
    cohort: str = "shared"

    def values(self) -> dict[str, str]:
        api = release_api(self.kueue_version)
        config_api = api.schema["properties"]["apiVersion"]["const"]
        # Kueue moved its CRDs and its Configuration to a new API version together (v1beta2 in
        # v0.15), so the Configuration's version names the CRDs' too.
        version = config_api.rpartition("/")[2]
        return {
            "cluster": self.name,
            "context": self.context or self.name,
            "owners": ", ".join(f'"{o}"' for o in self.owners),
            "kueue_version": self.kueue_version,
            "kueue_api_version": version,
            "kueue_api": f"{KUEUE_GROUP}/{version}",
            "config_api": config_api,
            "admission_key": scalar(self.admission[0]),
            "admission_value": scalar(self.admission[1]),
            "tenant_label": scalar(self.tenant_label),
            "capacity": _capacity(self.capacity),
            "cohort": self.cohort,
            "pool_label": POOL_LABEL,
        }


def scalar(text: str) -> str:
    """`text` as a YAML string in a template: as it is where YAML reads it back as that string,
    else quoted (`true`, `8`, `null` would be read as a boolean, a number, nothing)."""
    try:
        plain = yaml.safe_load(text) == text and "#" not in text and not text.endswith(":")
    except yaml.YAMLError:
        plain = False
    return text if plain else json.dumps(text)


def release_api(version: str) -> kueue_config.KueueApi:
    found = kueue_config.api(version)
    if found is None:
        known = ", ".join(kueue_config.known_versions())
        raise ConfigError(f"--kueue-version {version}: this kueue-gitops knows {known}")
    return found


def writable_releases() -> list[str]:
    """The Kueue releases whose Configuration the template fits: those init can write for."""
    return [v for v in kueue_config.known_versions() if not _unfit(v)]


def newest_release() -> str:
    """The newest Kueue release whose Configuration the template fits."""
    return writable_releases()[-1]


def check_release(version: str, like: t.Sequence[str] = ()) -> None:
    """Refuse a release init cannot write a cluster for, saying what it can do instead: the
    releases it writes, and (`like`: the repository's clusters that run `version`) a copy."""
    release_api(version)
    unfit = _unfit(version)
    if not unfit:
        return
    copy = (
        f", or `cluster add NAME --like {like[0]}` to copy a cluster that runs it" if like else ""
    )
    raise ConfigError(
        f"--kueue-version {version}: kueue-gitops audits clusters that run it, but cannot write "
        f"a new one (its Configuration refuses what init writes: {'; '.join(unfit)}); choose "
        f"--kueue-version {' or '.join(writable_releases())}{copy}"
    )


def _unfit(version: str) -> list[str]:
    """What the Configuration template says that Kueue `version` would refuse."""
    import jsonschema

    start = ClusterStart("check", ("@x/y",), version)
    api = release_api(version)
    values = start.values()
    text = render("cluster/kueue/manager-config.yaml", values)
    [configmap] = [d for d in yaml.safe_load_all(text) if d["kind"] == "ConfigMap"]
    config = yaml.safe_load(configmap["data"][kueue_config.KEY])
    validator = jsonschema.Draft202012Validator(api.schema)
    return sorted(e.message for e in validator.iter_errors(config))


def _capacity(quotas: t.Sequence[Quota]) -> str:
    by_flavor: dict[str, dict[str, str]] = {}
    for q in quotas:
        by_flavor.setdefault(q.flavor, {})[q.resource] = q.amount
    lines = []
    for flavor, resources_ in by_flavor.items():
        inner = ", ".join(f'{r}: "{a}"' for r, a in resources_.items())
        lines.append(f"    {flavor}: {{{inner}}}")
    return "\n".join(lines)


CLUSTER_TEMPLATES = (
    "rbac.yaml",
    "priorityclasses.yaml",
    "cohorts.yaml",
    "alerts.yaml",
    "kueue/manager-config.yaml",
)


def cluster_files(start: ClusterStart) -> dict[str, str]:
    """Every file of clusters/NAME/ but its ClusterQueues (tenants bring those) and the
    admission policies (generated from the rest)."""
    if not DNS_LABEL.fullmatch(start.name):
        raise ConfigError(f"cluster name {start.name!r} must be a DNS label (Argo CD, kubeconfig)")
    check_release(start.kueue_version)
    values = start.values()
    base = f"{CLUSTERS}/{start.name}"
    files = {f"{base}/{PROFILE_FILE}": render("cluster/profile.yaml", values)}
    flavors = list(dict.fromkeys(q.flavor for q in start.capacity))
    files[f"{base}/resourceflavors.yaml"] = (
        "# Classes of interchangeable hardware. Node labels must match the node pools exactly.\n"
        + "---\n".join(
            render("cluster/resourceflavor.yaml", values | {"flavor": f}) for f in flavors
        )
    )
    for name in CLUSTER_TEMPLATES:
        files[f"{base}/{name}"] = render(f"cluster/{name}", values)
    return files


def argocd_files(repo_url: str, revision: str, clusters: t.Sequence[str]) -> dict[str, str]:
    """The ApplicationSets and the platform's AppProject, for `clusters`, reading `repo_url`."""
    values = {"repo_url": repo_url, "revision": revision}
    destinations = "".join(render("argocd/destinations.yaml", {"cluster": c}) for c in clusters)
    return {
        f"{ARGOCD}/applicationsets.yaml": render("argocd/applicationsets.yaml", values),
        f"{ARGOCD}/projects.yaml": render(
            "argocd/projects.yaml", values | {"destinations": destinations}
        ),
    }


# The adopter's CI and hooks; shipped without the leading dot (package data globs skip hidden
# files), written with it.
ADOPTER_FILES = (
    "github/workflows/pull-request.yml",
    "github/workflows/code-scanning.yml",
    "github/workflows/drift-report.yml",
    "github/workflows/schema-refresh.yml",
    "github/actions/setup/action.yml",
    "pre-commit-config.yaml",
)


def adopter_files(version: str) -> dict[str, str]:
    """The workflows, their setup action and the pre-commit config, installing kueue-gitops
    `version` (a release: the hooks' `rev` is its tag)."""
    values = {"version": version, "tag": f"v{version}", "tool_repo": rules.REPO_URL}
    return {f".{name}": render(f"repo/{name}", values) for name in ADOPTER_FILES}


def repository(
    clusters: t.Sequence[ClusterStart], repo_url: str, version: str, revision: str = "main"
) -> Plan:
    """Everything an empty repository needs for `clusters`, synced from `repo_url`, checked by
    kueue-gitops `version` in CI and pre-commit."""
    create: dict[str, str] = {}
    for start in clusters:
        create |= cluster_files(start)
    create |= argocd_files(repo_url, revision, [c.name for c in clusters])
    create |= adopter_files(version)
    return Plan(create, {})


def owners_from(repo_url: str) -> str:
    """A guess at the platform team from the repository's URL: its organisation's `platform`."""
    path = re.sub(r"^[a-z+]+://[^/]+/|^[^@]+@[^:]+:", "", repo_url)
    org = path.strip("/").split("/")[0] if "/" in path.strip("/") else ""
    return f"@{org}/platform" if org else "@platform"
