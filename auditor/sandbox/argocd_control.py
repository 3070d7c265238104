"""Watch and drive the sandbox's running Argo CD (sandbox/argocd.py starts it) as a person
would: its Applications and their sync and health, a refresh, waiting for a state, a sync
window that holds automated syncs (a change freeze), terminating a sync, a scratch commit pushed
to the served repository, and the daemons' memory. The CLI, the demo, the benchmark and the
tests use these."""

from __future__ import annotations

import contextlib
import time
import typing as t
from pathlib import Path

from auditor.errors import ClusterAccessError, ConfigError, SandboxError
from auditor.k8s.objects import Json
from auditor.repo import gitsource
from auditor.sandbox.argocd import API, BRANCH, DAEMONS, MANAGER, NAMESPACE, ArgoState

if t.TYPE_CHECKING:
    from auditor.sandbox.controlplane import Sandbox

REFRESH = "argocd.argoproj.io/refresh"  # removed by the controller once it has compared
NUDGE = 15.0  # seconds before an Application never compared is asked to refresh


def applications(host: Sandbox) -> dict[str, Json]:
    return {a["metadata"]["name"]: a for a in host.connect().list(API, "Application")}


def destination(app: Json) -> str:
    return str(((app.get("spec") or {}).get("destination") or {}).get("name") or "")


def sync_status(app: Json) -> tuple[str, str]:
    status = app.get("status") or {}
    return (
        str((status.get("sync") or {}).get("status") or "Unknown"),
        str((status.get("health") or {}).get("status") or "Unknown"),
    )


def refresh(host: Sandbox, name: str, kind: str = "normal") -> None:
    """Ask the controller to compare an Application again now (`hard`: regenerate manifests)."""
    host.connect().patch(
        API,
        "Application",
        name,
        {"metadata": {"annotations": {REFRESH: kind}}},
        namespace=NAMESPACE,
        manager=MANAGER,
    )


def compare_now(host: Sandbox, names: t.Collection[str], timeout: float = 120) -> dict[str, Json]:
    """Refresh `names` and return the Applications once each has compared after this call."""
    # The controller takes the refresh annotation off when it compares for it: gone, the
    # comparison is one we asked for (reconciledAt, in whole seconds, is not before the ask).
    asked = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for name in names:
        refresh(host, name)

    def done(apps: dict[str, Json]) -> bool:
        return all(
            name in apps
            and REFRESH not in (apps[name]["metadata"].get("annotations") or {})
            and str((apps[name].get("status") or {}).get("reconciledAt", "")) >= asked
            for name in names
        )

    return wait_for(host, done, timeout=timeout, what="a comparison after the change")


def hold_syncs(host: Sandbox, project: str) -> None:
    """A `deny` sync window on an AppProject, as in a change freeze: Argo CD still compares
    its Applications but runs no automated sync (selfHeal included) until `release_syncs`."""
    window = {"kind": "deny", "schedule": "* * * * *", "duration": "24h", "applications": ["*"]}
    _windows(host, project, [window])


def release_syncs(host: Sandbox, project: str) -> None:
    _windows(host, project, None)


def _windows(host: Sandbox, project: str, windows: list[Json] | None) -> None:
    patch = {"spec": {"syncWindows": windows}}
    host.connect().patch(API, "AppProject", project, patch, namespace=NAMESPACE, manager=MANAGER)


def terminate_operation(host: Sandbox, name: str) -> None:
    """Stop an Application's running sync (its automated retries too), as `argocd app
    terminate-op` does: the Application's status is no subresource, so a patch sets it."""
    host.connect().patch(
        API,
        "Application",
        name,
        {"status": {"operationState": {"phase": "Terminating"}}},
        namespace=NAMESPACE,
        manager=MANAGER,
    )


def refresh_generators(host: Sandbox) -> None:
    """Make the ApplicationSet controller read the repository again (a new folder, say)."""
    admin = host.connect()
    for appset in admin.list(API, "ApplicationSet"):
        admin.patch(
            API,
            "ApplicationSet",
            appset["metadata"]["name"],
            {"metadata": {"annotations": {"argocd.argoproj.io/application-set-refresh": "true"}}},
            namespace=NAMESPACE,
            manager=MANAGER,
        )


def wait_for(
    host: Sandbox,
    done: t.Callable[[dict[str, Json]], bool],
    *,
    timeout: float,
    what: str,
) -> dict[str, Json]:
    """Poll the Applications until `done` holds; SandboxError naming each one's state if not.

    An Application the controller first met before its AppProject reached the controller's
    cache stays Unknown, without a comparison, for good: every NUDGE seconds such ones are asked
    to refresh, as a user would press Refresh."""
    deadline = time.monotonic() + timeout
    nudged = time.monotonic()
    apps: dict[str, Json] = {}
    while time.monotonic() < deadline:
        try:
            apps = applications(host)
        except ClusterAccessError:
            apps = {}
        if done(apps):
            return apps
        if time.monotonic() - nudged > NUDGE:
            nudged = time.monotonic()
            for name, app in apps.items():
                if sync_status(app)[0] == "Unknown":
                    with contextlib.suppress(ClusterAccessError):
                        refresh(host, name)
        time.sleep(1)
    states = ", ".join(f"{n}: {'/'.join(sync_status(a))}" for n, a in sorted(apps.items()))
    raise SandboxError(f"Argo CD: {what} not reached in {timeout:.0f}s ({states or 'no apps'})")


def memory_mib(host: Sandbox) -> dict[str, float]:
    """Peak resident memory (VmHWM) of each Argo CD process and Redis, in MiB."""
    st = host.state()
    out: dict[str, float] = {}
    for name in DAEMONS:
        pid = (st.pids if st else {}).get(name)
        try:
            status = Path(f"/proc/{pid}/status").read_text() if pid else ""
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                out[name] = round(int(line.split()[1]) / 1024, 1)
    return out


def clone(served: ArgoState, work: Path) -> Path:
    """A working clone of the served repository at `work` (made once), up to date."""
    try:
        return gitsource.clone_or_pull(served.repo, work, BRANCH)
    except ConfigError as exc:
        raise SandboxError(str(exc)) from exc


def push(served: ArgoState, work: Path, message: str, change: t.Callable[[Path], None]) -> str:
    """Commit `change` (made in a clone at `work`) to the served repository's main; return it.

    Tests and the demo use this for scratch commits: the repository itself is never touched."""
    clone(served, work)
    change(work)
    try:
        return gitsource.commit_and_push(work, message, BRANCH)
    except ConfigError as exc:
        raise SandboxError(str(exc)) from exc
