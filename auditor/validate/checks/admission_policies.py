"""The admission policies committed for a cluster are what its profiles and LocalQueues make now.

The API server enforces the committed file, so a profile or a LocalQueue changed without
`kueue-gitops generate policies` would leave the cluster holding yesterday's boundaries.
"""

from __future__ import annotations

import difflib
import typing as t

from auditor import rules
from auditor.kueue import admission
from auditor.model import Finding, Resource
from auditor.repo import boundaries
from auditor.validate.checks import protocol

if t.TYPE_CHECKING:
    from collections.abc import Iterator

    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
ADMISSION_POLICIES_STALE = RULES["admission-policies-stale"]

ID = "admission-policies"


def project(resource: Resource) -> t.Hashable | None:
    """What the policies are made of (boundaries.boundaries): a LocalQueue's namespace and
    name, a Namespace's name and labels; anything of other kinds."""
    meta = resource.body.get("metadata")
    if resource.kind == "LocalQueue":
        return resource.kind, resource.namespace, resource.name
    if resource.kind == "Namespace" and isinstance(meta, dict):
        return resource.kind, resource.api_version, resource.name, repr(meta.get("labels"))
    return None


# Made of every LocalQueue and Namespace: run again whole, unless an edit leaves what it reads
# of them (a LocalQueue's ClusterQueue) as it was (protocol.Rerun).
RERUN = protocol.Rerun(project=project)
FIX = "run `kueue-gitops generate policies` and commit the result"


def _fix(ctx: CheckContext) -> str:
    """The fix, with what the regenerated policies will do (deny, or only warn) and the
    reviewed step that changes that: an adopter is led to the rollout, not to Deny blind."""
    return f"{FIX}; {boundaries.enforcement_note(ctx.cluster)}"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.unrendered:
        return  # what the policies are made from, or the policies, may be what did not render
    # The committed policies: wherever the layout syncs them, found by kind and label.
    path = boundaries.policy_file(ctx.cluster, ctx.of_kind(admission.POLICY))
    # what boundaries() reads of the objects: LocalQueues, Namespaces and the ConfigMap
    objects = ctx.of_kind("LocalQueue", "Namespace", "ConfigMap")
    expected = boundaries.expected(ctx.cluster, ctx.tenants, objects)
    try:
        current = ctx.repo.tree.read(path).decode("utf-8", errors="replace")
    except (OSError, KeyError):
        synced = (
            ""
            if boundaries.convention(ctx.cluster)
            else f" nor any of its ValidatingAdmissionPolicies among what is synced to "
            f"{ctx.cluster.name} (sync the file it writes there)"
        )
        yield Finding(
            rule=ADMISSION_POLICIES_STALE,
            file=ctx.cluster.file,
            line=1,
            message=f"there is no {path}{synced}, so the API server holds none of this cluster's "
            f"tenant boundaries; {_fix(ctx)}",
        )
        return
    if current == expected:
        return
    have, want = current.splitlines(), expected.splitlines()
    line = next((i for i, (a, b) in enumerate(zip(have, want, strict=False), 1) if a != b), None)
    diff = "".join(
        f"\n  {d}" for d in difflib.unified_diff(have, want, path, "generated", n=0, lineterm="")
    )
    yield Finding(
        rule=ADMISSION_POLICIES_STALE,
        file=path,
        line=line or min(len(have), len(want)) + 1,
        message=f"{path} differs from what the profiles, LocalQueues and Kueue's "
        f"Configuration generate, so the cluster would enforce stale boundaries; {_fix(ctx)}:"
        f"{diff}",
    )
