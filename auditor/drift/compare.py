"""The one module that imports deepdiff: its tree output becomes our own DriftItem model.

Both sides arrive normalized (auditor.drift.normalize). A change inside a plain list (verbs,
coveredResources) is reported once, for the whole list, because an index-by-index account of a
reordered or extended list helps nobody. A resource group's flavors are keyed by name, and their
order, which Kueue tries them in, is compared on its own (one item for the list).
"""

from __future__ import annotations

import enum
import typing as t
from dataclasses import dataclass

from auditor.drift.normalize import Normalized, Path
from auditor.kueue.quota import ORDERED_FLAVORS, QUOTA_KINDS


class Op(enum.StrEnum):
    ADD = "add"  # live has a field the repo does not
    CHANGE = "change"
    REMOVE = "remove"  # the repo has a field live lacks


@dataclass(frozen=True)
class DriftItem:
    op: Op
    path: Path
    desired: t.Any
    live: t.Any
    order: bool = False  # the same entries in another order (desired and live: their keys)


_MISSING = object()


def _at(tree: t.Any, path: Path) -> t.Any:
    for part in path:
        try:
            tree = tree[part]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return tree


def _shown(value: t.Any, path: Path, side: Normalized) -> t.Any:
    """The value as written (a quantity's own spelling), the defaulted value, or None."""
    if value is _MISSING:
        return None
    try:
        return side.original(path)
    except KeyError:
        return value  # filled in by a default


def diff(desired: Normalized, live: Normalized) -> list[DriftItem]:
    """Every difference between two normalized objects, in path order."""
    from deepdiff import DeepDiff  # here: a clean audit never calls it (~0.1 s of imports)

    tree = DeepDiff(desired.body, live.body, view="tree", verbose_level=2)
    paths: set[Path] = set()
    for report_type, levels in tree.items():
        for level in levels:
            path = tuple(level.path(output_format="list"))
            if report_type.startswith("iterable_item") or _in_plain_list(desired, live, path):
                path = _list_root(desired, live, path)
            paths.add(path)
    items = []
    for path in sorted(paths, key=lambda p: [str(x) for x in p]):
        want, have = _at(desired.body, path), _at(live.body, path)
        op = Op.ADD if want is _MISSING else Op.REMOVE if have is _MISSING else Op.CHANGE
        items.append(DriftItem(op, path, _shown(want, path, desired), _shown(have, path, live)))
    return sorted([*items, *reordered(desired, live)], key=lambda i: [str(x) for x in i.path])


def reordered(desired: Normalized, live: Normalized) -> list[DriftItem]:
    """Flavor lists whose shared entries come in another order live than in the repo."""
    if desired.body.get("kind") not in QUOTA_KINDS:
        return []
    out = []
    for path, want in _walk(desired.body, ORDERED_FLAVORS):
        have = _at(live.body, path)
        if not isinstance(want, dict) or not isinstance(have, dict):
            continue
        if [k for k in want if k in have] != [k for k in have if k in want]:
            names = [[str(k)[1:-1] for k in side] for side in (want, have)]
            out.append(DriftItem(Op.CHANGE, path, names[0], names[1], order=True))
    return out


def _walk(tree: t.Any, pattern: Path, at: Path = ()) -> t.Iterator[tuple[Path, t.Any]]:
    """Each value at `pattern` in `tree`, a `*` standing for every index of a list."""
    if not pattern:
        yield at, tree
        return
    head, rest = pattern[0], pattern[1:]
    if head == "*" and isinstance(tree, list):
        for index, value in enumerate(tree):
            yield from _walk(value, rest, (*at, index))
    elif isinstance(tree, dict) and head in tree:
        yield from _walk(tree[head], rest, (*at, head))


def _in_plain_list(desired: Normalized, live: Normalized, path: Path) -> bool:
    return len(path) > 1 and _is_plain_list(desired, live, path[:-1])


def _is_plain_list(desired: Normalized, live: Normalized, path: Path) -> bool:
    for side in (desired.body, live.body):
        found = _at(side, path)
        if isinstance(found, list) and all(not isinstance(v, dict | list) for v in found):
            return True
    return False


def _list_root(desired: Normalized, live: Normalized, path: Path) -> Path:
    """The list a list-item difference belongs to."""
    for end in range(len(path), 0, -1):
        if isinstance(path[end - 1], int):
            return path[: end - 1]
    return path
