"""Which repo objects drift can compare: those whose shape their cluster's schema accepts.

Drift does not validate, but it reads every field of what it compares: an object with a
string where a mapping belongs is said to be not compared, at the schema's complaint, rather
than read wrongly (or not at all).

Compiling a kind's schema is most of this check's cost (~60 ms for a Kueue CRD), and a fleet's
clusters usually serve the same versions: each kind is compiled once per run for every cluster
whose schema of it is the same (`Compiled`, keyed by the schema's content).
"""

from __future__ import annotations

import hashlib
import json

from auditor import rules
from auditor.model import Finding, Resource
from auditor.repo.profiles import ClusterProfile
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.validator import ClusterValidator, KindSchema

_RULES = rules.of(__name__)
DRIFT_NOT_COMPARED = _RULES["drift-not-compared"]

Compiled = dict[tuple[str, str, str], KindSchema | None]  # (apiVersion, kind, content hash)


class _SharedValidator(ClusterValidator):
    """A cluster's validator that takes each kind's compiled schema from `compiled` when
    another cluster of the run has the same schema for it."""

    def __init__(self, catalog: SchemaCatalog, compiled: Compiled) -> None:
        super().__init__(catalog)
        self.compiled = compiled
        self.mine: dict[tuple[str, str], KindSchema | None] = {}  # this cluster's, by kind

    def kind_schema(self, api_version: str, kind: str) -> KindSchema | None:  # type: ignore[override]
        if (api_version, kind) not in self.mine:
            self.mine[api_version, kind] = self._shared(api_version, kind)
        return self.mine[api_version, kind]

    def _shared(self, api_version: str, kind: str) -> KindSchema | None:
        schema = self.catalog.schema(api_version, kind)
        if schema is None:
            return None
        digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()
        key = (api_version, kind, digest)
        if key not in self.compiled:
            self.compiled[key] = super().kind_schema(api_version, kind)
        return self.compiled[key]


def sound(
    profile: ClusterProfile, catalog: SchemaCatalog, desired: list[Resource], compiled: Compiled
) -> tuple[list[Resource], list[Finding]]:
    """The repo objects whose shape their schema accepts, and a finding for each other one."""
    validator = _SharedValidator(catalog, compiled)
    sound: list[Resource] = []
    refused: list[Finding] = []
    for resource in desired:
        problems = validator.malformed(resource)
        if not problems:
            sound.append(resource)
            continue
        refused.append(
            Finding(
                DRIFT_NOT_COMPARED,
                f"not compared with the live object: {problems[0].message}",
                cluster=profile.name,
                api_version=resource.api_version or None,
                kind=resource.kind or None,
                namespace=resource.namespace,
                name=resource.name or None,
                file=resource.file,
                line=problems[0].line,
                path=problems[0].path,
            )
        )
    return sound, refused
