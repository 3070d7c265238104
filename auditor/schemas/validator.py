"""Validate one object against its cluster's schemas: version contract, JSON Schema, then CEL.

Each kind's validators and CEL rules are built once per cluster and reused for every object.
Most objects are valid, so a code-generated validator (fastjsonschema, ~70x faster) answers
first; only an object it rejects goes through jsonschema, whose errors make the findings.
"""

from __future__ import annotations

import builtins
import functools
import json
import marshal
import re
import sys
import typing as t
from dataclasses import dataclass

import fastjsonschema

from auditor import cache, rules
from auditor.k8s import formats, quantity
from auditor.kueue import KUEUE_GROUP
from auditor.kueue.release import Release
from auditor.model import Finding, Resource
from auditor.schemas import cel, lists, versions
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
FORMAT = _RULES["format"]
FORMAT_UNDECODABLE = _RULES["format-undecodable"]
FORMAT_WRAPPED = _RULES["format-wrapped"]
QUANTITY_NUMBER = _RULES["quantity-number"]
QUANTITY_MISSING = _RULES["quantity-missing"]
LIST_DUPLICATE = _RULES["list-duplicate"]

UNKNOWN_FIELD_RULES = (UNKNOWN_FIELD, versions.FIELD_OF_OTHER_VERSION)
# Findings that leave the object well-typed: the policy checks still see it (a quantity Kueue's
# defaulting webhook rewrites on create is judged, as its validating webhook judges it, after).
WELL_TYPED_RULES = (
    *UNKNOWN_FIELD_RULES,
    FORMAT,
    FORMAT_UNDECODABLE,
    FORMAT_WRAPPED,
    QUANTITY_NUMBER,
    QUANTITY_MISSING,
    LIST_DUPLICATE,
)
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

        checker = jsonschema.FormatChecker(formats=())
        for name in (*formats.INTEGER_RANGES, *formats.STRING_PATTERNS):
            checker.checks(name)(functools.partial(formats.admits, name))
        # Kubernetes takes a float without a fraction where an integer goes (`1000.0`).
        types = jsonschema.Draft4Validator.TYPE_CHECKER.redefine("integer", _integer)
        kube = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
            jsonschema.Draft4Validator, type_checker=types
        )
        return t.cast("jsonschema.Draft4Validator", kube(self.schema, format_checker=checker))

    def is_valid(self, body: t.Any) -> bool:
        return self.refusal(body) is None

    def refusal(self, body: t.Any) -> str | None:
        """The fast validator's reason to refuse `body`, or None when it takes it."""
        try:
            self.fast(body)
        except fastjsonschema.JsonSchemaException as exc:
            return str(exc)
        return None


@dataclass(frozen=True)
class Verdict:
    findings: list[Finding]
    sound: bool  # structure fit for the policy checks
    skipped: frozenset[tuple[str, str, str]]  # transition rules not run: (apiVersion, kind, rule)
    unsupported: frozenset[str]  # rules needing a function the offline evaluator lacks


class ClusterValidator:
    """Checks objects against the committed schemas of one cluster."""

    def __init__(self, catalog: SchemaCatalog, release: Release | None = None) -> None:
        self.catalog = catalog
        self.release = release  # the cluster's Kueue: which kinds its webhooks decode
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
            schema,
            compiled({**fast_definition(schema), "$schema": DRAFT4}),
            tuple(cel.collect(schema)),
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
        structural += _duplicate_findings(resource, kind.schema)
        findings += structural
        if any(f.rule not in WELL_TYPED_RULES for f in structural):
            return findings, False
        # Unknown fields alone leave the rest well-typed: the API server drops them and still
        # runs the CEL rules, so we do too, and the policy checks still see the object (hiding
        # it would make every reference to it look dangling). So does a value past its format.
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
        refused = kind.refusal(resource.body)
        if refused is None:
            return findings
        errors = list(kind.validator.iter_errors(resource.body))
        if not errors:  # a refusal is never undone for want of an explanation
            return [_unexplained(resource, refused)]
        for error in errors:
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
            rewritten = self._rewritten_on_create(resource, error)
            if error.validator == "format":
                findings.extend(self._format_finding(resource, error))
            elif rewritten:
                findings.extend(rewritten)
            elif error.validator != "additionalProperties":
                findings.append(Finding.about(resource, SCHEMA, _message(error), path=path))
        return findings

    def _rewritten_on_create(self, resource: Resource, error: ValidationError) -> list[Finding]:
        """What Kueue's defaulting webhook makes of a quantity the schema refuses, on a kind it
        decodes and writes back when the object is created: a number becomes its quantity
        (`4.5` is stored as `4500m`), a missing one Go's zero (`"0"`). The create passes; an
        update gets no such rewrite, so every later apply of the same manifest is refused."""
        kind, release = resource.kind, self.release
        if release is None or resource.api_version.rpartition("/")[0] != KUEUE_GROUP:
            return []
        if "CREATE" not in (release.webhook_kinds.get(kind) or {}).get("mutating", []):
            return []
        schema = error.schema if isinstance(error.schema, dict) else {}
        path = tuple(error.absolute_path)
        later = (
            "but no webhook rewrites it on an update, so the API server refuses every later "
            "apply of this manifest and each sync after the first fails"
        )
        if error.validator == "anyOf" and schema.get("x-kubernetes-int-or-string"):
            value = error.instance
            if isinstance(value, float):
                stored = quantity.printed(value)
                return [
                    Finding.about(
                        resource,
                        QUANTITY_NUMBER,
                        f"{_dotted(path)}: {value!r} is a number where a quantity goes: Kueue "
                        f"{release.version}'s webhook stores it as {stored!r} when the {kind} "
                        f"is created, {later}; write {stored!r}",
                        path=path,
                    )
                ]
        required = error.validator_value
        if error.validator == "required" and isinstance(error.instance, dict):
            properties = schema.get("properties") or {}
            missing = [
                str(name)
                for name in (required if isinstance(required, list) else [])
                if name not in error.instance
                and (properties.get(name) or {}).get("x-kubernetes-int-or-string")
            ]
            return [
                Finding.about(
                    resource,
                    QUANTITY_MISSING,
                    f"{_dotted((*path, name))} is missing: Kueue {release.version}'s webhook "
                    f'stores "0" when the {kind} is created, so this quota silently becomes 0, '
                    f'{later}; write {name}: "0" if 0 is meant',
                    path=path,
                )
                for name in missing
            ]
        return []

    def _format_finding(self, resource: Resource, error: ValidationError) -> list[Finding]:
        """A value past its field's format, with who holds it to the format: the API server
        (built-in kinds, a CRD's strings), Kueue's webhook (the kinds it decodes), or nobody
        until a controller decodes it (a CRD's integers elsewhere). A custom resource's
        metadata is the API server's own, which it reads leniently and fills (a
        `creationTimestamp` the manifest gives is replaced): no finding there."""
        name, value = str(error.validator_value), t.cast(t.Any, error.instance)
        path = tuple(error.absolute_path)
        said = f"{_dotted(path)}: {json.dumps(value)} is outside {formats.described(name)}"
        group = resource.api_version.rpartition("/")[0]
        entry = self.catalog.kind(group, resource.kind) or {}
        if entry.get("crd") and path[:1] == ("metadata",):
            return []
        return [self._format_said(resource, entry, name, value, path, said)]

    def _format_said(
        self,
        resource: Resource,
        entry: dict[str, t.Any],
        name: str,
        value: t.Any,
        path: tuple[str | int, ...],
        said: str,
    ) -> Finding:
        group = resource.api_version.rpartition("/")[0]
        integer = name in formats.INTEGER_RANGES and isinstance(value, int | float)
        if not entry.get("crd") and integer:
            stored = formats.wrapped(name, int(value))
            why = (
                f"a server-side apply (as Argo CD's ServerSideApply=true sync does) stores it "
                f"wrapped around, as {stored}, and a create or update by other means is refused"
            )
            return Finding.about(resource, FORMAT_WRAPPED, f"{said}: {why}", path=path)
        if not entry.get("crd") or not integer:
            return Finding.about(resource, FORMAT, f"{said}: the API server refuses it", path=path)
        kueue = f"Kueue {self.release.version}" if self.release else "Kueue"
        if group == KUEUE_GROUP and self.release and resource.kind in self.release.webhook_kinds:
            why = f"{kueue}'s webhook cannot decode it into its Go type and refuses the object"
            return Finding.about(resource, FORMAT, f"{said}: {why}", path=path)
        reader = kueue if group == KUEUE_GROUP else f"the controller that reads {group}"
        why = (
            "the API server accepts it (it does not hold a custom resource's integers to their "
            f"format), and then {reader} cannot decode it: listing any {resource.kind} fails "
            f'("cannot unmarshal number {json.dumps(value)}"), so it sees none of them until '
            "the value is fixed"
        )
        return Finding.about(resource, FORMAT_UNDECODABLE, f"{said}: {why}", path=path)


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


CODE_FORMAT = 2  # bump when what `compiled` keeps changes


def compiled(definition: dict[str, t.Any]) -> t.Callable[[t.Any], t.Any]:
    """fastjsonschema's validator of `definition`, its code kept in the user cache directory
    by the definition's fingerprint: generating and compiling a kind's validator costs
    0.02-0.1 s (22 of them in a run over two clusters), loading the compiled code ~1 ms. The
    file is named by the SHA-256 of the definition and of fastjsonschema's and Python's
    versions, written under a temporary name and renamed; one that cannot be read or written
    is generated again, never an error."""
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"))
    digest = cache.key(CODE_FORMAT, fastjsonschema.VERSION, sys.version, text)
    path = cache.area("validators") / f"{digest}.marshal"
    try:
        code = marshal.loads(cache.read(path) or b"")
    except (ValueError, EOFError, TypeError):
        source = fastjsonschema.compile_to_code(
            definition, formats=STRING_FORMATS, use_default=False, use_formats=True
        )
        code = builtins.compile(source, f"<validator {digest[:12]}>", "exec")
        cache.write(path, marshal.dumps(code))
    scope: dict[str, t.Any] = {}
    exec(code, scope)  # our own compiled fastjsonschema output
    if VALIDATE not in scope:  # pragma: no cover - a definition with its own $id
        return fastjsonschema.compile(
            definition, formats=STRING_FORMATS, use_default=False, use_formats=True
        )
    return t.cast(t.Callable[[t.Any], t.Any], scope[VALIDATE])


VALIDATE = "validate"  # the name fastjsonschema gives a schema's validating function
# The string formats fastjsonschema checks: Kubernetes' own (auditor/k8s/formats.py), and the
# ones fastjsonschema would check by its own definitions switched off (jsonschema, which
# explains a rejection, knows only Kubernetes' own: the two must agree).
STRING_FORMATS = {
    **{name: "" for name in fastjsonschema.draft04.CodeGeneratorDraft04.FORMAT_REGEXS},
    **formats.STRING_PATTERNS,
}


def fast_definition(node: t.Any) -> t.Any:
    """A copy that fastjsonschema's draft-04 code judges as Kubernetes does (and as jsonschema
    does, with KindSchema.validator's integers and format checker): an integer may be written as a
    float without a fraction (`1000.0`: the API server takes it), and an integer format is
    also its range (fastjsonschema checks formats on strings only)."""
    if isinstance(node, list):
        return [fast_definition(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: fast_definition(v) for k, v in node.items()}
    types = out.get("type")
    if types == "integer" or (isinstance(types, list) and "integer" in types):
        out["type"] = "number" if types == "integer" else ["number" if x == "integer" else x
                                                          for x in types]  # fmt: skip
        out.setdefault("multipleOf", 1)
    bounds = formats.INTEGER_RANGES.get(str(out.get("format")))
    if bounds is not None:
        low, high = bounds
        out["minimum"] = max(out.get("minimum", low), low)
        out["maximum"] = min(out.get("maximum", high), high)
    return out


def _duplicate_findings(resource: Resource, schema: Schema) -> list[Finding]:
    return [
        Finding.about(resource, LIST_DUPLICATE, f"{_dotted(path)}: {why}", path=path)
        for path, why in lists.duplicates(schema, resource.body)
    ]


def _unexplained(resource: Resource, refused: str) -> Finding:
    """The fast validator refused the object and the explaining one found nothing to point at
    (the two disagree, a bug of ours): invalid, at the object, with the fast one's reason."""
    return Finding.about(
        resource,
        SCHEMA,
        f"the schema of {resource.api_version} {resource.kind} refuses this object "
        f"({refused.removeprefix('data.')}), though no field could be pointed at",
    )


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
    """A copy with patterns that mean in Python's re what they mean in Go's RE2: RE2 allows
    `^(?i)...`, Python wants the global flag first (same meaning, as the flag applies to the
    whole pattern either way); RE2's `$` is the end of the text, Python's also the place before
    a final newline (`"10Gi\\n"`, as a YAML block scalar writes it, matched a quantity's)."""
    if isinstance(node, list):
        return [python_patterns(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: python_patterns(v) for k, v in node.items()}
    pattern = out.get("pattern")
    if isinstance(pattern, str):
        flags = re.findall(r"\(\?[aiLmsux]+\)", pattern)
        if flags and not pattern.startswith(flags[0]):
            pattern = "".join(flags) + re.sub(r"\(\?[aiLmsux]+\)", "", pattern)
        out["pattern"] = pattern if any("m" in f for f in flags) else _end_of_text(pattern)
    return out


def _end_of_text(pattern: str) -> str:
    """Each `$` anchor (not escaped, not in a class) as `\\Z`; Go's RE2 has no `\\Z`, so
    `as_written` can tell ours apart."""
    out, escaped, in_class = [], False, False
    for c in pattern:
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "$":
            c = END_OF_TEXT
        out.append(c)
    return "".join(out)


END_OF_TEXT = r"\Z"


def as_written(pattern: str) -> str:
    """A pattern as its schema writes it (python_patterns undone for messages)."""
    return pattern.replace(END_OF_TEXT, "$")


def _integer(_checker: t.Any, value: t.Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _dotted(path: tuple[t.Any, ...]) -> str:
    return ".".join(str(p) for p in path)


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
    message = error.message
    if error.validator == "pattern":
        message = f"{error.instance!r} does not match {as_written(str(error.validator_value))!r}"
        message = _not_a_quantity(error) or message
    message = message if len(message) < 200 else message[:197] + "..."
    return f"{where + ': ' if where else ''}{message}"


def _not_a_quantity(error: ValidationError) -> str | None:
    """A quantity field's pattern refusal, in the words of a quantity (`'10Gi\\n' is not a
    quantity`) rather than of its regular expression."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    if not schema.get("x-kubernetes-int-or-string"):
        return None
    try:
        quantity.parse(error.instance)
    except quantity.QuantityError as exc:
        return str(exc)
    return None
