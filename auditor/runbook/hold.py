"""The stop-admission runbook: hold a ClusterQueue through the repository, and resume it.

`hold` sets `spec.stopPolicy: Hold` (no new admissions; admitted Workloads run to completion) in
the ClusterQueue's file for each cluster that has it, on a new branch with one commit. The edit
is one line: ruamel.yaml's round-trip parser finds the field and the spec's indentation, the line
is written in place, and a re-parse proves nothing else moved, so every comment and all the
formatting stay as they were. A line `hold` adds carries a marker, so `resume` removes exactly
that line and leaves the file byte-for-byte as it was before the hold.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import typing as t
from dataclasses import dataclass, field

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from auditor.errors import ClusterAccessError, ConfigError
from auditor.kueue import stop_policy as policies
from auditor.kueue.stop_policy import HOLD, STOPPED
from auditor.repo import gitsource
from auditor.repo.layout import CLUSTERS, Repository

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

MARKER = "# kueue-gitops hold; `kueue-gitops resume` removes this line"
RUNBOOK_MANAGER = "kueue-gitops-runbook"


@dataclass(frozen=True)
class Target:
    """One ClusterQueue document in one file, for one cluster."""

    cluster: str
    file: str
    line: int  # 1-based line of the document's `kind:`


@dataclass
class Outcome:
    """What a hold or resume did; the CLI prints it."""

    action: str
    cluster_queue: str
    changed: list[Target] = field(default_factory=list)
    unchanged: list[tuple[Target, str]] = field(default_factory=list)  # and why
    applied: list[str] = field(default_factory=list)  # clusters patched live
    branch: str | None = None
    commit: str | None = None


def targets(repo: Repository, cluster_queue: str, cluster: str | None) -> list[Target]:
    """Every file under clusters/ that holds ClusterQueue `cluster_queue` (for `cluster`)."""
    clusters = [repo.cluster(cluster).name] if cluster else sorted(repo.clusters)
    loaded = repo.load(clusters)
    found = [
        Target(r.cluster or "", r.file, r.line)
        for r in loaded.resources
        if r.kind == "ClusterQueue" and r.name == cluster_queue and r.file.startswith(CLUSTERS)
    ]
    if not found:
        where = f"cluster {cluster}" if cluster else "any cluster"
        raise ConfigError(f"no ClusterQueue {cluster_queue!r} in {CLUSTERS}/ for {where}")
    return found


# -- the one-line edit ------------------------------------------------------------------------


def _yaml() -> YAML:
    return YAML(typ="rt")


def _documents(text: str, file: str) -> list[t.Any]:
    try:
        return list(_yaml().load_all(io.StringIO(text)))
    except YAMLError as exc:
        raise ConfigError(f"{file}: not valid YAML: {exc}") from exc


def _spec_of(text: str, file: str, name: str) -> tuple[CommentedMap, int]:
    """ClusterQueue `name`'s spec mapping, and the 0-based line of its `spec:` key."""
    for doc in _documents(text, file):
        if (
            isinstance(doc, CommentedMap)
            and doc.get("kind") == "ClusterQueue"
            and (doc.get("metadata") or {}).get("name") == name
        ):
            spec = doc.get("spec")
            # block style: the mapping starts on a line below `spec:` (flow `{...}` does not)
            key_line = doc.lc.key("spec")[0]
            if not isinstance(spec, CommentedMap) or spec.lc.line <= key_line:
                raise ConfigError(
                    f"{file}: ClusterQueue {name} has no block-style spec to edit; edit it by hand"
                )
            return spec, key_line
    raise ConfigError(f"{file}: no ClusterQueue {name}")


def set_stop_policy(text: str, file: str, name: str, policy: str | None) -> str:
    """`text` with ClusterQueue `name`'s stopPolicy set to `policy` (None: resumed), one line."""
    spec, key_line = _spec_of(text, file, name)
    lines = text.splitlines(keepends=True)
    if "stopPolicy" in spec:
        row = spec.lc.key("stopPolicy")[0]
        if policy is None and MARKER in lines[row]:
            del lines[row]  # the line our hold added
        else:
            value = policy or "None"
            lines[row] = re.sub(
                r"^(\s*stopPolicy:\s*)(['\"]?)[A-Za-z]*\2", rf"\g<1>\g<2>{value}\g<2>", lines[row]
            )
    elif policy is not None:
        # right below `spec:`, so no comment is parted from the key it describes
        newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
        lines.insert(key_line + 1, f"{' ' * spec.lc.col}stopPolicy: {policy}  {MARKER}{newline}")
    changed = "".join(lines)
    _verify(text, changed, file, name, policy)
    return changed


def _verify(before: str, after: str, file: str, name: str, policy: str | None) -> None:
    """Re-parse: the stopPolicy is what was asked, and nothing else in the file changed."""

    def without_stop_policy(text: str) -> list[t.Any]:
        docs = _documents(text, file)
        for doc in docs:
            if isinstance(doc, dict) and (doc.get("metadata") or {}).get("name") == name:
                (doc.get("spec") or {}).pop("stopPolicy", None)
        return docs

    got = _spec_of(after, file, name)[0].get("stopPolicy")
    ok = got == policy if policy else got in (None, "None")
    if not ok or without_stop_policy(before) != without_stop_policy(after):
        raise ConfigError(f"{file}: could not set stopPolicy of {name} in one line; edit by hand")


def stop_policy(text: str, file: str, name: str) -> str | None:
    value = _spec_of(text, file, name)[0].get("stopPolicy")
    return str(value) if value is not None else None


# -- the runbook ------------------------------------------------------------------------------


def run(
    repo: Repository,
    cluster_queue: str,
    *,
    hold: bool,
    cluster: str | None = None,
    live: t.Mapping[str, KubeCluster] | None = None,
    branch: str | None = None,
    now: dt.datetime | None = None,
) -> Outcome:
    """Hold (or resume) `cluster_queue` in the repository, and live on the `live` clusters."""
    root = repo.root
    if root is None:
        raise ConfigError("hold and resume change files: run them on a working tree")
    action = "hold" if hold else "resume"
    outcome = Outcome(action, cluster_queue)
    edits: dict[str, str] = {}
    for target in targets(repo, cluster_queue, cluster):
        text = edits.get(target.file) or (root / target.file).read_text(encoding="utf-8")
        now_policy = stop_policy(text, target.file, cluster_queue)
        if hold and now_policy in STOPPED:
            outcome.unchanged.append((target, f"already stopPolicy: {now_policy}"))
            continue
        if not hold and now_policy not in STOPPED:
            outcome.unchanged.append((target, "not held"))
            continue
        edits[target.file] = set_stop_policy(
            text, target.file, cluster_queue, HOLD if hold else None
        )
        outcome.changed.append(target)
    for name, cluster_client in (live or {}).items():
        # Stop (or restart) admission now, before Argo CD syncs the commit.
        try:
            cluster_client.patch(
                repo.cluster(name).kueue_api,
                "ClusterQueue",
                cluster_queue,
                policies.patch(HOLD if hold else None),
                manager=RUNBOOK_MANAGER,
            )
        except ClusterAccessError as exc:
            done = (
                f"already patched live on {', '.join(outcome.applied)}; " if outcome.applied else ""
            )
            raise ClusterAccessError(
                f"{exc} ({done}nothing committed)", cluster=exc.cluster, kind=exc.kind
            ) from exc
        outcome.applied.append(name)
    if edits:
        stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%d-%H%M%S")
        outcome.branch = branch or f"{action}/{cluster_queue}-{stamp}"
        outcome.commit = gitsource.commit_on_new_branch(
            root,
            outcome.branch,
            {path: text.encode("utf-8") for path, text in edits.items()},
            commit_message(outcome),
        )
    return outcome


def commit_message(outcome: Outcome) -> str:
    clusters = ", ".join(sorted({t.cluster for t in outcome.changed}))
    if outcome.action == "hold":
        head = f"hold: stop admission to ClusterQueue {outcome.cluster_queue} on {clusters}"
        body = (
            "Sets spec.stopPolicy: Hold. No new Workloads are admitted; admitted ones run to "
            "completion. Nothing is deleted."
        )
    else:
        head = f"resume: admission to ClusterQueue {outcome.cluster_queue} on {clusters}"
        body = "Removes the hold: spec.stopPolicy goes back to None (the default)."
    lines = [head, "", body]
    if outcome.applied:
        lines += [
            "",
            f"Already applied to the live ClusterQueue on {', '.join(outcome.applied)} "
            f"(`kueue-gitops {outcome.action} --apply`), before Argo CD syncs this commit.",
        ]
    return "\n".join(lines) + "\n"
