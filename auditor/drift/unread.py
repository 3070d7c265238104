"""Live objects the repository may define in a file that could not be read: "not compared".

A manifest file that does not load (a list at its top level, a byte that is not UTF-8, broken
YAML) has its own finding at its line; the objects it defines are unknown to the comparison, so
their live twins would look unmanaged: findings about the cluster that are really about the
file. So the file is read again, leniently (undecodable bytes replaced, the documents before a
syntax error, the items of a list), for the identities it names; a live object with one of them
is "not compared", naming the file, never "unmanaged". Repository objects their schema refuses
(auditor/drift/shapes.py) are known: their live twins are left out the same way, their own
finding already saying why.
"""

from __future__ import annotations

import contextlib
import typing as t

import yaml

from auditor import rules
from auditor.k8s.objects import Json, ResourceKey, group_of
from auditor.model import Finding
from auditor.repo.layout import Repository
from auditor.repo.profiles import ClusterProfile
from auditor.repo.pyyaml_reader import CONSTRUCT_ERRORS

_RULES = rules.of(__name__)
DRIFT_NOT_COMPARED = _RULES["drift-not-compared"]
# A file refused for its size or its aliases is not parsed again, even leniently.
NOT_REREAD = frozenset({"yaml-too-large", "yaml-recursive-alias", "yaml-too-deep"})
Unread = dict[ResourceKey, str]  # identity -> the file naming it ("" for a refused object)


def unread(repo: Repository, loaded: t.Iterable[Finding], cluster: str) -> Unread:
    """The identities named by the files of `cluster` that did not load, each with its file."""
    out: Unread = {}
    files = {
        f.file for f in loaded if f.cluster == cluster and f.file and f.rule.id not in NOT_REREAD
    }
    for file in sorted(files):
        with contextlib.suppress(OSError):
            for key in identities(repo.tree.read(file)):
                out.setdefault(key, file)
    return out


def refused(found: t.Iterable[Finding]) -> Unread:
    """The identities of the repository objects whose shape was refused (not compared)."""
    return {
        ResourceKey(group_of(f.api_version or ""), f.kind, f.namespace, f.name): ""
        for f in found
        if f.kind and f.name
    }


def identities(data: bytes) -> list[ResourceKey]:
    """Every object identity `data` names, read as leniently as it can be."""
    documents: list[t.Any] = []
    with contextlib.suppress(yaml.YAMLError, RecursionError, *CONSTRUCT_ERRORS):
        for document in yaml.safe_load_all(data.decode("utf-8", errors="replace")):
            documents.append(document)
    out: list[ResourceKey] = []
    while documents:
        doc = documents.pop(0)
        if isinstance(doc, list):
            documents.extend(doc)
        elif isinstance(doc, dict):
            if isinstance(doc.get("items"), list):  # a kind: List
                documents.extend(doc["items"])
            meta, kind = doc.get("metadata"), doc.get("kind")
            if isinstance(meta, dict) and isinstance(kind, str) and meta.get("name"):
                namespace = meta.get("namespace")
                out.append(
                    ResourceKey(
                        group_of(str(doc.get("apiVersion") or "")),
                        kind,
                        str(namespace) if namespace else None,
                        str(meta["name"]),
                    )
                )
    return out


def source(unread_keys: Unread, key: ResourceKey) -> str | None:
    """The file that may define the live object `key` ("" when the repository's own object
    was refused), or None when none does. A file's object without a namespace names it in
    whatever namespace it is synced to."""
    found = unread_keys.get(key)
    if found is None and key.namespace is not None:
        found = unread_keys.get(ResourceKey(key.group, key.kind, None, key.name))
    return found


def not_compared(profile: ClusterProfile, obj: Json, file: str) -> Finding:
    meta = obj.get("metadata") or {}
    return Finding(
        DRIFT_NOT_COMPARED,
        f"not compared: {file} may define this object, and it could not be read (see its "
        "finding); whether the live object is the repository's is unknown",
        cluster=profile.name,
        api_version=obj.get("apiVersion"),
        kind=obj.get("kind"),
        namespace=meta.get("namespace"),
        name=meta.get("name"),
        file=file,
    )
