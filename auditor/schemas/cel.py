"""The CRDs' `x-kubernetes-validations` CEL rules, evaluated offline with cel-python (celpy).

The API server applies structural defaults before it runs the rules, so we do too. Transition
rules (those reading `oldSelf`) only run on updates: `evaluate` sees each object as a create and
skips them (counted, so the command can say so); `transitions.evaluate` runs them on two
revisions of an object, for plan. Rules needing a Kubernetes CEL function that neither celpy nor
`cel_library` provides are skipped too.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import os
import re
import typing as t
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from auditor import cache
from auditor.k8s import quantity as k8s_quantity
from auditor.k8s.objects import FieldPath

if t.TYPE_CHECKING:  # celpy and lark load on the first rule evaluated: ~0.1 s of imports
    import celpy
    import lark

Schema = dict[str, t.Any]
ANY = "*"  # a location step over every list item or map value


@dataclass(frozen=True)
class Rule:
    location: tuple[str, ...]  # where in the object `self` is bound; ANY steps over items
    rule: str
    message: str
    field_path: str | None
    optional_old_self: bool = False  # oldSelf is a CEL optional, and the rule runs on creates
    # Per ANY step, how the items of two revisions pair up for `oldSelf`: () by map key, the
    # list-map keys of an `x-kubernetes-list-type: map` list, None when they cannot (other lists).
    correlation: tuple[tuple[str, ...] | None, ...] = ()

    @property
    def transition(self) -> bool:
        return "oldSelf" in self.rule


@dataclass(frozen=True)
class Violation:
    path: FieldPath
    message: str
    rule: str


def collect(
    schema: Schema,
    location: tuple[str, ...] = (),
    correlation: tuple[tuple[str, ...] | None, ...] = (),
) -> list[Rule]:
    """Every CEL rule in `schema`, with the location of the value it validates."""
    rules = [
        Rule(
            location,
            str(v["rule"]),
            str(v.get("message") or f"failed rule: {v['rule']}"),
            v.get("fieldPath"),
            v.get("optionalOldSelf") is True,
            correlation,
        )
        for v in schema.get("x-kubernetes-validations") or []
    ]
    for name, sub in (schema.get("properties") or {}).items():
        rules += collect(sub, (*location, name), correlation)
    items, values = schema.get("items"), schema.get("additionalProperties")
    if isinstance(items, dict):
        is_map = schema.get("x-kubernetes-list-type") == "map"
        keys = tuple(schema.get("x-kubernetes-list-map-keys") or ()) if is_map else None
        rules += collect(items, (*location, ANY), (*correlation, keys or None))
    if isinstance(values, dict):
        rules += collect(values, (*location, ANY), (*correlation, ()))
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key) or []:
            rules += collect(sub, location, correlation)
    return rules


def warm() -> None:
    """Load the evaluator (celpy, lark and the CEL parser) now, before a fork: the processes
    that evaluate rules then share one load."""
    _environment()


@functools.cache
def _environment() -> celpy.Environment:
    """celpy's environment, built on first use; its parser from lark's cache (below)."""
    import celpy
    from celpy.celparser import CELParser

    if CELParser.CEL_PARSER is None:
        CELParser.CEL_PARSER = _parser()
    return celpy.Environment()


def _parser() -> lark.Lark:
    """celpy's CEL parser, as celpy builds it, but with lark's analysed grammar kept in the user
    cache directory: analysing it takes ~0.35 s per process, loading it ~0.03 s. The file is a
    tool artefact named by the lark and celpy versions (lark also checks the grammar's hash),
    written under a temporary name and renamed, so parallel workers never read half a file."""
    import celpy
    import lark
    from celpy.celparser import CELParser

    grammar = (Path(celpy.__file__).parent / "cel.lark").read_text()
    folder = cache.area("cel")
    final = folder / f"{cache.key(lark.__version__, metadata.version('cel-python'))[:32]}.lark"
    kept: str | bool = str(final)
    temp: Path | None = None
    try:
        if not final.exists():
            folder.mkdir(parents=True, exist_ok=True)
            temp = folder / f".{final.name}.{os.getpid()}"
            kept = str(temp)
    except OSError:
        kept = False  # no cache directory: analyse the grammar every time
    parser = lark.Lark(
        grammar,
        parser="lalr",
        start="expr",
        debug=True,
        g_regex_flags=re.M,
        lexer_callbacks={"IDENT": CELParser.ambiguous_literals},
        propagate_positions=True,
        maybe_placeholders=False,
        priority="invert",
        tree_class=lark.Tree,
        cache=kept,
    )
    if temp is not None:
        with contextlib.suppress(OSError):
            os.replace(temp, final)
    return parser


@functools.lru_cache(maxsize=1024)
def _program(rule: str) -> celpy.Runner | None:
    """The compiled rule, with the Kubernetes extensions; None when celpy cannot parse it."""
    from celpy.celparser import CELParseError

    from auditor.schemas.cel_library import FUNCTIONS

    env = _environment()
    try:
        return env.program(env.compile(rule), functions=FUNCTIONS)
    except CELParseError:
        return None


def compile_with(
    expression: str, functions: t.Mapping[str, t.Callable[..., t.Any]]
) -> celpy.Runner | None:
    """`expression` compiled with these functions (another evaluator's: admission policies');
    None when celpy cannot parse it."""
    from celpy.celparser import CELParseError

    env = _environment()
    try:
        return env.program(env.compile(expression), functions=dict(functions))
    except CELParseError:
        return None


def with_defaults(schema: Schema, value: t.Any) -> t.Any:
    """A copy of `value` with the schema's structural defaults filled in, as the server does."""
    value = copy.deepcopy(value)
    _default(schema, value)
    return value


def _default(schema: Schema, value: t.Any) -> None:
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for name, sub in properties.items():
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
        extra = schema.get("additionalProperties")
        for name, item in value.items():
            sub = properties.get(name) or (extra if isinstance(extra, dict) else None)
            if sub is not None:
                _default(sub, item)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _default(schema["items"], item)


def _at(
    value: t.Any, location: tuple[str, ...], path: FieldPath = ()
) -> t.Iterator[tuple[FieldPath, t.Any]]:
    if value is None:
        return
    if not location:
        yield path, value
        return
    step, rest = location[0], location[1:]
    if step == ANY:
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield from _at(item, rest, (*path, i))
        elif isinstance(value, dict):
            for key, item in value.items():
                yield from _at(item, rest, (*path, str(key)))
    elif isinstance(value, dict) and step in value:
        yield from _at(value[step], rest, (*path, step))


def evaluate(
    rules: t.Sequence[Rule], body: t.Any, unsupported: set[str] | None = None
) -> list[Violation]:
    """The rules `body` breaks. Transition rules are not evaluated; rules that need a function
    the offline evaluator lacks are not either, and go into `unsupported` (never guessed)."""
    out: list[Violation] = []
    for rule in rules:
        if rule.transition:
            continue
        for path, value in _at(body, rule.location):
            failure = verdict(rule, as_key(value))
            if failure is UNSUPPORTED:
                if unsupported is not None:
                    unsupported.add(rule.rule)
            elif failure is not None:
                out.append(Violation(path + field_steps(rule.field_path), failure, rule.rule))
    return out


UNSUPPORTED = "(not evaluated offline)"


def as_key(value: t.Any) -> str:
    """`value` as the canonical JSON `verdict` takes (equal values share a verdict)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


@functools.lru_cache(maxsize=4096)
def verdict(rule: Rule, value_json: str, old_json: str | None = None) -> str | None:
    """None when the rule holds on `self` (and `oldSelf`, given as JSON), else the message;
    UNSUPPORTED when it cannot be judged offline."""
    from celpy import celtypes
    from celpy.adapter import json_to_cel
    from celpy.evaluation import CELEvalError

    program = _program(rule.rule)
    if program is None:
        return UNSUPPORTED
    bound = {"self": json_to_cel(json.loads(value_json))}
    if old_json is not None:
        bound["oldSelf"] = json_to_cel(json.loads(old_json))
    try:
        result: object = program.evaluate(bound)
    except CELEvalError as exc:
        result = exc
    except (
        k8s_quantity.QuantityError,
        TypeError,
        ValueError,
    ) as exc:  # a bad argument, as on the server
        return f"{rule.message} (the rule could not be evaluated: {exc})"
    if isinstance(result, CELEvalError):  # celpy may also return the error as the value
        reason = str(result.args[0]) if result.args else str(result)
        if "undeclared reference" in reason:  # a function neither celpy nor we provide
            return UNSUPPORTED
        return f"{rule.message} (the rule could not be evaluated: {reason})"
    if isinstance(result, celtypes.BoolType) and bool(result):
        return None
    return rule.message


def field_steps(field_path: str | None) -> FieldPath:
    if not field_path:
        return ()
    return tuple(p for p in field_path.replace("[", ".").replace("]", "").split(".") if p)
