"""The user cache as a layer around the repository's pure loader (repo/layout.py).

The loader turns bytes into documents into Resources and knows nothing of the cache; this layer
asks the cache first (repo/cache.py: a file's entry while its stat signature or its bytes are
unchanged) and calls the loader only for a file the cache cannot serve, storing what it made.
The same for the tenants' profiles (pack `_tenant-profiles`). What `validate` keeps per file
beside the documents (the validator's verdicts, each check's facts) is its own layer on the same
entries (validate/kept.py).
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import typing as t

from auditor.errors import processing
from auditor.repo import manifests
from auditor.repo.cache import FileCache
from auditor.repo.layout import (
    TENANT_PROFILES,
    Loaded,
    Placed,
    Repository,
    gathered,
    placed,
)
from auditor.repo.profiles import TenantProfile

Caches = t.Mapping[str, FileCache]  # per cluster


def load(repo: Repository, clusters: list[str], caches: Caches) -> Loaded:
    """`Repository.load`, each file served from its cluster's cache while unchanged."""
    for name in clusters:
        repo.cluster(name)
    where, layout = repo.plan(clusters)
    out = load_placed(repo, where, caches)
    out.findings = layout + out.findings
    return out


def load_placed(repo: Repository, where: t.Iterable[Placed], caches: Caches) -> Loaded:
    """`Repository.load_placed` through the caches (a cluster without one: the loader)."""
    return gathered(load_file(repo, w, caches.get(w.cluster)) for w in where)


def load_file(repo: Repository, where: Placed, cache: FileCache | None) -> Loaded:
    """One file's objects: from `cache` when it holds this file's bytes, else loaded (and
    stored in it)."""
    if cache is None or where.source is not None:  # a render has its own cache (render/)
        return repo.load_file(where)
    path = where.path
    entry = cache.unchanged(path)
    data = b""
    if entry is None:
        read = repo.read(where)
        if isinstance(read, Loaded):
            return read
        data = read
        entry = cache.same_content(path, data)
    if entry is not None:
        docs, problems = pickle.loads(entry.parsed)
        found = manifests.restore(docs, path, functools.partial(repo.text, path))
        return placed(where, found, problems)
    with processing(f"reading {path}"):
        found, problems = manifests.load_bytes(data, path)
    cache.store(path, data, (manifests.documents(found), problems))  # pickled before placed()
    return placed(where, found, problems)


def tenants(repo: Repository, tool: str) -> None:
    """Give `repo` its tenants' profiles, each from the cache while its file is unchanged (a
    working tree only; `tool` is the cache's tool key, repo/cache.py)."""
    if repo.root is None:
        return
    cache = FileCache(repo.root, TENANT_PROFILES, tool, "")
    out: dict[str, TenantProfile] = {}
    fingerprint = hashlib.sha256()
    with manifests.quiet():
        for name in repo.tenant_names():
            path = repo.tenant_file(name)
            entry = cache.unchanged(path)
            data = None
            if entry is None:
                data = repo.profile_bytes(path)
                entry = cache.same_content(path, data)
            if entry is not None:
                out[name] = t.cast(TenantProfile, pickle.loads(entry.parsed))
            else:
                assert data is not None
                out[name] = repo.tenant(name, data)
                cache.store(path, data, out[name])
            fingerprint.update(path.encode() + b"\0" + (cache.digest(path) or b"?"))
    repo.use_tenants(out, fingerprint.hexdigest())
    cache.save()
