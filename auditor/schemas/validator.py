"""Validate one object against its cluster's schemas: version contract, JSON Schema, then CEL.

Each kind's validators and CEL rules are built once per cluster and reused for every object.
Most objects are valid, so a code-generated validator (fastjsonschema, ~70x faster) answers
first; only an object it rejects goes through jsonschema, whose errors make the findings.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import json
import marshal
import os
import re
import sys
import tempfile
import typing as t
from dataclasses import dataclass
from pathlib import Path

import fastjsonschema

from auditor import rules
from auditor.model import Finding, Resource
from auditor.repo.cache import user_cache_root
from auditor.schemas import cel, versions
from auditor.schemas.catalog import Schema, SchemaCatalog

if t.TYPE_CHECKING:  # jsonschema loads only to explain a rejection: ~0.1 s off other runs
    import jsonschema
    from jsonschema.exceptions import ValidationError

_RULES = rules.of(__name__)
UNKNOWN_FIELD = _RULES["unknown-field"]
INVALID_NAME = _RULES["invalid-name"]
MISSING_SCHEMA = _RULES["missing-schema"]
SCHEMA = _RULES["schema"]
CEL = _RULES["cel"]

UNKNOWN_FIELD_RULES = (UNKNOWN_FIELD, versions.FIELD_OF_OTHER_VERSION)
DRAFT4 = "http://json-schema.org/draft-04/schema#"  # OpenAPI 3.0's dialect; boolean exclusiveMin


@dataclass(frozen=True)
class KindSchema:
    schema: Schema
    fast: t.Callable[[t.Any], t.Any]  # raises JsonSchemaException when the object is invalid
    rules: tuple[cel.Rule, ...]

    @functools.cached_property
    def validator(self) -> jsonschema.Draft4Validator:
        """jsonschema's validator, whose errors say what and where (built on first rejection)."""
        import jsonschema

        return jsonschema.Draft4Validator(self.schema)

    def is_valid(self, body: t.Any) -> bool:
        try:
            self.fast(body)
        except fastjsonschema.JsonSchemaException:
            return False
        return True


@dataclass(frozen=True)
class Verdict:
    findings: list[Finding]
    sound: bool  # structure fit for the policy checks
    skipped: frozenset[tuple[str, str, str]]  # transition rules not run: (apiVersion, kind, rule)
    unsupported: frozenset[str]  # rules needing a function the offline evaluator lacks


class ClusterValidator:
    """Checks objects against the committed schemas of one cluster."""

    def __init__(self, catalog: SchemaCatalog) -> None:
        self.catalog = catalog
        self.skipped: set[tuple[str, str, str]] = (
            set()
        )  # transition rules: (apiVersion, kind, rule)
        self.unsupported: set[str] = set()  # rules needing a function we lack

    @functools.lru_cache(maxsize=256)  # noqa: B019 - one validator per cluster per run
    def kind_schema(self, api_version: str, kind: str) -> KindSchema | None:
        schema = self.catalog.schema(api_version, kind)
        if schema is None:
            return None
        schema = python_patterns(schema)
        return KindSchema(
            schema, compiled({**schema, "$schema": DRAFT4}), tuple(cel.collect(schema))
        )

    def malformed(self, resource: Resource) -> list[Finding]:
        """The schema's complaints about `resource`'s shape (a string where a mapping belongs),
        without CEL or the version contract; none when its kind has no schema here."""
        kind = self.kind_schema(resource.api_version, resource.kind)
        if kind is None:
            return []
        return [f for f in self._schema_findings(resource, kind) if f.rule is SCHEMA]

    def check(self, resource: Resource) -> tuple[list[Finding], bool]:
        """The findings about `resource`, and whether its structure is sound for policy checks."""
        verdict = self.judge(resource)
        self.remember(verdict)
        return verdict.findings, verdict.sound

    def remember(self, verdict: Verdict) -> None:
        """Count a verdict's skipped and unsupported rules (a cached one's too) for the notes."""
        self.skipped.update(verdict.skipped)
        self.unsupported.update(verdict.unsupported)

    def judge(self, resource: Resource) -> Verdict:
        """What `check` says about `resource`, with the rules it could not evaluate: a value
        that depends only on the object and this cluster's schemas (so it may be cached)."""
        skipped: set[tuple[str, str, str]] = set()
        unsupported: set[str] = set()
        findings, sound = self._check(resource, skipped, unsupported)
        return Verdict(findings, sound, frozenset(skipped), frozenset(unsupported))

    def _check(
        self, resource: Resource, skipped: set[tuple[str, str, str]], unsupported: set[str]
    ) -> tuple[list[Finding], bool]:
        contract = versions.served(resource, self.catalog)
        if contract is not None and contract.rule is not versions.VERSION_DEPRECATED:
            return [contract], False
        findings = [contract] if contract is not None else []
        kind = self.kind_schema(resource.api_version, resource.kind)
        if kind is None:  # the index lists the kind but its schema file is gone
            findings.append(
                Finding.about(
                    resource,
                    MISSING_SCHEMA,
                    f"no schema file for {resource.api_version} {resource.kind} in "
                    f"{self.catalog.source.describe()}; run `kueue-gitops schemas "
                    f"fetch --cluster {self.catalog.cluster}`",
                )
            )
            return findings, False
        structural = self._schema_findings(resource, kind) + _name_findings(resource)
        findings += structural
        if any(f.rule not in UNKNOWN_FIELD_RULES for f in structural):
            return findings, False
        # Unknown fields alone leave the rest well-typed: the API server drops them and still
        # runs the CEL rules, so we do too, and the policy checks still see the object (hiding
        # it would make every reference to it look dangling).
        skipped.update(
            (resource.api_version, resource.kind, r.rule) for r in kind.rules if r.transition
        )
        if any(not r.transition for r in kind.rules):
            defaulted = cel.with_defaults(kind.schema, resource.body)
            for v in cel.evaluate(kind.rules, defaulted, unsupported):
                findings.append(
                    Finding.about(resource, CEL, f"{v.message} (rule: {v.rule})", path=v.path)
                )
        return findings, True

    def _schema_findings(self, resource: Resource, kind: KindSchema) -> list[Finding]:
        findings: list[Finding] = []
        if kind.is_valid(resource.body):
            return findings
        for error in kind.validator.iter_errors(resource.body):
            path = tuple(error.absolute_path)
            for extra in _unexpected(error):
                field_path = (*path, extra)
                finding = versions.foreign_field(resource, self.catalog, field_path)
                findings.append(
                    finding
                    or Finding.about(
                        resource,
                        UNKNOWN_FIELD,
                        f"unknown field {extra!r}: the schema of {resource.api_version} "
                        f"{resource.kind} has no such field here",
                        path=field_path,
                    )
                )
            if error.validator != "additionalProperties":
                findings.append(Finding.about(resource, SCHEMA, _message(error), path=path))
        return findings


# How the API server validates names (apimachinery's validation): most kinds take a DNS-1123
# subdomain, a Namespace (and any namespace) a DNS-1123 label, RBAC objects a path segment.
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_PATH_SEGMENT_KINDS = {"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}


def _name_problem(kind: str, name: str) -> str | None:
    if kind in _PATH_SEGMENT_KINDS:
        if name in (".", "..") or "/" in name or "%" in name:
            return "may not be '.' or '..' nor contain '/' or '%'"
        return None
    if kind == "Namespace":
        ok = len(name) <= 63 and _DNS_LABEL.fullmatch(name)
        return None if ok else "must be a DNS-1123 label (at most 63 of a-z, 0-9, '-')"
    ok = len(name) <= 253 and _DNS_SUBDOMAIN.fullmatch(name)
    return None if ok else "must be a DNS-1123 subdomain (at most 253 of a-z, 0-9, '-', '.')"


CODE_FORMAT = 1  # bump when what `compiled` keeps changes


def compiled(definition: dict[str, t.Any]) -> t.Callable[[t.Any], t.Any]:
    """fastjsonschema's validator of `definition`, its code kept in the user cache directory
    by the definition's fingerprint: generating and compiling a kind's validator costs
    0.02-0.1 s (22 of them in a run over two clusters), loading the compiled code ~1 ms. The
    file is named by the SHA-256 of the definition and of fastjsonschema's and Python's
    versions, written under a temporary name and renamed; one that cannot be read or written
    is generated again, never an error."""
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(
        f"{CODE_FORMAT}\0{fastjsonschema.VERSION}\0{sys.version}\0{text}".encode()
    ).hexdigest()
    path = user_cache_root() / "validators" / f"{digest}.marshal"
    try:
        code = marshal.loads(path.read_bytes())
    except (OSError, ValueError, EOFError, TypeError):
        source = fastjsonschema.compile_to_code(definition, use_default=False, use_formats=False)
        code = builtins.compile(source, f"<validator {digest[:12]}>", "exec")
        _keep(path, marshal.dumps(code))
    scope: dict[str, t.Any] = {}
    exec(code, scope)  # our own compiled fastjsonschema output
    if VALIDATE not in scope:  # pragma: no cover - a definition with its own $id
        return fastjsonschema.compile(definition, use_default=False, use_formats=False)
    return t.cast(t.Callable[[t.Any], t.Any], scope[VALIDATE])


VALIDATE = "validate"  # the name fastjsonschema gives a schema's validating function


def _keep(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temp, path)
    except OSError:
        pass  # a read-only or full cache directory: compiled again next time


def _name_findings(resource: Resource) -> list[Finding]:
    """The names the API server would refuse, before anything else about the object."""
    out = []
    problem = _name_problem(resource.kind, resource.name)
    if problem:
        out.append(
            Finding.about(
                resource,
                INVALID_NAME,
                f"metadata.name {resource.name!r} {problem}",
                path=("metadata", "name"),
            )
        )
    namespace = resource.namespace
    if namespace and _name_problem("Namespace", namespace):
        out.append(
            Finding.about(
                resource,
                INVALID_NAME,
                f"metadata.namespace {namespace!r} must be a DNS-1123 label",
                path=("metadata", "namespace"),
            )
        )
    return out


def python_patterns(node: t.Any) -> t.Any:
    """A copy with patterns Python's re accepts: Go's RE2 allows `^(?i)...`, Python wants the
    global flag first (same meaning, as the flag applies to the whole pattern either way)."""
    if isinstance(node, list):
        return [python_patterns(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: python_patterns(v) for k, v in node.items()}
    pattern = out.get("pattern")
    if isinstance(pattern, str):
        flags = re.findall(r"\(\?[aiLmsux]+\)", pattern)
        if flags and not pattern.startswith(flags[0]):
            out["pattern"] = "".join(flags) + re.sub(r"\(\?[aiLmsux]+\)", "", pattern)
    return out


def _unexpected(error: ValidationError) -> list[str]:
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return []
    schema = error.schema if isinstance(error.schema, dict) else {}
    known = set(schema.get("properties") or {})
    return sorted(str(k) for k in error.instance if k not in known)


def _message(error: ValidationError) -> str:
    import jsonschema

    if error.context:  # anyOf / oneOf: the alternative that got furthest says the most
        best = jsonschema.exceptions.best_match(error.context)
        if best is not None:
            error = best
    where = ".".join(str(p) for p in error.absolute_path)
    message = error.message if len(error.message) < 200 else error.message[:197] + "..."
    return f"{where + ': ' if where else ''}{message}"
