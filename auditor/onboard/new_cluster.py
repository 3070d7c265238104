"""`cluster add`: a new cluster made from one the repository has (`--like`): its platform files,
schemas and Kueue Configuration, without the ClusterQueues its tenants bring; the platform's
AppProject given the same destinations on it."""

from __future__ import annotations

import re
from pathlib import Path

from auditor.errors import ConfigError
from auditor.onboard import start
from auditor.onboard.files import DNS_LABEL, PROJECTS, Plan, modeline
from auditor.repo.layout import Repository
from auditor.repo.profiles import PROFILE_FILE
from auditor.repo.root import CLUSTERS

SCHEMAS = "schemas"


SKIPPED = ("clusterqueues.yaml", "admission-policies.yaml")  # the tenants' and the generated


def cluster(repo: Repository, name: str, like: str, context: str | None) -> Plan:
    """A cluster `name` made from cluster `like`: the same platform files and schemas, no
    ClusterQueues; its profile names `context` (default: its own name), and the platform's
    AppProject (argocd/projects.yaml) gets the same destinations on it."""
    if not DNS_LABEL.fullmatch(name):
        raise ConfigError(f"cluster name {name!r} must be a DNS label (Argo CD and kubeconfigs)")
    if name in repo.clusters:
        raise ConfigError(f"cluster {name} exists already ({CLUSTERS}/{name}/)")
    repo.cluster(like)
    root = repo.root
    if root is None:
        raise ConfigError("cluster add writes into a working tree; pass --repo DIR")
    schemas = root / SCHEMAS / like  # none committed: both are judged by the package's
    if (root / SCHEMAS / name).exists():
        raise ConfigError(f"{SCHEMAS}/{name}/ exists already: nothing was written")
    source = root / CLUSTERS / like
    create: dict[str, str] = {}
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        rel = path.relative_to(source).as_posix()
        if rel in SKIPPED:
            continue
        text = path.read_text()
        if rel == PROFILE_FILE:
            text = _renamed(text, like, name, context or name)
        else:  # a quoted cluster name is a label value naming it (alerts select cluster="C")
            text = re.sub(rf"([\"']){re.escape(like)}\1", rf"\g<1>{name}\1", text)
        create[f"{CLUSTERS}/{name}/{rel}"] = text
    # The template's committed schemas, until `schemas fetch --cluster NAME` reads the new
    # cluster's (none: both are judged by the package's, catalog.find).
    for path in sorted(p for p in schemas.rglob("*") if p.is_file()):
        create[f"{SCHEMAS}/{name}/{path.relative_to(schemas).as_posix()}"] = path.read_text()
    return Plan(create, {})


def _renamed(profile: str, like: str, name: str, context: str) -> str:
    """`like`'s profile text for `name`: its name and context replaced, comments kept."""
    text = re.sub(rf"(?m)^(  name: ){re.escape(like)}\b", rf"\g<1>{name}", profile, count=1)
    text = re.sub(r"(?m)^(  context: )\S+", rf"\g<1>{context}", text, count=1)
    return text if text.startswith("# yaml-language-server:") else modeline("clusterprofile") + text


def with_destinations(root: Path, name: str, like: str | None = None) -> dict[str, str]:
    """argocd/projects.yaml with destinations for `name`: `like`'s repeated, or the template's
    ({}: no such file, or no destination to place them after)."""
    path = root / PROJECTS
    if not path.is_file():
        return {}
    text = path.read_text()
    who = re.escape(like) if like else r"[^\s#]+"
    entry = re.compile(rf"(?m)^(\s+- name: ){who}(\s*#[^\n]*)?\n(\s+namespace: [^\n]*\n)")
    found = list(entry.finditer(text))
    if not found:
        return {}
    if like:
        added = "".join(f"{m[1]}{name}\n{m[3]}" for m in found)
    else:
        added = start.render("argocd/destinations.yaml", {"cluster": name})
    end = found[-1].end()
    return {PROJECTS: text[:end] + added + text[end:]}
