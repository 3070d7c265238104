"""Name the Argo CD Application behind each drifted object, and whether Argo CD will heal it.

Argo CD marks what it syncs with the annotation `argocd.argoproj.io/tracking-id`
(`<app>:<group>/<kind>:<namespace>/<name>`, the default since v2.x) or, with label tracking,
the label `app.kubernetes.io/instance`; an Application's `status.resources` lists each object it
manages (missing or extraneous ones too) with its own sync status. Applications are read from
every audited cluster that serves them (Argo CD runs in one of them, or in none: then only the
name from the tracking mark is known). Reading them is best effort: a cluster without Argo CD,
or one that forbids the read, leaves the drift report as it is.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor import rules
from auditor.errors import ClusterAccessError
from auditor.k8s import argocd
from auditor.k8s.objects import Json, ResourceKey, group_of
from auditor.model import Finding
from auditor.render import tools
from auditor.repo.profiles import ClusterProfile

if t.TYPE_CHECKING:
    from auditor.live.argocd import Running
    from auditor.live.kube import KubeCluster

ARGOCD_VERSION_DIFFERS = rules.of(__name__)["argocd-version-differs"]

API = "argoproj.io/v1alpha1"
TRACKING_ID = "argocd.argoproj.io/tracking-id"
INSTANCE_LABEL = "app.kubernetes.io/instance"


def read_applications(cluster: KubeCluster) -> list[Json]:
    """Every Application the cluster holds; none when it serves no Argo CD or refuses the read."""
    try:
        return cluster.list(API, "Application")
    except ClusterAccessError:
        return []


def tracked_by(obj: Json | None) -> str | None:
    """The Application an object's tracking mark names (annotation first, then the label)."""
    meta = (obj or {}).get("metadata") or {}
    tracking = (meta.get("annotations") or {}).get(TRACKING_ID)
    if isinstance(tracking, str) and ":" in tracking:
        return tracking.split(":", 1)[0].replace("_", "/", 1)  # `ns_app` when apps span namespaces
    label = (meta.get("labels") or {}).get(INSTANCE_LABEL)
    return label if isinstance(label, str) and label else None


@dataclass(frozen=True)
class Tracking:
    application: str
    sync: str | None  # the Application's sync status; None when it was not read
    resource: str | None  # this object's own status in the Application (Synced, OutOfSync)
    extraneous: bool  # Argo CD lists it as needing a prune (no longer in the repository)
    self_heal: bool

    @property
    def heals(self) -> bool:
        """Whether Argo CD will put the live object back by itself."""
        return (
            self.self_heal and (self.resource or self.sync) == "OutOfSync" and not self.extraneous
        )

    def sentence(self) -> str:
        if self.sync is None:
            return f"Argo CD Application {self.application} tracks it (its status was not read)"
        said = f"Argo CD Application {self.application} ({self.sync})"
        if self.extraneous:
            return f"{said} lists it as extraneous: it will not delete it (no prune)"
        if (self.resource or self.sync) != "OutOfSync":
            return f"{said} sees no difference in it: it will not heal this"
        return f"{said} sees it: " + (
            "selfHeal is on, it will put it back"
            if self.heals
            else "selfHeal is off, the next sync puts it back"
        )

    def to_json(self) -> Json:
        return {
            "application": self.application,
            "syncStatus": self.sync,
            "resourceStatus": self.resource,
            "extraneous": self.extraneous,
            "selfHeal": self.self_heal,
            "heals": self.heals,
        }


class Applications:
    """The Applications read, by name and by (destination cluster, object key)."""

    def __init__(self, apps: t.Iterable[Json]) -> None:
        self.by_name: dict[str, Json] = {}
        self.by_object: dict[tuple[str, ResourceKey], tuple[str, Json]] = {}
        for app in apps:
            meta = app.get("metadata") or {}
            name = str(meta.get("name", ""))
            self.by_name[name] = app
            self.by_name.setdefault(f"{meta.get('namespace')}/{name}", app)
            dest = str(((app.get("spec") or {}).get("destination") or {}).get("name") or "")
            for entry in (app.get("status") or {}).get("resources") or []:
                key = ResourceKey(
                    str(entry.get("group") or ""),
                    str(entry.get("kind") or ""),
                    entry.get("namespace") or None,
                    str(entry.get("name") or ""),
                )
                self.by_object[(dest, key)] = (name, entry)

    def tracking(self, cluster: str, key: ResourceKey, live: Json | None) -> Tracking | None:
        named = tracked_by(live)
        listed = self.by_object.get((cluster, key))
        name = named or (listed[0] if listed else None)
        if name is None:
            return None
        app = self.by_name.get(name)
        if app is None:
            return Tracking(name, None, None, False, False)
        entry = listed[1] if listed and listed[0] == (app.get("metadata") or {}).get("name") else {}
        automated = ((app.get("spec") or {}).get("syncPolicy") or {}).get("automated")
        auto = automated if isinstance(automated, dict) else None  # `automated: {}` is on
        return Tracking(
            name,
            str(((app.get("status") or {}).get("sync") or {}).get("status") or "Unknown"),
            entry.get("status"),
            bool(entry.get("requiresPruning")),
            auto is not None and auto.get("enabled") is not False and bool(auto.get("selfHeal")),
        )


def key_of_finding(finding: Finding) -> ResourceKey:
    """The key of the object a finding is about, as the live objects are keyed."""
    return ResourceKey(
        group_of(finding.api_version or ""),
        finding.kind or "",
        finding.namespace,
        finding.name or "",
    )


def name_applications(
    findings: list[Finding], live: t.Mapping[str, t.Mapping[ResourceKey, Json]], apps: Applications
) -> None:
    """Add the Application, its sync status and whether Argo CD heals it to drift findings."""
    for finding in findings:
        if not (finding.cluster and finding.kind and finding.name and finding.change):
            continue
        key = key_of_finding(finding)
        found = apps.tracking(finding.cluster, key, live.get(finding.cluster, {}).get(key))
        if found is None:
            continue
        finding.extra["argocd"] = found.to_json()
        finding.message += f"; {found.sentence()}"


def release_drift(profile: ClusterProfile, running: Running | None) -> list[Finding]:
    """argocd-version-differs when the cluster runs another Argo CD release than its profile's
    argocd.version (naming none: the pinned one its folders are rendered as)."""
    if running is None or running.version is None:
        return []
    named = argocd.normal(profile.argocd_version or "")
    assumed = named or tools.argocd_release()
    if assumed == running.version:
        return []
    said = (
        f"its profile's argocd.version is {named}"
        if named
        else f"its profile names no argocd.version, so the pinned Argo CD {assumed} is assumed"
    )
    renders = {tool: (tools.wanted(tool, assumed)[0], tools.wanted(tool, running.version)[0])
               for tool in ("kustomize", "helm")}  # fmt: skip
    changed = [f"{tool} {want} where it runs {runs}" for tool, (want, runs) in renders.items()
               if want != runs]  # fmt: skip
    effect = (
        f"its folders are rendered with {' and '.join(changed)}"
        if changed
        else "both run the same kustomize and helm, so the renders are the same"
    )
    return [
        Finding(
            ARGOCD_VERSION_DIFFERS,
            f"cluster {profile.name} runs Argo CD {running.version} ({running.said}), but "
            f"{said}: {effect}. Set argocd.version: {running.version} in {profile.file}",
            cluster=profile.name,
            file=profile.file,
            line=1,
            extra={"argocd": {"profile": named, "running": running.version}},
        )
    ]


def release_unread(profile: ClusterProfile, running: Running) -> str:
    """What drift says when the Argo CD release running could not be read."""
    named = profile.argocd_version or f"none: the pinned {tools.argocd_release()} is assumed"
    return f"its Argo CD release is not checked ({running.said}); its profile's is {named}"
