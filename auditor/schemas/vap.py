"""A ValidatingAdmissionPolicy and its binding judged offline, one request at a time, as the API
server judges it: does the policy match the request (resource rules, namespace and object
selectors, matchConditions), and which of its validations fail, with the message each returns.

The expressions are evaluated as written in the policy, with cel-python (celpy) and the
Kubernetes extensions of `cel_library`. celpy does not parse CEL's optional syntax (`x.?f`,
`m[?k]`), which the generated policies use: `desugar` rewrites exactly those two forms into calls
of this module's functions (`_opt_select`, `_opt_index`) and keeps every other token as it is.
What this evaluator cannot judge (a parameter resource, the `authorizer`, optional list or map
entries, a function neither celpy nor we provide) is said (`Verdict.unsupported`), never guessed.
"""

from __future__ import annotations

import functools
import re
import typing as t
from dataclasses import dataclass

from auditor.k8s import selectors
from auditor.k8s.objects import Json

if t.TYPE_CHECKING:
    import celpy

CREATE, UPDATE = "CREATE", "UPDATE"


class Unsupported(ValueError):
    """An expression, or a part of the policy, this evaluator does not judge."""


# -- CEL's optional syntax, rewritten into calls celpy can run --------------------------------

_TOKEN = re.compile(
    r"""\s+
    |(?P<tok>(?:[rRbB]{1,2})?(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")
    |\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|0[xX][0-9a-fA-F]+[uU]?|\d+[uU]?
    |[A-Za-z_][A-Za-z0-9_]*
    |&&|\|\||==|!=|<=|>=|[-+*/%!<>?:.,()\[\]{}])""",
    re.VERBOSE,
)
_CLOSE = {"(": ")", "[": "]", "{": "}"}


def _tokens(expression: str) -> list[str]:
    if "'''" in expression or '"""' in expression:
        raise Unsupported("triple-quoted strings")
    out, at = [], 0
    while at < len(expression):
        found = _TOKEN.match(expression, at)
        if found is None:
            raise Unsupported(f"cannot read {expression[at : at + 20]!r}")
        if found.group("tok"):
            out.append(found.group("tok"))
        at = found.end()
    return out


def desugar(expression: str) -> str:
    """`expression` with `x.?f` as `_opt_select(x, 'f')` and `x[?k]` as `_opt_index(x, k)`."""
    toks = _tokens(expression)
    text, end = _sequence(toks, 0, None)
    if end != len(toks):
        raise Unsupported(f"unbalanced {toks[end]!r}")
    return text


def _sequence(toks: list[str], i: int, closer: str | None) -> tuple[str, int]:
    """Operands and operators up to `closer` (not consumed)."""
    out: list[str] = []
    while i < len(toks) and toks[i] != closer:
        if toks[i] in (")", "]", "}"):
            raise Unsupported(f"unbalanced {toks[i]!r}")
        if _operand_start(toks[i]):
            text, i = _chain(toks, i)
            out.append(text)
        else:
            out.append(toks[i])
            i += 1
    return " ".join(out), i


def _operand_start(tok: str) -> bool:
    return tok in _CLOSE or tok[0].isalnum() or tok[0] in "_'\""


def _group(toks: list[str], i: int) -> tuple[str, int]:
    """A bracketed group starting at toks[i]: its rewritten text, and the index after it."""
    opener = toks[i]
    if i + 1 < len(toks) and toks[i + 1] == "?":
        raise Unsupported("optional list or map entries")
    inner, end = _sequence(toks, i + 1, _CLOSE[opener])
    if end >= len(toks):
        raise Unsupported(f"unclosed {opener!r}")
    return f"{opener}{inner}{_CLOSE[opener]}", end + 1


def _chain(toks: list[str], i: int) -> tuple[str, int]:
    """A primary and every selection, index and call that follows it."""
    if toks[i] in _CLOSE:
        acc, i = _group(toks, i)
    elif i + 1 < len(toks) and toks[i + 1] == "(":  # a function or a macro: f(args)
        name = toks[i]
        args, i = _group(toks, i + 1)
        acc = name + args
    else:
        acc, i = toks[i], i + 1
    while i < len(toks):
        if toks[i] == "." and i + 2 < len(toks) and toks[i + 1] == "?":
            acc, i = f"_opt_select({acc}, '{toks[i + 2]}')", i + 3
        elif toks[i] == "." and i + 1 < len(toks):
            acc, i = f"{acc}.{toks[i + 1]}", i + 2
            if i < len(toks) and toks[i] == "(":
                args, i = _group(toks, i)
                acc += args
        elif toks[i] == "[" and i + 1 < len(toks) and toks[i + 1] == "?":
            key, end = _sequence(toks, i + 2, "]")
            acc, i = f"_opt_index({acc}, {key})", end + 1
        elif toks[i] == "[":
            index, i = _group(toks, i)
            acc += index
        else:
            break
    return acc, i


# -- the functions the rewritten expressions call ----------------------------------------------


@dataclass(frozen=True)
class Optional:
    """A CEL optional: a value, or none (`present` False)."""

    present: bool
    value: t.Any = None


_NONE = Optional(False)


def _error(message: str) -> t.Any:
    from celpy.evaluation import CELEvalError

    return CELEvalError(message)


def _opt_select(receiver: t.Any, name: t.Any) -> t.Any:
    """`receiver.?name`: the field as an optional (none when absent; `receiver` may be one)."""
    return _opt_index(receiver, name)


def _opt_index(receiver: t.Any, key: t.Any) -> t.Any:
    """`receiver[?key]`: the map entry or list item as an optional."""
    from celpy import celtypes

    if isinstance(receiver, Optional):
        if not receiver.present:
            return _NONE
        receiver = receiver.value
    if isinstance(receiver, celtypes.MapType):
        return Optional(True, receiver[key]) if key in receiver else _NONE
    if isinstance(receiver, celtypes.ListType) and isinstance(key, int):
        return Optional(True, receiver[key]) if 0 <= key < len(receiver) else _NONE
    return _error(f"no optional selection on {type(receiver).__name__}")


def _or_value(optional: t.Any, default: t.Any) -> t.Any:
    if not isinstance(optional, Optional):
        return _error("orValue() of a value that is no optional")
    return optional.value if optional.present else default


def _has_value(optional: t.Any) -> t.Any:
    from celpy import celtypes

    if not isinstance(optional, Optional):
        return _error("hasValue() of a value that is no optional")
    return celtypes.BoolType(optional.present)


def _value(optional: t.Any) -> t.Any:
    if not isinstance(optional, Optional) or not optional.present:
        return _error("value() of an optional that holds none")
    return optional.value


def _join(items: t.Any, separator: t.Any = "") -> t.Any:
    from celpy import celtypes

    if not all(isinstance(i, celtypes.StringType) for i in items):
        return _error("join() of a list that is not of strings")
    return celtypes.StringType(str(separator).join(str(i) for i in items))


@functools.cache
def _functions() -> dict[str, t.Callable[..., t.Any]]:
    from auditor.schemas.cel_library import FUNCTIONS

    return {
        **FUNCTIONS,
        "_opt_select": _opt_select,
        "_opt_index": _opt_index,
        "orValue": _or_value,
        "hasValue": _has_value,
        "value": _value,
        "join": _join,
    }


@functools.lru_cache(maxsize=512)
def _program(expression: str) -> celpy.Runner:
    from auditor.schemas import cel

    if re.search(r"\bauthorizer\b", expression):
        raise Unsupported("the authorizer (a SubjectAccessReview per request)")
    program = cel.compile_with(desugar(expression), _functions())
    if program is None:
        raise Unsupported(f"celpy cannot parse {expression!r}")
    return program


def evaluate(expression: str, bound: t.Mapping[str, t.Any]) -> t.Any:
    """The value of `expression` (a CEL error is returned as celpy's CELEvalError value)."""
    from celpy.evaluation import CELEvalError

    program = _program(expression)  # Unsupported is said, not taken for a failed expression
    try:
        result: t.Any = program.evaluate(dict(bound))
    except CELEvalError as exc:
        result = exc
    except (TypeError, ValueError, KeyError, IndexError) as exc:  # a bad argument, as the server
        result = _error(str(exc))
    if isinstance(result, CELEvalError):
        said = str(result.args)
        if "undeclared reference" in said:
            raise Unsupported(f"a function the offline evaluator lacks in {expression!r}")
        if Optional.__qualname__ in said:  # e.g. `x.?a.b`: chaining on an optional
            raise Unsupported(f"an operation on an optional value in {expression!r}")
    return result


# -- one request judged --------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """What the API server hands the policy: the operation on a resource by a user."""

    operation: str  # CREATE | UPDATE
    group: str
    resource: str  # the plural: jobs, namespaces
    object: Json
    old_object: Json | None = None
    namespace_object: Json | None = None  # the object's namespace (None: cluster-scoped)
    username: str = ""
    groups: tuple[str, ...] = ()

    def bound(self) -> dict[str, t.Any]:
        """The request as CEL sees it: object, oldObject, namespaceObject, request, params."""
        from celpy.adapter import json_to_cel

        meta = self.object.get("metadata") or {}
        version = str(self.object.get("apiVersion", "")).rpartition("/")[2]
        request = {
            "operation": self.operation,
            "namespace": meta.get("namespace", ""),
            "name": meta.get("name", ""),
            "kind": {"group": self.group, "version": version, "kind": self.object.get("kind")},
            "resource": {"group": self.group, "version": version, "resource": self.resource},
            "userInfo": {"username": self.username, "groups": list(self.groups)},
            "dryRun": False,
        }
        return {
            "object": json_to_cel(self.object),
            "oldObject": json_to_cel(self.old_object),
            "namespaceObject": json_to_cel(self.namespace_object),
            "request": json_to_cel(request),
            "params": json_to_cel(None),
        }


@dataclass(frozen=True)
class Verdict:
    matched: bool
    failures: tuple[str, ...] = ()  # the messages of the validations that fail

    @property
    def refused(self) -> bool:
        return self.matched and bool(self.failures)


def reads_user(policy: Json) -> bool:
    """Whether the policy's expressions read who asks (`request.userInfo`): such a policy is
    judged by the identities it refuses, not by the objects that exist (they have no request)."""
    spec = policy.get("spec") or {}
    parts = [*(spec.get("matchConditions") or []), *(spec.get("variables") or [])]
    parts += spec.get("validations") or []
    return any("request.userInfo" in str(p.get("expression", "")) for p in parts)


def judge(policy: Json, binding: Json, request: Request) -> Verdict:
    """How the API server would answer `request` under `policy` bound by `binding`."""
    spec, scope = policy.get("spec") or {}, (binding.get("spec") or {}).get("matchResources")
    if spec.get("paramKind") or (binding.get("spec") or {}).get("paramRef"):
        raise Unsupported("parameter resources")
    if not (_in_scope(spec.get("matchConstraints") or {}, request) and _in_scope(scope, request)):
        return Verdict(False)
    bound = request.bound()
    fail_closed = spec.get("failurePolicy", "Fail") == "Fail"
    for condition in spec.get("matchConditions") or []:
        result = evaluate(str(condition.get("expression", "")), bound)
        if not _true(result):
            if _is_error(result) and fail_closed:
                return Verdict(True, (f"matchCondition {condition.get('name')}: {result}",))
            return Verdict(False)
    bound["variables"] = _variables(spec.get("variables") or [], bound)
    failures = []
    for validation in spec.get("validations") or []:
        result = evaluate(str(validation.get("expression", "")), bound)
        if _true(result) or (_is_error(result) and not fail_closed):
            continue
        failures.append(_message(validation, bound, result))
    return Verdict(True, tuple(failures))


def _in_scope(match: Json | None, request: Request) -> bool:
    """A matchConstraints' or a binding's matchResources' rules and selectors (None: all)."""
    if not match:
        return True
    rules = match.get("resourceRules")
    if rules is not None and not any(_rule(r, request) for r in rules):
        return False
    if any(_rule(r, request) for r in match.get("excludeResourceRules") or []):
        return False
    labels_of = (request.object.get("metadata") or {}).get("labels")
    namespace_labels = (
        labels_of
        if request.group == "" and request.resource == "namespaces"  # a namespace is its own
        else ((request.namespace_object or {}).get("metadata") or {}).get("labels")
    )
    namespaced = request.namespace_object is not None or request.resource == "namespaces"
    if namespaced and not selectors.selects(
        match.get("namespaceSelector") or {}, namespace_labels, nil=True
    ):
        return False
    return selectors.selects(match.get("objectSelector") or {}, labels_of, nil=True)


def _rule(rule: Json, request: Request) -> bool:
    def has(key: str, value: str) -> bool:
        listed = rule.get(key) or []
        return "*" in listed or value in listed

    return (
        has("apiGroups", request.group)
        and has("resources", request.resource)
        and has("operations", request.operation)
    )


def _variables(declared: list[Json], bound: dict[str, t.Any]) -> t.Any:
    """The policy's variables, in order (each may read the ones before it)."""
    from celpy import celtypes

    values = celtypes.MapType({})
    for variable in declared:
        bound["variables"] = values
        expression = str(variable.get("expression", ""))
        values[celtypes.StringType(str(variable.get("name")))] = (
            _constant(expression) if _is_constant(expression) else evaluate(expression, bound)
        )
    return values


REQUEST_NAMES = {"object", "oldObject", "request", "namespaceObject", "params", "variables"}


@functools.lru_cache(maxsize=512)
def _is_constant(expression: str) -> bool:
    """Whether the expression reads nothing of the request: a literal, such as the generated
    policies' maps of every namespace's queues and levels."""
    return not REQUEST_NAMES & set(_tokens(expression))


@functools.lru_cache(maxsize=64)
def _constant(expression: str) -> t.Any:
    """A constant variable's value, evaluated once: a map of thousands of namespaces is built
    once per policy, not once per object judged."""
    return evaluate(expression, {})


def _message(validation: Json, bound: dict[str, t.Any], result: t.Any) -> str:
    expression = str(validation.get("expression", ""))
    if _is_error(result):
        return f"expression {expression!r} could not be evaluated: {result}"
    if validation.get("messageExpression"):
        text = evaluate(str(validation["messageExpression"]), bound)
        if not _is_error(text) and str(text).strip():
            return str(text)
    return str(validation.get("message") or f"failed expression: {expression}")


def _true(result: t.Any) -> bool:
    return result is True or (type(result).__name__ == "BoolType" and bool(result))


def _is_error(result: t.Any) -> bool:
    return type(result).__name__ == "CELEvalError"
