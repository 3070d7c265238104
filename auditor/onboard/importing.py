"""`kueue-gitops import`, its I/O: read one live cluster, write its files whole or not at all.

Reading goes through the one reader (auditor/live/reading.py: one paginated LIST per kind); the
Kueue release is the controller's image tag (the Deployment kueue-system/kueue-controller-
manager, as upstream installs it), else what the user names. Anything unread (a LIST forbidden,
the deadline passed) stops the import before a file is written.

Writing: through the one writer of onboarding (staging.py: every file made aside inside the
repository, then moved in, or nothing; a move that fails puts back what was moved before it),
once none would overwrite a file edited since the last import (the record of what each import
wrote, .kueue-gitops/imported.json, tells them apart).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from auditor.errors import ClusterAccessError, ConfigError
from auditor.k8s.objects import KUEUE_GROUP, RBAC_API, RBAC_KINDS, SCHEDULING_API, Json
from auditor.kueue import CONTROLLER, NAMESPACE, release, versions
from auditor.kueue import config as kueue_config
from auditor.live.apierrors import NotFound
from auditor.live.argocd import running
from auditor.live.kube import KubeCluster
from auditor.live.reading import CRD, NODES, Live, read, read_instead
from auditor.onboard import staging
from auditor.onboard.estate import KUEUE_KINDS, Estate
from auditor.onboard.rendered import inside
from auditor.repo.layout import TENANTS
from auditor.repo.profiles import PROFILE_FILE
from auditor.schemas import fetch as schemas_fetch

STATE = ".kueue-gitops"
RECORD = f"{STATE}/imported.json"
_TAG = re.compile(r":(v\d+\.\d+\.\d+)(?:@sha256:[0-9a-f]+)?$")


def controller_release(deployment: Json) -> tuple[str | None, str | None]:
    """The Kueue release a controller Deployment runs (its manager image's tag), and the
    identity it runs as (`ServiceAccount NS/NAME`)."""
    meta = deployment.get("metadata") or {}
    pod = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    version = None
    for container in pod.get("containers") or []:
        found = _TAG.search(str(container.get("image", "")))
        if found and "kueue" in str(container.get("image")):
            version = found[1]
            break
    account = pod.get("serviceAccountName") or pod.get("serviceAccount") or "default"
    return version, f"ServiceAccount {meta.get('namespace')}/{account}"


def supported(version: str) -> str:
    """`version`, when this tool supports it (not older than the oldest release it carries)."""
    carried = kueue_config.known_versions()
    have = release.semver(version)
    if have is None:
        raise ConfigError(f"Kueue version {version!r} is not vMAJOR.MINOR.PATCH")
    if have < (release.semver(carried[0]) or (0, 0, 0)):
        raise ConfigError(
            f"the cluster runs Kueue {version}, older than the oldest release kueue-gitops "
            f"supports ({carried[0]}; it knows {', '.join(carried)}): upgrade Kueue first; "
            "nothing was written"
        )
    return version


def read_estate(cluster: KubeCluster, kueue_version: str | None = None) -> Estate:
    """Everything import needs of `cluster`, or an error naming what could not be read; what
    it could not find (and so does not know) is said in the Estate's `unread`."""
    served = cluster.served_versions(KUEUE_GROUP)
    if not served:
        raise ConfigError(
            f"cluster {cluster.name} serves no Kueue API ({KUEUE_GROUP}): install Kueue, or "
            "check the context; nothing was written"
        )
    api = versions.api_version(served, served)
    version, controller, unread = _controller(cluster, kueue_version)
    # What tenants run, read for the priority classes they use (never written).
    runs = [(api, "Workload"), ("batch/v1", "Job")]
    kinds = [
        ("v1", "Namespace"),
        (SCHEDULING_API, "PriorityClass"),
        *((RBAC_API, kind) for kind in RBAC_KINDS),
        *((api, kind) for kind in KUEUE_KINDS),
        *runs,
        NODES,
        CRD,
    ]
    live = read(cluster, kinds)
    apis = _elsewhere(cluster, live, api, served)
    if live.errors:
        raise ClusterAccessError(
            f"cluster {cluster.name}: {'; '.join(live.errors)}; nothing was written",
            cluster=cluster.name,
        )
    ran = {kind for _, kind in runs}
    objects = [o for o in live.objects.values() if o.get("kind") not in ran]
    workloads = [o for o in live.objects.values() if o.get("kind") in ran]
    config = _get(cluster, "v1", "ConfigMap", kueue_config.CONFIG_MAP, NAMESPACE)
    if config is not None:
        objects.append({"apiVersion": "v1", "kind": "ConfigMap", **config})
    else:
        unread.append(
            f"no ConfigMap {NAMESPACE}/{kueue_config.CONFIG_MAP}: Kueue's Configuration was "
            "not imported, so validate and drift judge the cluster by Kueue's defaults (which "
            "jobs it manages, fair sharing off); if Kueue runs with another configuration, "
            f"write it in clusters/{cluster.name}/kueue/manager-config.yaml"
        )
    argocd = running(cluster)
    if argocd.version is None:
        unread.append(
            f"Argo CD's release: {argocd.said}; clusters/{cluster.name}/profile.yaml names no "
            "argocd.version, so its folders render with the pinned Argo CD's kustomize and helm: "
            "write the release that syncs it there"
        )
    return Estate(
        cluster.name,
        version,
        api,
        objects,
        schemas=_schemas(live.crds, apis),
        nodes=live.nodes,
        workloads=workloads,
        controller=controller,
        unread=unread,
        argocd_version=argocd.version,
    )


def _controller(
    cluster: KubeCluster, kueue_version: str | None
) -> tuple[str, str | None, list[str]]:
    """The Kueue release the cluster runs (`kueue_version` over the controller's image tag),
    the controller's identity, and what is unknown for want of its Deployment."""
    version, controller = None, None
    deployment = _get(cluster, "apps/v1", "Deployment", CONTROLLER, NAMESPACE)
    if deployment is not None:
        version, controller = controller_release(deployment)
    version = kueue_version or version
    if version is None:
        raise ConfigError(
            f"cluster {cluster.name}: no Deployment {NAMESPACE}/{CONTROLLER} names the Kueue "
            "release it runs (an install of another shape?): pass --kueue-version; nothing was "
            "written"
        )
    unread = []
    if deployment is None:
        unread.append(
            f"no Deployment {NAMESPACE}/{CONTROLLER}: the Kueue release is --kueue-version's "
            f"({version}) and Kueue's own ServiceAccount is unknown, so neither drift's "
            "trustedSubjects nor the proposed platformIdentities name it: add it to both in "
            f"clusters/{cluster.name}/profile.yaml, or drift reports its powers as anyone's"
        )
    return supported(version), controller, unread


def _get(cluster: KubeCluster, api: str, kind: str, name: str, namespace: str) -> Json | None:
    try:
        return cluster.get(api, kind, name, namespace)
    except NotFound:
        return None


def _elsewhere(cluster: KubeCluster, live: Live, api: str, served: list[str]) -> dict[str, str]:
    """Read each Kueue kind `api` does not serve in the next version the cluster serves it in
    (v0.9.1's Cohort and Topology are v1alpha1 only): a served kind is never dropped. Returns
    the apiVersion each Kueue kind was read in."""
    apis = dict.fromkeys(KUEUE_KINDS, api)
    for other in versions.to_try(api, served)[1:]:
        missing = [kind for kind in KUEUE_KINDS if kind in live.not_served]
        read_instead(cluster, live, [(other, kind) for kind in missing])
        apis.update((kind, other) for kind in missing if kind not in live.not_served)
    return apis


def _schemas(crds: list[Json], apis: dict[str, str]) -> dict[tuple[str, str], Json]:
    """Each CRD kind's schema in the version import read it in (Kueue's: `apis`, by kind)."""
    out = {}
    for crd in crds:
        spec = crd.get("spec") or {}
        group = str(spec.get("group", ""))
        kind = str((spec.get("names") or {}).get("kind"))
        api = apis.get(kind, "") if group == KUEUE_GROUP else ""
        want = api.rpartition("/")[2] or None
        for version in spec.get("versions") or []:
            if (want and version.get("name") == want) or (not want and version.get("storage")):
                schema = (version.get("schema") or {}).get("openAPIV3Schema")
                if schema:
                    out[(group, kind)] = schema
    return out


def fetched_schemas(cluster: KubeCluster) -> schemas_fetch.Fetched:
    """The cluster's schemas, as `schemas fetch --cluster` writes them."""
    return schemas_fetch.fetch(cluster)


def tenant_profiles(root: Path) -> dict[str, Json]:
    """The tenant profiles the repository holds, parsed (those that parse)."""
    out = {}
    folder = root / TENANTS
    if folder.is_dir():
        for path in sorted(folder.glob(f"*/{PROFILE_FILE}")):
            try:
                doc = yaml.safe_load(path.read_text())
            except (OSError, yaml.YAMLError):
                continue
            if isinstance(doc, dict):
                out[path.parent.name] = doc
    return out


# -- writing whole ---------------------------------------------------------------------------------


def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Conflict:
    path: str
    diff: str  # what the import would change, as a unified diff


class EditedByHand(ConfigError):
    """Files import would change that were edited since it last wrote them (or that it never
    wrote): nothing was written."""

    def __init__(self, cluster: str, conflicts: list[Conflict]) -> None:
        self.conflicts = conflicts
        paths = ", ".join(c.path for c in conflicts)
        super().__init__(
            f"cluster {cluster}: {len(conflicts)} file(s) differ from what import last wrote "
            f"(edited by hand, or not written by import): {paths}. The differences are above; "
            "--force overwrites them. Nothing was written"
        )


@dataclass
class Written:
    changed: list[str] = field(default_factory=list)  # written or removed
    unchanged: int = 0


def write_whole(
    root: Path, cluster: str, files: dict[str, str], schemas: schemas_fetch.Fetched | None,
    *, force: bool = False, rendered: t.Collection[str] = (),
) -> Written:  # fmt: skip
    """Write `files` (and schemas/<cluster>/) into `root` whole, or nothing: refused when a
    file was edited since the last import (EditedByHand) unless `force`. Nothing in a
    `rendered` folder is touched (onboard/rendered.py)."""
    record = _record(root)
    stale = _stale(record, cluster, files, rendered)
    conflicts: list[Conflict] = []
    todo: dict[str, str | None] = {}  # path -> text, None to remove
    out = Written()
    for path, text in files.items():
        current = _read(root / path)
        if current == text:
            out.unchanged += 1
            continue
        if (
            current is not None
            and not force
            and (record.get(path) or {}).get("sha256") != _digest(current)
        ):
            conflicts.append(Conflict(path, _diff(path, current, text)))
        todo[path] = text
    for path in stale:
        current = _read(root / path)
        if current is None:
            continue
        if not force and record[path].get("sha256") != _digest(current):
            conflicts.append(Conflict(path, _diff(path, current, "")))
        todo[path] = None
    if conflicts:
        raise EditedByHand(cluster, conflicts)
    staging.write_all(
        root,
        {path: made for path, made in todo.items() if made is not None},
        removed=[path for path, made in todo.items() if made is None],
        folders=(
            {f"schemas/{cluster}": lambda folder: schemas_fetch.write(schemas, folder.parent)}
            if schemas is not None
            else {}
        ),
    )
    for path in [p for p, made in todo.items() if made is None]:
        record.pop(path, None)
    for path, text in files.items():
        record[path] = {"cluster": cluster, "sha256": _digest(text)}
    (root / STATE).mkdir(exist_ok=True)
    (root / RECORD).write_text(json.dumps(dict(sorted(record.items())), indent=2) + "\n")
    out.changed = sorted(todo)
    return out


def _stale(
    record: dict[str, dict[str, str]],
    cluster: str,
    files: dict[str, str],
    rendered: t.Collection[str],
) -> list[str]:
    """What this cluster's last import wrote and this one does not; never a tenant's profile,
    which the tenant's other clusters may still need, nor a file a rendered folder now holds
    (a kustomization's resource, perhaps)."""
    return sorted(
        p
        for p, entry in record.items()
        if entry.get("cluster") == cluster
        and p not in files
        and not p.endswith(PROFILE_FILE)
        and not any(inside(p, folder) for folder in rendered)
    )


def _record(root: Path) -> dict[str, dict[str, str]]:
    try:
        found = json.loads((root / RECORD).read_text())
    except (OSError, ValueError):
        found = {}
    return found if isinstance(found, dict) else {}


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def _diff(path: str, current: str, text: str) -> str:
    return "".join(
        difflib.unified_diff(
            current.splitlines(keepends=True),
            text.splitlines(keepends=True),
            f"{path} (now)",
            f"{path} (import)",
        )
    )
