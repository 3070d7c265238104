"""Turn YAML text into Resources that remember the file and line of every field.

Bad input never stops a run: each problem becomes a Finding with the file and line, and the
loader goes on with the next document or file.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import re
import sys
import typing as t
from decimal import Decimal

import yaml

from auditor import rules
from auditor.model import Finding, Resource

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
MISSING_IDENTITY = _RULES["missing-identity"]
NOT_UTF8 = _RULES["not-utf8"]

try:  # libyaml parses several times faster; fall back to pure Python where it is missing
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

try:  # rapidyaml reads plain manifests several times faster still (see `fast_documents`)
    import ryml as _ryml
except ImportError:  # pragma: no cover
    _ryml = None
FAST = _ryml is not None  # whether the fast reader is used (a test compares with it off)

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
Path_ = tuple[str | int, ...]


class _Problem(Exception):
    def __init__(self, rule: rules.Rule, message: str, line: int) -> None:
        super().__init__(message)
        self.rule, self.message, self.line = rule, message, line


_PLAIN_TAGS: dict[str, str] = {}  # plain scalar text -> its implicit tag (manifests repeat a lot)
_PLAIN_TAGS_MAX = 100_000


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
            raise _Problem(
                YAML_TOO_LARGE,
                f"document expands to more than {MAX_NODES} nodes (an alias bomb?)",
                node.start_mark.line + 1,
            )
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


def _too_deep(node: yaml.Node) -> _Problem:
    looped = _cycle(node)
    if looped is not None:
        return _Problem(
            YAML_RECURSIVE_ALIAS,
            "an alias refers to a node that contains it, so the document never ends",
            looped.start_mark.line + 1,
        )
    return _Problem(
        YAML_TOO_DEEP,
        f"the document nests deeper than {MAX_DEPTH} levels; no Kubernetes object does",
        node.start_mark.line + 1,
    )


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
    loader: _BaseLoader, node: yaml.Node, path: Path_, lines: dict[Path_, int]
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


class _FileLines:
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
        self.found: dict[int, dict[Path_, int]] | None = None

    def document(self, index: int) -> dict[Path_, int]:
        if self.found is None:
            found: dict[int, dict[Path_, int]] = {}
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


class _Lines:
    """One object's `Resource.line_source`: its document's lines, from its file's _FileLines."""

    __slots__ = ("file", "index")

    def __init__(self, file: _FileLines, index: int) -> None:
        self.file, self.index = file, index

    def __call__(self) -> dict[Path_, int]:
        return self.file.document(self.index)


Document = tuple[dict[str, t.Any], int, int]  # a Resource's body, line, index in its file


def documents(resources: list[Resource]) -> list[Document]:
    """What `restore` needs to make `resources` (all of one file) again: plain, picklable data."""
    return [(r.body, r.line, t.cast(_Lines, r.line_source).index) for r in resources]


def restore(docs: list[Document], file: str, text: t.Callable[[], str]) -> list[Resource]:
    """The Resources of a file from `documents`, without parsing it; field lines are derived
    from `text()` (the file, read again) when a finding first asks for one."""
    lines = _FileLines(text)
    lines.wanted = [index for _body, _line, index in docs]
    return [Resource(body, file, line, line_source=_Lines(lines, i)) for body, line, i in docs]


def decode(data: bytes) -> str:
    """A file's bytes as `load_bytes` reads them (UTF-8, without a byte order mark)."""
    text = data.decode("utf-8")
    return text[1:] if text.startswith("\ufeff") else text


def load_text(text: str, file: str) -> tuple[list[Resource], list[Finding]]:
    """Every mapping document in `text` as a Resource; everything wrong as a Finding."""
    return _load(text, text.encode("utf-8"), file)


def _load(text: str, data: bytes, file: str) -> tuple[list[Resource], list[Finding]]:
    """`text`'s documents (`data`: the same, as UTF-8 without a byte order mark): rapidyaml
    reads a plain manifest; PyYAML anything it leaves (and every problem, with its line)."""
    resources: list[Resource] = []
    findings: list[Finding] = []
    file_lines: _FileLines | None = None
    fast = fast_documents(data)
    if fast is not None:
        for index, line, body in fast:
            file_lines = file_lines or _FileLines(text)
            _take(body, line, index, file, file_lines, resources, findings)
        return resources, findings
    loader = _Loader(text)
    index = -1
    try:
        while True:
            try:
                node = _next_document(loader)
            except yaml.YAMLError as exc:
                findings.append(_yaml_error(exc, file, text))
                break
            if node is None:
                break
            index += 1
            builder = _Builder(loader)
            try:
                body = builder.build(node)
            except _Problem as p:
                findings.append(_finding(file, p.line, p.rule, p.message))
                continue
            except yaml.YAMLError as exc:
                findings.append(_yaml_error(exc, file, text))
                continue
            line = node.start_mark.line + 1
            if body is None:
                continue  # an empty document, e.g. a trailing `---`
            if not isinstance(body, dict):
                findings.append(
                    _finding(
                        file,
                        line,
                        NOT_A_MAPPING,
                        f"a document must be a mapping (an object), not a {type(body).__name__}",
                    )
                )
                continue
            file_lines = file_lines or _FileLines(text)
            _take(body, line, index, file, file_lines, resources, findings)
    finally:
        loader.dispose()
    return resources, findings


def _take(
    body: dict[str, t.Any],
    line: int,
    index: int,
    file: str,
    file_lines: _FileLines,
    resources: list[Resource],
    findings: list[Finding],
) -> None:
    """A mapping document as a Resource, or the finding that it has no identity."""
    file_lines.wanted.append(index)
    resource = Resource(body, file, line, line_source=_Lines(file_lines, index))
    missing = [
        k for k in ("apiVersion", "kind") if not isinstance(body.get(k), str) or not body.get(k)
    ]
    meta = body.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        missing.append(f"metadata mapping (it is a {_yaml_type(meta)})")
    elif not missing and not resource.name:
        missing.append("metadata.name")
    if missing:
        findings.append(
            _finding(file, line, MISSING_IDENTITY, f"the object has no {', '.join(missing)}")
        )
        return
    resources.append(resource)


# -- the fast reader ------------------------------------------------------------------------
#
# rapidyaml parses a file into a tree and writes it out as JSON in C++; json.loads builds the
# values. That is several times faster than libyaml composing nodes with a Python callback
# each, but rapidyaml reads YAML 1.2 and PyYAML (like Kubernetes' sigs.k8s.io/yaml) YAML 1.1:
# `yes` is a boolean, `012` an octal, `~` null, `1e3` a string. So the fast reader takes only
# what both read alike, and answers None (PyYAML reads the file, and says what is wrong in it)
# for anything else: a parse error, anchors, aliases, tags, merge keys, tabs, directives,
# explicit keys, carriage returns, a string that YAML 1.1 would read as another type, a
# duplicate key, a document that is not a mapping, one nested deeper than MAX_DEPTH, a file
# large enough to hold MAX_NODES nodes. The JSON keeps no lines: a document's line is its
# first line of content, found in the text (lines of fields are derived later, by PyYAML).

_IMPLICIT_FIRST = frozenset("yYnNtTfFoO-+0123456789.<~=")  # where YAML 1.1 may read a non-string
# tabs, carriage returns, anchors, aliases, tags, merge keys, directives, document ends,
# explicit keys (`? ` anywhere: in a URL's query it is followed by no space), and the characters
# YAML refuses in a stream (C0 and C1 controls, DEL, U+FFFE, U+FFFF; rapidyaml reads a NUL as
# the end, PyYAML refuses it, and its error says where)
_RARE = re.compile(rb"[\t\r&*!%?<\x00-\x08\x0b\x0c\x0e-\x1f\x7f\xc2\xef]")
_UNREAD = re.compile(
    rb"[\t\r&*!\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x84\x86-\x9f]|\xef\xbf[\xbe\xbf]"
    rb"|<<|(?:^|\n)%|\?[ \n]|^\? "
)
_SIGNED_POINT = re.compile(rb"[-+]\.[0-9]")  # `-.5`: rapidyaml writes -0.5, YAML 1.1 a string
_BLANK_OR_COMMENT = frozenset(b" #\n")
# A JSON string (of no escapes: a plain scalar holds none) YAML 1.1 may read as another type
_CANDIDATE = re.compile(r'"([yYnNtTfFoO\-+0-9.<~=][^"\\]*)"')
_MARKER = re.compile(rb"^---(?=[ \n]|$)([^\n]*)", re.M)
_FAST_MAX_BYTES = 2 * MAX_NODES  # a node is at least two bytes (`[1,1,...`)
_RESOLVER = yaml.resolver.Resolver()


class _NotPlain(Exception):
    """The fast reader leaves this file to PyYAML."""


def _tag(text: str) -> str:
    """The tag YAML 1.1 gives a plain scalar `text` (memoized, as `_Loader.resolve`)."""
    tag = _PLAIN_TAGS.get(text)
    if tag is None:
        tag = t.cast(str, _RESOLVER.resolve(_SCALAR, text, (True, False)))  # type: ignore[no-untyped-call]
        if len(_PLAIN_TAGS) >= _PLAIN_TAGS_MAX:
            _PLAIN_TAGS.clear()
        _PLAIN_TAGS[text] = tag
    return tag


class _Counted:
    """json's object hook: counts the keys of the mappings it builds (one document at a time;
    the fast reader runs in one thread)."""

    keys = 0

    def __call__(self, mapping: dict[str, t.Any]) -> dict[str, t.Any]:
        self.keys += len(mapping)
        return mapping


def _document(tree: t.Any, doc: int) -> t.Any:
    """Document `doc` of rapidyaml's `tree` as PyYAML would read its YAML, or _NotPlain."""
    text = _ryml.emit_json(tree, doc)
    _COUNTED.keys = 0
    body = _DECODER.decode(text)
    if _COUNTED.keys != text.count('":'):  # a duplicate key (or a string holding `":`)
        raise _NotPlain
    others = {s for s in set(_CANDIDATE.findall(text)) if _tag(s) != STR_TAG}
    if others and _plain_among(tree, doc, others):
        raise _NotPlain  # `yes`, `~`, `012` unquoted: YAML 1.1 reads another type
    if text.count("{") + text.count("[") > MAX_DEPTH and _height(body) > MAX_DEPTH:
        raise _NotPlain
    return body


def _plain_among(tree: t.Any, doc: int, strings: set[str]) -> bool:
    """Whether a plain (unquoted) key or value under node `doc` of rapidyaml's `tree` is one
    of `strings` (asked only of the rare document that holds `"1"` or `"yes"`: a walk in
    Python, a call per node)."""
    wanted = {s.encode() for s in strings}
    stack = [doc]
    while stack:
        node = stack.pop()
        if tree.has_key(node) and tree.is_key_plain(node) and bytes(tree.key(node)) in wanted:
            return True
        if tree.has_val(node) and tree.is_val_plain(node) and bytes(tree.val(node)) in wanted:
            return True
        child = tree.first_child(node)
        while child != _ryml.NONE:
            stack.append(child)
            child = tree.next_sibling(child)
    return False


def _height(value: t.Any) -> int:
    """How deep containers nest in `value` (a mapping of scalars: 1)."""
    if value.__class__ is dict:
        return 1 + max(map(_height, value.values()), default=0)
    if value.__class__ is list:
        return 1 + max(map(_height, value), default=0)
    return 0


def _float(text: str) -> float | str:
    """A JSON number with a point or exponent, as YAML 1.1 reads the same plain scalar."""
    tag = _tag(text)
    if tag == STR_TAG:
        return text  # `1e3`: YAML 1.1's floats need a point
    value = float(text)
    if tag != "tag:yaml.org,2002:float" or not math.isfinite(value):
        raise _NotPlain
    return value


def _refuse(_text: str) -> t.NoReturn:
    raise _NotPlain


_COUNTED = _Counted()
_DECODER = json.JSONDecoder(object_hook=_COUNTED, parse_float=_float, parse_constant=_refuse)


def _starts(data: bytes) -> list[int | None] | None:
    """Each document's first line of content (None: an empty document), as PyYAML counts
    documents: the text before the first `---` is one only when it holds content. None when
    a `---` line carries content (`--- !tag`, `--- |`): PyYAML reads that file."""
    if not data.startswith(b"---") and b"\n---" not in data:  # one document, or none
        at = _content_at(data, 0, len(data))
        return [] if at < 0 else [data.count(b"\n", 0, at) + 1]
    markers = list(_MARKER.finditer(data))
    ends = [m.start() for m in markers] + [len(data)]
    out: list[int | None] = []
    at = _content_at(data, 0, ends[0])
    if at >= 0:
        out.append(data.count(b"\n", 0, at) + 1)
    for marker, end in zip(markers, ends[1:], strict=True):
        rest = marker.group(1).strip()
        if rest and not rest.startswith(b"#"):
            return None
        at = _content_at(data, marker.end() + 1, end)
        out.append(None if at < 0 else data.count(b"\n", 0, at) + 1)
    return out


def _content_at(data: bytes, begin: int, end: int) -> int:
    """The offset of the first line in data[begin:end] that is neither blank nor a comment."""
    pos = begin
    while pos < end:
        if data[pos] not in _BLANK_OR_COMMENT:  # the common case: content at once
            return pos
        stop = data.find(b"\n", pos, end)
        stop = end if stop < 0 else stop
        stripped = data[pos:stop].strip()
        if stripped and not stripped.startswith(b"#"):
            return pos
        pos = stop + 1
    return -1


def _unread(data: bytes) -> bool:
    """Whether `data` holds what the fast reader leaves to PyYAML (scans in C: the rare
    characters first, the exact marks only where one is found)."""
    return (
        (_RARE.search(data) is not None and _UNREAD.search(data) is not None)
        or b"\n..." in data
        or data.startswith(b"...")
        or ((b"-." in data or b"+." in data) and _SIGNED_POINT.search(data) is not None)
    )


def fast_documents(data: bytes) -> list[tuple[int, int, dict[str, t.Any]]] | None:
    """(index in the file, line, body) of each mapping document of `data`, as PyYAML would
    read them, or None: the file is one the fast reader leaves to PyYAML (see above)."""
    if not FAST or len(data) > _FAST_MAX_BYTES or _unread(data):
        return None
    starts = _starts(data)
    if starts is None:
        return None
    if not starts:
        return []
    try:
        if _QUIET.depth:
            tree = _ryml.parse_in_arena(data)
        else:
            with quiet():
                tree = _ryml.parse_in_arena(data)
        root = tree.root_id()
        docs = list(_ryml.children(tree, root)) if tree.is_stream(root) else [root]
        if len(docs) != len(starts):
            return None
        out: list[tuple[int, int, dict[str, t.Any]]] = []
        for index, (doc, line) in enumerate(zip(docs, starts, strict=True)):
            body = _document(tree, doc)
            if line is None:
                if body is not None:
                    return None
                continue
            if body.__class__ is not dict:
                return None  # a list or a scalar: PyYAML's path says so
            out.append((index, line, body))
        return out
    except Exception:  # rapidyaml's parse errors, _NotPlain, JSON it wrote that is not JSON
        return None


class _Quiet:
    depth = 0


_QUIET = _Quiet()


@contextlib.contextmanager
def quiet() -> t.Iterator[None]:
    """rapidyaml writes its parse errors to file descriptor 2 before raising: hide them while
    files are read (the file goes to PyYAML, whose message becomes the finding). A loader of
    many files says so once around them, not once per file."""
    if _QUIET.depth:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    os.close(null)
    _QUIET.depth += 1
    try:
        yield
    finally:
        _QUIET.depth -= 1
        os.dup2(saved, 2)
        os.close(saved)


def _yaml_type(value: object) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__
    )


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
        return None if node is None else _Builder(loader).build(node)
    except _Problem as p:
        raise BadYaml(p.message, p.line) from None
    finally:
        loader.dispose()


def _next_document(loader: _BaseLoader) -> yaml.Node | None:
    # compose_node with anchors reset per document, as yaml.compose_all does
    if loader.check_node():
        return t.cast(yaml.Node, loader.get_node())
    return None


def load_bytes(data: bytes, file: str) -> tuple[list[Resource], list[Finding]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return [], [
            _finding(
                file,
                line,
                NOT_UTF8,
                f"the file is not UTF-8 (byte 0x{data[exc.start]:02x} at offset "
                f"{exc.start}); save it as UTF-8",
            )
        ]
    if text.startswith("\ufeff"):
        return _load(text[1:], data[3:], file)
    return _load(text, data, file)


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
