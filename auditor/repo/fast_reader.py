"""The fast reader: rapidyaml reads a plain manifest, as PyYAML would read it, or leaves it.

rapidyaml parses a file into a tree and writes it out as JSON in C++; json.loads builds the
values. That is several times faster than libyaml composing nodes with a Python callback
each, but rapidyaml reads YAML 1.2 and PyYAML (like Kubernetes' sigs.k8s.io/yaml) YAML 1.1:
`yes` is a boolean, `012` an octal, `~` null, `1e3` a string. So the fast reader takes only
what both read alike, and answers None (PyYAML reads the file, and says what is wrong in it)
for anything else: a parse error, anchors, aliases, tags, merge keys, tabs, directives,
explicit keys, carriage returns, a string that YAML 1.1 would read as another type, a
duplicate key, a document that is not a mapping, one nested deeper than MAX_DEPTH, a file
large enough to hold MAX_NODES nodes. The JSON keeps no lines: a document's line is its
first line of content, found in the text (lines of fields are derived later, by PyYAML).
Whether a string YAML 1.1 reads otherwise is quoted (`"1"`, `"@org/team"`) is decided from
the file's bytes, and only when they cannot tell, from rapidyaml's tree node by node.

The loader (auditor/repo/manifests.py) asks it first; tests/unit/speed/ hold it to PyYAML.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sys
import typing as t

import yaml

from auditor.repo.pyyaml_reader import MAX_DEPTH, MAX_NODES, STR_TAG

try:  # rapidyaml reads plain manifests several times faster than libyaml
    import ryml as _ryml
except ImportError:  # pragma: no cover
    _ryml = None
ENABLED = _ryml is not None  # whether the fast reader is used (a test compares with it off)

_SCALAR = yaml.ScalarNode
_PLAIN_TAGS: dict[str, str] = {}  # plain scalar text -> its implicit tag (manifests repeat a lot)
_PLAIN_TAGS_MAX = 100_000

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
# A JSON string starting with a character no plain YAML scalar may start with: rapidyaml reads
# `]x: 1` as a key, PyYAML refuses it (quoted, `"]x": 1`, both read it alike)
_INDICATOR_FIRST = re.compile(r'(?:^|[\[{,:])\s*"([\[\]{},#|>\'@`][^"\\]*)"')
# Where _INDICATOR_FIRST may match: a quote before an indicator no closing quote precedes, or
# before one a closing quote may precede (`"a"]`) when whitespace or `[{,:` comes before it
# (each match of _INDICATOR_FIRST but one at the text's start, asked apart, is one of these)
_INDICATOR_GATE = re.compile(r'"(?:[\[{#|>\'@`]|[\]},](?<=[\s\[{,:]"[\]},]))')
_PLAIN_BEFORE = frozenset(b" \n[{,:")
_PLAIN_AFTER = frozenset(b" \n:,[]{}#\t\r")
_MARKER = re.compile(rb"^---(?=[ \n]|$)([^\n]*)", re.M)
_FAST_MAX_BYTES = 2 * MAX_NODES  # a node is at least two bytes (`[1,1,...`)
_RESOLVER = yaml.resolver.Resolver()


class _NotPlain(Exception):
    """The fast reader leaves this file to PyYAML."""


def _tag(text: str) -> str:
    """The tag YAML 1.1 gives a plain scalar `text` (memoized: manifests repeat a lot)."""
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


def _document(tree: t.Any, doc: int) -> tuple[t.Any, set[str]]:
    """Document `doc` of rapidyaml's `tree` as PyYAML would read its YAML (or _NotPlain), and
    the strings in it that PyYAML would read otherwise, or refuse, were they plain (`"1"`,
    `"yes"`, `"@org/team"`): `documents` asks whether any of them is plain in the file."""
    text = _ryml.emit_json(tree, doc)
    _COUNTED.keys = 0
    body = _DECODER.decode(text)
    if _COUNTED.keys != text.count('":'):  # a duplicate key (or a string holding `":`)
        raise _NotPlain
    suspects = {s for s in set(_CANDIDATE.findall(text)) if _tag(s) != STR_TAG}
    if _INDICATOR_GATE.search(text) is not None or text.lstrip()[:1] == '"':
        suspects.update(_INDICATOR_FIRST.findall(text))  # a stray indicator, should it be plain
    if text.count("{") + text.count("[") > MAX_DEPTH and _height(body) > MAX_DEPTH:
        raise _NotPlain
    return body, suspects


def _maybe_plain(data: bytes, strings: set[str]) -> bool:
    """Whether a plain scalar of the file `data` may be one of `strings`: False when each
    string's first word (up to a space: a plain scalar folds its lines into spaces) occurs in
    the bytes only where no plain scalar begins or ends (`"1"`, `t00001`, `cq-10`), so none is
    plain. A plain scalar begins at a line's start or after a space or `[{,:`, and ends at a
    line's end or before a space or `:,]}`; a byte check in C, where asking rapidyaml's tree of
    every node (`_plain_among`) is a Python call per node."""
    size = len(data)
    for text in strings:
        word = text.split(" ", 1)[0].encode()
        at = data.find(word)
        while at >= 0:
            end = at + len(word)
            if (at == 0 or data[at - 1] in _PLAIN_BEFORE) and (
                end == size or data[end] in _PLAIN_AFTER
            ):
                return True
            at = data.find(word, at + 1)
    return False


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


def _any_plain(tree: t.Any, data: bytes, suspected: list[tuple[int, set[str]]]) -> bool:
    """Whether a document of rapidyaml's `tree` holds one of its suspect strings plain: the
    file's bytes (`data`) answer for most files, the tree (node by node) for the others."""
    every = set().union(*(strings for _doc, strings in suspected))
    return _maybe_plain(data, every) and any(
        _plain_among(tree, doc, strings) for doc, strings in suspected
    )


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


def documents(data: bytes) -> list[tuple[int, int, dict[str, t.Any]]] | None:
    """(index in the file, line, body) of each mapping document of `data`, as PyYAML would
    read them, or None: the file is one the fast reader leaves to PyYAML (see above)."""
    if not ENABLED or len(data) > _FAST_MAX_BYTES or _unread(data):
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
        suspected: list[tuple[int, set[str]]] = []
        for index, (doc, line) in enumerate(zip(docs, starts, strict=True)):
            body, suspects = _document(tree, doc)
            if suspects:
                suspected.append((doc, suspects))
            if line is None:
                if body is not None:
                    return None
                continue
            if body.__class__ is not dict:
                return None  # a list or a scalar: PyYAML's path says so
            out.append((index, line, body))
        if suspected and _any_plain(tree, data, suspected):
            return None  # `yes`, `~`, `012` unquoted, or a stray indicator: PyYAML's path
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
