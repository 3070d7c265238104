"""The stop-admission runbook: hold a ClusterQueue through the repository, and resume it.

`hold` sets `spec.stopPolicy: Hold` (no new admissions; admitted Workloads run to completion) in
the ClusterQueue's file for each cluster that has it, on a new branch with one commit. The edit
is one line: ruamel.yaml's round-trip parser finds the field and the spec's indentation, the line
is written in place, and a re-parse proves nothing else moved, so every comment and all the
formatting stay as they were. A line `hold` adds carries a marker, so `resume` removes exactly
that line and leaves the file byte-for-byte as it was before the hold. Files are read and written
as bytes: CRLF, mixed line endings, a byte-order mark and a missing final newline all stay.

With `--apply`, every cluster is first asked whether it can be patched (the ClusterQueue is
read, and a SelfSubjectAccessReview asks for `patch`); only then is each patched. If a later
patch fails, the earlier ones are undone, and if an undo fails too, the error names the
clusters left held live and the commands that finish the job. Nothing is committed unless
every live patch held.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from auditor.errors import ClusterAccessError, ConfigError
from auditor.kueue import stop_policy as kueue_stop_policy
from auditor.kueue.stop_policy import HOLD, STOPPED
from auditor.model import Finding
from auditor.repo import gitsource
from auditor.repo.layout import Repository
from auditor.repo.root import CLUSTERS

BOM = "\ufeff"
# The line breaks of YAML (ruamel counts lines by them): a lone CR is one too.
_LINE = re.compile(
    r"[^\r\n\x85\u2028\u2029]*(?:\r\n|[\r\n\x85\u2028\u2029])|[^\r\n\x85\u2028\u2029]+$"
)

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
class HoldOutcome:
    """What a hold or resume did: the section of its report (auditor/report/runbook.py shows
    it); refused, what stopped a resume before anything was patched or committed."""

    action: str
    cluster_queue: str
    changed: list[Target] = field(default_factory=list)
    unchanged: list[tuple[Target, str]] = field(default_factory=list)  # and why
    applied: list[str] = field(default_factory=list)  # clusters patched live
    branch: str | None = None
    commit: str | None = None
    forced: bool = False  # resumed with --force: without the folder's server-side dry-run
    checked: list[str] = field(default_factory=list)  # clusters whose folder passed the dry-run
    refused: list[Finding] = field(default_factory=list)

    def to_json(self) -> dict[str, t.Any]:
        def target(x: Target) -> dict[str, t.Any]:
            return {"cluster": x.cluster, "file": x.file, "line": x.line}

        return {
            "runbook": {
                "action": self.action,
                "clusterQueue": self.cluster_queue,
                "changed": [target(x) for x in self.changed],
                "unchanged": [{**target(x), "why": why} for x, why in self.unchanged],
                "applied": self.applied,
                "dryRunPassed": self.checked,
                "forced": self.forced,
                "branch": self.branch,
                "commit": self.commit,
            }
        }


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


def _lines(text: str) -> list[str]:
    """`text` in lines with their own endings, split where YAML (and ruamel) breaks lines."""
    return _LINE.findall(text)


def set_stop_policy(text: str, file: str, name: str, policy: str | None) -> str:
    """`text` with ClusterQueue `name`'s stopPolicy set to `policy` (None: resumed), one line.

    A byte-order mark, every line's ending and the (missing) final newline are kept.
    """
    if text.startswith(BOM):
        return BOM + set_stop_policy(text[1:], file, name, policy)
    spec, key_line = _spec_of(text, file, name)
    lines = _lines(text)
    if kueue_stop_policy.FIELD in spec:
        row = spec.lc.key(kueue_stop_policy.FIELD)[0]
        if policy is None and MARKER in lines[row]:
            del lines[row]  # the line our hold added
        else:
            value = policy or "None"
            lines[row] = re.sub(
                r"^(\s*stopPolicy:\s*)(['\"]?)[A-Za-z]*\2", rf"\g<1>\g<2>{value}\g<2>", lines[row]
            )
    elif policy is not None:
        # right below `spec:`, so no comment is parted from the key it describes; with the
        # line ending that line has (a file may mix them)
        spec_line = lines[key_line]
        newline = spec_line[len(spec_line.rstrip("\r\n\x85\u2028\u2029")) :] or "\n"
        lines.insert(key_line + 1, f"{' ' * spec.lc.col}stopPolicy: {policy}  {MARKER}{newline}")
    changed = "".join(lines)
    _verify(text, changed, file, name, policy)
    return changed


def _verify(before: str, after: str, file: str, name: str, policy: str | None) -> None:
    """Re-parse: the stopPolicy is what was asked, and nothing else in the file changed."""

    def without_stop_policy(text: str) -> list[t.Any]:
        return [
            kueue_stop_policy.without(doc)
            if isinstance(doc, dict) and (doc.get("metadata") or {}).get("name") == name
            else doc
            for doc in _documents(text, file)
        ]

    got = kueue_stop_policy.policy_of({"spec": _spec_of(after, file, name)[0]})
    ok = got == policy if policy else not kueue_stop_policy.holds(got)
    if not ok or without_stop_policy(before) != without_stop_policy(after):
        raise ConfigError(f"{file}: could not set stopPolicy of {name} in one line; edit by hand")


def stop_policy(text: str, file: str, name: str) -> str | None:
    value = kueue_stop_policy.policy_of({"spec": _spec_of(text.removeprefix(BOM), file, name)[0]})
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
    before_change: t.Callable[[HoldOutcome], list[Finding]] | None = None,
) -> HoldOutcome:
    """Hold (or resume) `cluster_queue` in the repository, and live on the `live` clusters.

    `before_change` runs once the edits are known, before anything is patched or committed
    (resume's dry-run of the cluster's folder); what it finds stops the run (`refused`)."""
    root = repo.root
    if root is None:
        raise ConfigError("hold and resume change files: run them on a working tree")
    action = "hold" if hold else "resume"
    outcome = HoldOutcome(action, cluster_queue)
    edits: dict[str, str] = {}
    for target in targets(repo, cluster_queue, cluster):
        text = edits.get(target.file) or _read(root / target.file, target.file)
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
    if before_change is not None and outcome.changed:
        outcome.refused = before_change(outcome)
        if outcome.refused:
            return outcome
    if live:
        outcome.applied = apply_live(repo, cluster_queue, HOLD if hold else None, live)
    if edits:
        stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%d-%H%M%S")
        outcome.branch = branch or f"{action}/{cluster_queue}-{stamp}"
        outcome.commit = gitsource.commit_on_new_branch(
            root,
            outcome.branch,
            {path: text.encode("utf-8") for path, text in edits.items()},  # BOM and all
            commit_message(outcome),
        )
    return outcome


def _read(path: Path, file: str) -> str:
    try:
        return path.read_bytes().decode("utf-8")  # bytes: no newline is translated
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot read it as UTF-8 ({exc})") from exc


# -- the live patch, on every cluster or none -------------------------------------------------


def apply_live(
    repo: Repository, cluster_queue: str, policy: str | None, live: t.Mapping[str, KubeCluster]
) -> list[str]:
    """Set the live stopPolicy on every cluster in `live`, or on none; the clusters patched.

    First every cluster is read and asked for `patch`; any problem there stops the run with
    nothing changed. A patch that then fails undoes the ones before it.
    """
    api = {name: repo.cluster(name).kueue_api for name in live}
    before: dict[str, t.Any] = {}
    problems: list[str] = []
    for name, cluster in live.items():
        try:
            queue = cluster.get(api[name], "ClusterQueue", cluster_queue)
            denied = cluster.can_i("patch", api[name], "ClusterQueue", cluster_queue)
        except ClusterAccessError as exc:
            problems.append(str(exc))
            continue
        if denied:
            problems.append(f"cluster {name}: may not patch ClusterQueue {cluster_queue}: {denied}")
        before[name] = kueue_stop_policy.policy_of(queue)
    if problems:
        raise ClusterAccessError(
            f"{'; '.join(problems)} (checked before patching: nothing patched, nothing committed)"
        )
    done: list[str] = []
    for name, cluster in live.items():
        try:
            cluster.patch(
                api[name],
                "ClusterQueue",
                cluster_queue,
                kueue_stop_policy.patch(policy),
                manager=RUNBOOK_MANAGER,
            )
        except ClusterAccessError as exc:
            raise ClusterAccessError(
                f"{exc} ({_undo(cluster_queue, policy, done, live, api, before)})",
                cluster=exc.cluster,
                action=exc.action,
            ) from exc
        done.append(name)
    return done


def _undo(
    cluster_queue: str,
    policy: str | None,
    done: list[str],
    live: t.Mapping[str, KubeCluster],
    api: dict[str, str],
    before: dict[str, t.Any],
) -> str:
    """Put back the stopPolicy of the clusters in `done`; say what state that leaves."""
    if not done:
        return "nothing patched, nothing committed"
    left: list[str] = []
    for name in reversed(done):
        try:
            live[name].patch(
                api[name],
                "ClusterQueue",
                cluster_queue,
                kueue_stop_policy.patch(before[name]),
                manager=RUNBOOK_MANAGER,
            )
        except ClusterAccessError:
            left.append(name)
    undone = [n for n in done if n not in left]
    said = f"undone on {', '.join(undone)}; " if undone else ""
    if not left:
        return f"{said}nothing is changed live and nothing committed"
    verb, back = ("hold", "resume") if policy else ("resume", "hold")
    state = f"stopPolicy {policy}" if policy else "stopPolicy removed"
    put_back = "; ".join(
        f"`kueue-gitops {back} {cluster_queue} --cluster {name} --apply`" for name in sorted(left)
    )
    return (
        f"{said}the undo failed, so {state} is STILL LIVE on {', '.join(sorted(left))}; nothing "
        f"committed. To finish: `kueue-gitops {verb} {cluster_queue} --apply` again once every "
        f"cluster answers; or to put it back: {put_back} (with the same kubeconfig options)"
    )


def commit_message(outcome: HoldOutcome) -> str:
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
    if outcome.forced:
        lines += [
            "",
            "Resumed with --force: the server-side dry-run of the cluster's folder, which the "
            "runbook requires before resuming, was not run or did not pass.",
        ]
    if outcome.applied:
        lines += [
            "",
            f"Already applied to the live ClusterQueue on {', '.join(outcome.applied)} "
            f"(`kueue-gitops {outcome.action} --apply`), before Argo CD syncs this commit.",
        ]
    return "\n".join(lines) + "\n"
