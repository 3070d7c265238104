"""Argo CD's diff beside `kueue-gitops drift`, on one cluster synced by Argo CD, state by state.

One run: start a sandbox named gpu-prod, run the pinned Argo CD in it (sandbox/argocd.py),
let the committed ApplicationSets generate and sync gpu-prod's Applications, then hold every
automated sync (a `deny` sync window on each AppProject, so Argo CD compares but never heals;
the committed Applications have selfHeal on). For each state of bench/argocd/states.py: make the
change through the API, ask Argo CD to compare again (a refresh) and read each Application's
sync status and the resources it lists as OutOfSync, run our drift audit, undo the change, and
check both are back to clean. Prints a Markdown table and writes bench/out/argocd.json.

    .venv/bin/python bench/argocd/run.py
"""

from __future__ import annotations

import datetime
import json
import os
import shutil
import sys
import tempfile
import time
import typing as t
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.drift import audit  # noqa: E402
from auditor.repo.layout import Repository  # noqa: E402
from auditor.sandbox import Sandbox, argocd, argocd_control, ensure_built  # noqa: E402
from bench.argocd.states import STATES  # noqa: E402

CLUSTER = "gpu-prod"
APPS = ("gpu-prod-platform", "team-a-gpu-prod", "team-b-gpu-prod")
Json = dict[str, t.Any]


def compared(box: Sandbox) -> dict[str, Json]:
    return argocd_control.compare_now(box, APPS)


def argo_verdict(apps: dict[str, Json]) -> Json:
    out_of_sync = sorted(
        f"{r['kind']}/{r['name']}"
        for a in APPS
        for r in apps[a]["status"].get("resources") or []
        if r.get("status") == "OutOfSync"
    )
    statuses = {a: argocd_control.sync_status(apps[a])[0] for a in APPS}
    overall = "OutOfSync" if "OutOfSync" in statuses.values() else "Synced"
    return {"status": overall, "apps": statuses, "outOfSync": out_of_sync}


def our_verdict(box: Sandbox) -> Json:
    started = time.monotonic()
    report = audit.audit(Repository.open(ROOT), [CLUSTER], lambda _p: box.connect())
    found = [f"{f.rule.id} {f.kind}/{f.name} {f.path or ''}".strip() for f in report.findings]
    took = round(time.monotonic() - started, 2)
    return {"exit": report.exit_code, "seconds": took, "findings": sorted(found)}


def synced(apps: dict[str, Json]) -> bool:
    return all(argocd_control.sync_status(apps.get(a, {})) == ("Synced", "Healthy") for a in APPS)


def main() -> int:
    toolchain = ensure_built(ROOT / "testenv", log=print)
    root = Path(tempfile.mkdtemp(prefix="bench-argocd-"))
    box = Sandbox(CLUSTER, root=root)
    box.up(toolchain, log=print)
    rows: list[Json] = []
    try:
        repo = Repository.open(ROOT)
        served = argocd.start(box, {CLUSTER: box}, repo, toolchain.testenv, log=print)
        started = time.monotonic()
        argocd_control.wait_for(box, synced, timeout=300, what="gpu-prod's Applications synced")
        first_sync = round(time.monotonic() - started, 1)
        for project in ("kueue-platform", "tenant-team-a", "tenant-team-b"):
            argocd_control.hold_syncs(box, project)
        baseline = {"argo": argo_verdict(compared(box)), "ours": our_verdict(box)}
        for state in STATES:
            undo = state.apply(box.connect())
            argo, ours = argo_verdict(compared(box)), our_verdict(box)
            undo()
            back = argo_verdict(compared(box))["status"] == "Synced"
            undone = back and our_verdict(box)["exit"] == 0
            rows.append({"state": state.name, "what": state.what, "equal": state.equal,
                         "argo": argo, "ours": ours, "undone": undone})  # fmt: skip
            print(f"{state.name}: Argo CD {argo['status']}, ours exit {ours['exit']}")
        memory = argocd_control.memory_mib(box)
    finally:
        box.down()
        shutil.rmtree(root, ignore_errors=True)
    result = {
        "date": datetime.date.today().isoformat(),
        "commit": served.commit,
        "versions": {**toolchain.versions, "argo-cd": "v3.5.7"},
        "loadavg": os.getloadavg(),
        "firstSyncSeconds": first_sync,
        "baseline": baseline,
        "states": rows,
        "peakMemoryMiB": memory,
    }
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "argocd.json").write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    return 0


def table(result: Json) -> str:
    lines = [
        "| state | same for Kueue? | Argo CD | kueue-gitops drift |",
        "|---|---|---|---|",
    ]
    for row in result["states"]:
        argo = row["argo"]
        seen = argo["status"] + (f" ({', '.join(argo['outOfSync'])})" if argo["outOfSync"] else "")
        ours = "clean" if row["ours"]["exit"] == 0 else "; ".join(row["ours"]["findings"])
        lines.append(f"| {row['what']} | {'yes' if row['equal'] else 'no'} | {seen} | {ours} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
