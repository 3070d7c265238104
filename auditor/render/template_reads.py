"""Which values a Helm template reads on each of its lines, by their whole key path.

A template reads values through `.Values.a.b`, `$.Values.a.b`, `index .Values.a "b" 0`, and
through the dot and the variables that `range` and `with` set: inside
`{{- range $name, $q := .Values.queues }}`, `$q.clusterQueue` reads `queues.<item>.clusterQueue`
and `$name` is the item's key. The item a range stands at is a wildcard (`Wild`), bound per
rendered object by auditor/render/locate.py. Nothing is evaluated: the template's text is read
action by action, `end` closing what `range`, `with`, `if`, `define` and `block` opened.
"""

from __future__ import annotations

import re
import typing as t
from dataclasses import dataclass


@dataclass(frozen=True)
class Wild:
    """The item of the `range` written on template line `line`."""

    line: int


Part = str | int | Wild


@dataclass(frozen=True)
class Ref:
    """A values key path a template reads; `key`: the key (or index) of its last item instead."""

    path: tuple[Part, ...]
    key: bool = False


class _Root:
    """The chart's top-level object (`.` outside any range, `$`): `.Values` is its values."""


ROOT = _Root()
Val = Ref | _Root | None  # what the dot or a variable stands for (None: nothing of the values)

_ACTION = re.compile(r"\{\{-?(.*?)-?\}\}", re.S)
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`')
_INDEX = re.compile(r'\bindex\s+(\$?\w*(?:\.\w+)*)((?:\s+(?:"[^"]*"|\d+))+)')
_TOKEN = re.compile(r"(?<![\w)$.])(\$\w*)?((?:\.\w+)*)")
_OPENS = ("range", "with", "if", "define", "block")
_CONTROL = (*_OPENS, "end", "else", "template")
_BINDS = re.compile(r"^(\$\w+)(?:\s*,\s*(\$\w+))?\s*:?=\s*(.*)$", re.S)


@dataclass
class _Frame:
    dot: Val
    names: dict[str, Val]


def reads(text: str) -> dict[int, list[Ref]]:
    """By line (from 1), the values the template's actions on that line read (control actions
    read nothing here: what they bind is read where it is used)."""
    out: dict[int, list[Ref]] = {}
    stack = [_Frame(ROOT, {"$": ROOT})]
    for found in _ACTION.finditer(text):
        line = text.count("\n", 0, found.start()) + 1
        action = _COMMENT.sub("", found.group(1)).strip()
        word = action.split(None, 1)[0] if action else ""
        if word == "end":
            if len(stack) > 1:
                stack.pop()
        elif word in _OPENS:
            stack.append(_open(word, action[len(word) :].strip(), line, stack))
        elif word not in _CONTROL:
            bound = _BINDS.match(action)
            if bound:  # `$x := expr`: the variable lives until the enclosing `end`
                stack[-1].names[bound.group(1)] = _first(bound.group(3), stack)
            out.setdefault(line, []).extend(_refs(action, stack))
    return out


def _open(word: str, rest: str, line: int, stack: list[_Frame]) -> _Frame:
    """The frame a control action opens: `range` and `with` move the dot (and bind names)."""
    here = stack[-1]
    if word == "define":
        return _Frame(None, {"$": None})  # a helper's dot is whatever it is given
    if word not in ("range", "with"):
        return _Frame(here.dot, {})
    bound = _BINDS.match(rest)
    names = [n for n in (bound.group(1), bound.group(2)) if n] if bound else []
    value = _first(bound.group(3) if bound else rest, stack)
    if word == "with":
        return _Frame(value, dict.fromkeys(names, value))
    item: Val = Ref((*value.path, Wild(line))) if isinstance(value, Ref) else None
    frame = _Frame(item, {})
    if len(names) == 2:
        frame.names[names[0]] = Ref(item.path, key=True) if isinstance(item, Ref) else None
    if names:
        frame.names[names[-1]] = item
    return frame


def _first(expr: str, stack: list[_Frame]) -> Val:
    """What an expression that binds a name or moves the dot stands for: its first read."""
    found = _refs(expr, stack, roots=True)
    return found[0] if found else None


def _refs(action: str, stack: list[_Frame], roots: bool = False) -> list[t.Any]:
    """The values key paths an action reads (with `roots`, `$`/`.` at the top too)."""
    out: list[t.Any] = []
    for found in _INDEX.finditer(_COMMENT.sub("", action)):
        base = _resolve(found.group(1), stack)
        keys = [k.strip('"') if k.startswith('"') else int(k) for k in found.group(2).split()]
        if isinstance(base, Ref) and not base.key:
            out.append(Ref((*base.path, *keys)))
        elif base is ROOT and keys[:1] == ["Values"]:
            out.append(Ref(tuple(keys[1:])))
    bare = _STRING.sub('""', _INDEX.sub("", action))
    for found in _TOKEN.finditer(bare):
        if not found.group(0):
            continue
        value = _resolve(found.group(0), stack)
        if isinstance(value, Ref) or (roots and value is ROOT):
            out.append(value)
    return out


def _resolve(token: str, stack: list[_Frame]) -> Val:
    """What `.a.b`, `$x.a.b`, `$.Values.a` or `$x` stands for where it is read."""
    head, _, tail = token.partition(".") if token.startswith("$") else ("", "", token[1:])
    if head:
        value = next((f.names[head] for f in reversed(stack) if head in f.names), None)
    else:
        value = stack[-1].dot
    names = [n for n in tail.split(".") if n]
    if not names:
        return value
    if value is ROOT:
        return Ref(tuple(names[1:])) if names[0] == "Values" else None
    if isinstance(value, Ref) and not value.key:
        return Ref((*value.path, *names))
    return None
