"""Schema drift: live CRDs against schemas/<cluster>/index.json."""

from __future__ import annotations

import copy
import json
import typing as t
from pathlib import Path

from auditor.drift import crds
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.fetch import crd_fingerprint


def crd(name: str, group: str, served: tuple[str, ...] = ("v1beta1", "v1beta2")) -> t.Any:
    versions = [{"name": v, "served": True, "storage": v == served[-1],
                 "schema": {"openAPIV3Schema": {"type": "object"}}} for v in served]  # fmt: skip
    return {"metadata": {"name": f"{name}.{group}"},
            "spec": {"group": group, "names": {"kind": name.title()}, "scope": "Cluster",
                     "versions": versions}}  # fmt: skip


def catalog(tmp_path: Path, *recorded: t.Any) -> SchemaCatalog:
    kinds = {
        f"{c['spec']['group']}/{c['spec']['names']['kind']}": {
            "crd": c["metadata"]["name"],
            "group": c["spec"]["group"],
            "kind": c["spec"]["names"]["kind"],
            "served": [v["name"] for v in c["spec"]["versions"]],
            "hash": crd_fingerprint(c),
        }
        for c in recorded
    }
    (tmp_path / "schemas" / "c").mkdir(parents=True)
    (tmp_path / "schemas" / "c" / "index.json").write_text(json.dumps({"kinds": kinds}))
    return SchemaCatalog(tmp_path / "schemas", "c")


def found(cat: SchemaCatalog, live: list[t.Any]) -> list[tuple[str | None, str | None, str]]:
    return [(f.change, f.name, f.message) for f in crds.drift("c", cat, live)]


def test_same_crds_are_clean_and_foreign_groups_are_ignored(tmp_path: Path) -> None:
    cq = crd("clusterqueues", "kueue.x-k8s.io")
    assert found(catalog(tmp_path, cq), [cq, crd("widgets", "example.com")]) == []


def test_each_kind_of_schema_drift(tmp_path: Path) -> None:
    cq, lq, rf = (crd(n, "kueue.x-k8s.io") for n in ("clusterqueues", "localqueues", "flavors"))
    cat = catalog(tmp_path, cq, lq)
    changed = copy.deepcopy(cq)
    changed["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["required"] = ["spec"]
    fewer = crd("localqueues", "kueue.x-k8s.io", ("v1beta2",))
    assert [(c, n) for c, n, _ in found(cat, [changed, fewer, rf])] == [
        ("modified", "clusterqueues.kueue.x-k8s.io"),
        ("unmanaged", "flavors.kueue.x-k8s.io"),
        ("modified", "localqueues.kueue.x-k8s.io"),
    ]
    [(_, _, message)] = found(cat, [cq])
    assert "localqueues.kueue.x-k8s.io is in schemas/ but not installed" in message
