"""The PyYAML reader: any YAML, every problem with its line, and the lines of fields.

libyaml composes the nodes (PyYAML's own composer where libyaml is missing); `_Builder` makes
the values, with the limits a manifest must keep (MAX_NODES, MAX_DEPTH; where aliases may be,
the file's `Budget` first, which every reader of the repository's YAML keeps), keys as
Kubernetes makes them, and a problem (a Finding of the input rules) for what the API server
would refuse or read otherwise. It reads whatever the fast reader (auditor/repo/fast_reader.py)
leaves, and derives the lines of every object's fields when a finding first asks for one.
"""

from __future__ import annotations

import datetime
import math
import re
import typing as t
from collections.abc import Iterator
from decimal import Decimal

import yaml

from auditor import rules
from auditor.k8s.objects import FieldPath
from auditor.model import Finding

_RULES = rules.of(__name__)
YAML_SYNTAX = _RULES["yaml-syntax"]
YAML_DUPLICATE_KEY = _RULES["yaml-duplicate-key"]
YAML_MERGE_KEY = _RULES["yaml-merge-key"]
YAML_BAD_KEY = _RULES["yaml-bad-key"]
YAML_TOO_LARGE = _RULES["yaml-too-large"]
YAML_RECURSIVE_ALIAS = _RULES["yaml-recursive-alias"]
YAML_TOO_DEEP = _RULES["yaml-too-deep"]
YAML_BAD_NUMBER = _RULES["yaml-bad-number"]
NOT_A_MAPPING = _RULES["not-a-mapping"]

try:  # libyaml parses several times faster; fall back to pure Python where it is missing
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

STR_TAG = "tag:yaml.org,2002:str"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"
INT_TAG = "tag:yaml.org,2002:int"
# What a scalar may become: JSON's scalars, and timestamps (Kubernetes makes them strings).
_SCALARS = frozenset({str, int, float, bool, type(None), datetime.date, datetime.datetime})
_LONG_INT = re.compile(r"[-+]?[0-9_]{100,}")
# What PyYAML's constructors raise for a value its explicit tag cannot hold (`!!timestamp x`).
CONSTRUCT_ERRORS = (ValueError, AttributeError, KeyError, TypeError, OverflowError)
_SCALAR, _MAPPING, _SEQUENCE = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode
MAX_NODES = 200_000  # per document: far beyond any real manifest, far below an alias bomb
MAX_DEPTH = 100  # nesting per document: a CRD's schema is the deepest object, at about 40
# per file, all documents together: the nodes aliases may add to those its text writes (a bomb
# may be a thousand documents, each below MAX_NODES)
MAX_ALIASED = MAX_NODES
# where an alias may be (a false match costs only a walk of the composed graph)
_ALIAS = re.compile(r"(?:^|[\s\[{,:])\*[^\s,\[\]{}]", re.M)


class _Problem(Exception):
    def __init__(self, rule: rules.Rule, message: str, line: int) -> None:
        super().__init__(message)
        self.rule, self.message, self.line = rule, message, line


class _Spent(_Problem):
    """The file's aliases used up MAX_ALIASED: nothing more of it is read."""


class _Loader(_BaseLoader):
    """libyaml's composer (PyYAML's own where libyaml is missing); `_Builder` makes the values."""


class _Builder:
    """Build plain Python values from a composed node tree (lines come later, on demand).

    Mapping keys become the strings Kubernetes makes of them (sigs.k8s.io/yaml: `1` is "1",
    `true` is "true"), so two keys are duplicates exactly when they are on the API server.
    """

    def __init__(self, loader: _BaseLoader) -> None:
        self.loader = loader
        self.visited = 0

    def build(self, node: yaml.Node, depth: int = 0) -> t.Any:
        self.visited += 1
        if self.visited > MAX_NODES:
            raise _too_large(node)
        kind = node.__class__
        if kind is _SCALAR:
            # Most scalars in manifests are plain strings: take them as they are, and leave the
            # constructor (with its per-object bookkeeping) to ints, bools, nulls and the rest.
            if node.tag == STR_TAG:
                return node.value
            return self.scalar(node)
        if depth >= MAX_DEPTH:
            raise _too_deep(node)
        if kind is _MAPPING:
            out: dict[t.Any, t.Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == STR_TAG and key_node.__class__ is _SCALAR:
                    key = key_node.value
                else:
                    key = self.key(key_node)
                if key in out:
                    raise _Problem(
                        YAML_DUPLICATE_KEY,
                        f"duplicate key {key!r} (first at line "
                        f"{_first_key_line(self, node, key_node)}); Kubernetes "
                        "would silently keep only one of them",
                        key_node.start_mark.line + 1,
                    )
                if (
                    value_node.tag == STR_TAG
                    and value_node.__class__ is _SCALAR
                    and self.visited < MAX_NODES
                ):  # build(value_node), inlined for the commonest leaf
                    self.visited += 1
                    out[key] = value_node.value
                else:
                    out[key] = self.build(value_node, depth + 1)
            return out
        if kind is _SEQUENCE:
            return [self.build(item, depth + 1) for item in node.value]
        return self.loader.construct_object(node)

    def scalar(self, node: yaml.Node) -> t.Any:
        """An int, float, bool, null or timestamp; a number JSON cannot carry is a problem, and
        so is a value its explicit tag cannot hold (`!!timestamp x`, `!!bool maybe`)."""
        try:
            value = self.loader.construct_object(node)
        except CONSTRUCT_ERRORS:
            if node.tag == INT_TAG and _LONG_INT.fullmatch(node.value):  # past 4,300 digits
                raise _bad_number(node, "more digits than a number can have") from None
            raise _Problem(
                YAML_SYNTAX,
                f"malformed YAML: {_shown(node.value)!r} is no value of its tag {node.tag}",
                node.start_mark.line + 1,
            ) from None
        if value.__class__ is float and not math.isfinite(value):
            raise _bad_number(node, "JSON has no infinity or NaN")
        if value.__class__ not in _SCALARS:  # `!!set x`, `!!binary ...`: no JSON value
            raise _Problem(
                YAML_SYNTAX,
                f"malformed YAML: the tag {node.tag} makes {_shown(node.value)!r} a "
                f"{type(value).__name__}, which no Kubernetes object holds",
                node.start_mark.line + 1,
            )
        return value

    def key(self, key_node: yaml.Node) -> str:
        if key_node.tag == STR_TAG and key_node.__class__ is yaml.ScalarNode:
            return t.cast(str, key_node.value)
        if key_node.tag == "tag:yaml.org,2002:merge":
            raise _Problem(
                YAML_MERGE_KEY,
                "YAML merge keys (<<) are not allowed in "
                "manifests: Kubernetes tools disagree on them",
                key_node.start_mark.line + 1,
            )
        if key_node.__class__ is not _SCALAR:
            raise _Problem(
                YAML_BAD_KEY, "mapping keys must be scalars", key_node.start_mark.line + 1
            )
        key = self.scalar(key_node)
        if isinstance(key, bool):
            return "true" if key else "false"
        if isinstance(key, int):
            return str(key)
        if isinstance(key, float):
            return _go_float(key)
        if isinstance(key, str):
            return key
        raise _Problem(
            YAML_BAD_KEY,
            f"a {'null' if key is None else type(key).__name__} key: Kubernetes accepts "
            "strings, numbers and booleans as keys",
            key_node.start_mark.line + 1,
        )


def _go_float(value: float) -> str:
    """A float key as sigs.k8s.io/yaml writes it: Go's %g with the shortest digits (1e+06)."""
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    text, signed = "".join(map(str, digits)), "-" if sign else ""
    if not value:
        return f"{signed}0"
    point = len(text) + exponent  # where the decimal point falls in `text`
    power = point - 1
    if power < -4 or power >= 6:  # Go's threshold for the shortest %g
        head = f"{text[0]}.{text[1:]}" if len(text) > 1 else text
        return f"{signed}{head}e{'-' if power < 0 else '+'}{abs(power):02d}"
    if point <= 0:
        return f"{signed}0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{signed}{text}{'0' * (point - len(text))}"
    return f"{signed}{text[:point]}.{text[point:]}"


class Budget:
    """What alias expansion may cost one file, judged on the composed graph (each shared node
    measured once, so a bomb is never expanded to be judged): no document past MAX_NODES nodes
    or MAX_DEPTH levels or holding itself, and MAX_ALIASED nodes more than the text writes for
    all the file's documents together. Every reader of repository YAML keeps it: the manifests
    (`documents`), embedded YAML (`load_one`), and what a render reads (`over_budget`)."""

    def __init__(self) -> None:
        self.aliased = 0

    def charge(self, root: yaml.Node) -> None:
        """Raise the _Problem of the first limit the document under `root` breaks."""
        nodes, distinct = _measure(root)
        self.aliased += nodes - distinct
        if self.aliased > MAX_ALIASED:
            raise _Spent(
                YAML_TOO_LARGE,
                f"the file's aliases expand to more than {MAX_ALIASED} nodes in all (an alias "
                "bomb?); the rest of the file is not read",
                root.start_mark.line + 1,
            )


def _measure(root: yaml.Node) -> tuple[int, int]:
    """(nodes, distinct nodes) of the document under `root` as its aliases expand it; a
    _Problem past MAX_NODES or MAX_DEPTH, or for an alias inside its own node. Iterative: a
    graph as deep as the composer allows exhausts no stack."""
    size: dict[int, int] = {}
    height: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, yaml.Node | None]] = [(root, root)]  # (node, its holder)
    while stack:
        node, holder = stack.pop()
        key = id(node)
        if holder is None:  # all below it measured
            on_path.discard(key)
            kids = _children(node)
            size[key] = min(1 + sum(size[id(k)] for k in kids), MAX_NODES + 1)
            height[key] = 1 + max((height[id(k)] for k in kids), default=0)
            if size[key] > MAX_NODES:
                raise _too_large(root)
            if height[key] > MAX_DEPTH:
                raise _Problem(YAML_TOO_DEEP, _DEEP, node.start_mark.line + 1)
        elif key in on_path:  # at the node whose alias loops
            raise _Problem(YAML_RECURSIVE_ALIAS, _LOOPS, holder.start_mark.line + 1)
        elif key in size:
            continue
        elif node.__class__ is _SCALAR:
            size[key], height[key] = 1, 0
        else:
            on_path.add(key)
            stack.append((node, None))
            stack.extend((kid, node) for kid in _children(node))
    return size[id(root)], len(size)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if node.__class__ is _SCALAR:
        return []
    if node.__class__ is _SEQUENCE:
        return t.cast(list[yaml.Node], node.value)
    return [n for pair in node.value for n in pair]


_LOOPS = "an alias refers to a node that contains it, so the document never ends"
_DEEP = f"the document nests deeper than {MAX_DEPTH} levels; no Kubernetes object does"


def _too_large(node: yaml.Node) -> _Problem:
    return _Problem(
        YAML_TOO_LARGE,
        f"document expands to more than {MAX_NODES} nodes (an alias bomb?)",
        node.start_mark.line + 1,
    )


def _too_deep(node: yaml.Node) -> _Problem:
    looped = _cycle(node)
    if looped is not None:
        return _Problem(YAML_RECURSIVE_ALIAS, _LOOPS, looped.start_mark.line + 1)
    return _Problem(YAML_TOO_DEEP, _DEEP, node.start_mark.line + 1)


def _cycle(start: yaml.Node) -> yaml.Node | None:
    """The node through which the graph under `start` (as aliases make it) loops, if any."""
    on_path: set[int] = set()
    done: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(start, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            done.add(id(node))
            continue
        if id(node) in on_path:
            return node
        if id(node) in done or node.__class__ is _SCALAR:
            continue
        on_path.add(id(node))
        stack.append((node, True))
        children = (
            node.value if node.__class__ is _SEQUENCE else [n for pair in node.value for n in pair]
        )
        stack.extend((child, False) for child in children)
    return None


def _shown(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} chars)"


def _bad_number(node: yaml.Node, why: str) -> _Problem:
    return _Problem(
        YAML_BAD_NUMBER,
        f"{_shown(node.value)} cannot be sent to the API server ({why}); quote it if text was "
        "meant",
        node.start_mark.line + 1,
    )


def _first_key_line(builder: _Builder, node: yaml.Node, duplicate: yaml.Node) -> str:
    """Where the key that `duplicate` repeats was written: the last earlier key of the same text."""
    name, found = str(builder.key(duplicate)), "?"
    for key_node, _value in node.value:
        if key_node is duplicate:
            break
        if str(builder.key(key_node)) == name:
            found = str(key_node.start_mark.line + 1)
    return found


def _record_lines(
    loader: _BaseLoader, node: yaml.Node, path: FieldPath, lines: dict[FieldPath, int]
) -> None:
    """The line of every path in a document: a key's own line, an item's first line."""
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.tag == STR_TAG and isinstance(key_node, yaml.ScalarNode):
                key = key_node.value
            else:
                key = _Builder(loader).key(key_node)  # the text the object has for it
            lines[(*path, key)] = key_node.start_mark.line + 1
            _record_lines(loader, value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _record_lines(loader, item, (*path, i), lines)


class FileLines:
    """The field lines of a file's objects, derived again from its text when first asked for.

    Keeping a dict of every field's line for every object costs a fifth of loading a large
    repository, and most runs never ask for one: a finding does, for its object only. The
    first request composes the file once and records the lines of all its objects (those
    documents built without a problem, so within MAX_NODES), not one pass per object.
    """

    __slots__ = ("found", "text", "wanted")

    def __init__(self, text: str | t.Callable[[], str]) -> None:
        self.text = text  # or, for a file served from the cache, how to read it again
        self.wanted: list[int] = []  # indexes of the documents that became Resources
        self.found: dict[int, dict[FieldPath, int]] | None = None

    def document(self, index: int) -> dict[FieldPath, int]:
        if self.found is None:
            found: dict[int, dict[FieldPath, int]] = {}
            text = self.text if isinstance(self.text, str) else self.text()
            loader = _Loader(text)
            wanted = set(self.wanted)  # a set: a file may hold a hundred thousand objects
            try:
                for i in range(self.wanted[-1] + 1):
                    node = t.cast(yaml.Node, _next_document(loader))
                    if i in wanted:
                        _record_lines(loader, node, (), found.setdefault(i, {}))
            finally:
                loader.dispose()
            self.found, self.text = found, ""
        return self.found[index]


class Lines:
    """One object's `Resource.line_source`: its document's lines, from its file's FileLines."""

    __slots__ = ("file", "index")

    def __init__(self, file: FileLines, index: int) -> None:
        self.file, self.index = file, index

    def __call__(self) -> dict[FieldPath, int]:
        return self.file.document(self.index)


Read = tuple[int, int, dict[str, t.Any]]  # a mapping document: its index in the file, line, body


def documents(text: str, file: str) -> Iterator[Read | Finding]:
    """Each mapping document of `text`, and each problem as a Finding, in the file's order."""
    loader = _Loader(text)
    budget = Budget() if _ALIAS.search(text) else None  # without aliases, the builder's count
    index = -1
    try:
        while True:
            try:
                node = _next_document(loader)
            except yaml.YAMLError as exc:
                yield _yaml_error(exc, file, text)
                break
            if node is None:
                break
            index += 1
            try:
                if budget is not None:
                    budget.charge(node)
                body = _Builder(loader).build(node)
            except _Spent as p:
                yield _finding(file, p.line, p.rule, p.message)
                break
            except _Problem as p:
                yield _finding(file, p.line, p.rule, p.message)
                continue
            except yaml.YAMLError as exc:
                yield _yaml_error(exc, file, text)
                continue
            line = node.start_mark.line + 1
            if body is None:
                continue  # an empty document, e.g. a trailing `---`
            if not isinstance(body, dict):
                yield _finding(
                    file,
                    line,
                    NOT_A_MAPPING,
                    f"a document must be a mapping (an object), not a {type(body).__name__}",
                )
                continue
            yield index, line, body
    finally:
        loader.dispose()


class BadYaml(yaml.YAMLError):
    """What `load_one` refused, at a line: a YAMLError, as PyYAML's own are."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.problem_mark = yaml.Mark("<text>", 0, line - 1, 0, "", 0)


def load_one(text: str) -> t.Any:
    """One YAML document (the YAML a ConfigMap holds, say) with the loader's limits, in place
    of yaml.safe_load: recursive aliases, alias bombs, numbers JSON cannot hold and values
    their tag cannot hold raise BadYaml (a yaml.YAMLError), never anything else."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        Budget().charge(node)
        return _Builder(loader).build(node)
    except _Problem as p:
        raise BadYaml(p.message, p.line) from None
    finally:
        loader.dispose()


def over_budget(text: str, file: str) -> Finding | None:
    """The first limit of the file's Budget that `text` breaks, as a Finding at its line; None
    when it keeps them (or YAML cannot read it: the reader that does says why). For YAML read
    by other means (a renderer's inputs), which must keep the limits the manifests keep."""
    loader = _Loader(text)
    budget = Budget()
    try:
        while (node := _next_document(loader)) is not None:
            budget.charge(node)
    except _Problem as p:
        return _finding(file, p.line, p.rule, p.message)
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()
    return None


def _next_document(loader: _BaseLoader) -> yaml.Node | None:
    # compose_node with anchors reset per document, as yaml.compose_all does
    if loader.check_node():
        return t.cast(yaml.Node, loader.get_node())
    return None


def _yaml_error(exc: yaml.YAMLError, file: str, source: str = "") -> Finding:
    """One line, at the line the parser gave up (a reader error names a position instead)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else 1
    if isinstance(exc, yaml.reader.ReaderError):
        line = source[: exc.position].count("\n") + 1
        char = exc.character
        text = f"character #x{char:04x}: {exc.reason}" if isinstance(char, int) else exc.reason
    else:
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        text = f"{context}, {problem}" if context else str(problem)
        if mark is not None and _tab_at(source, mark.line, mark.column):
            text = f"a tab at column {mark.column + 1}: YAML indents with spaces only ({text})"
    return _finding(file, line, YAML_SYNTAX, f"malformed YAML: {' '.join(text.split())}")


def _tab_at(source: str, line: int, column: int) -> bool:
    """Whether the parser stopped at a tab (its message does not always say the character)."""
    lines = source.splitlines()
    return line < len(lines) and lines[line][column : column + 1] == "\t"


def _finding(file: str, line: int, rule: rules.Rule, message: str) -> Finding:
    return Finding(rule, message, file=file, line=line)
