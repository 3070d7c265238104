"""The CRDs' transition rules (CEL reading `oldSelf`) on two revisions of one object, offline.

The API server runs such a rule on an update, for each value the new object has where the old
one had a value it can pair it with: the same field, the same key of a map, the item with the
same keys of an `x-kubernetes-list-type: map` list (never items of other lists). A value left
as it was keeps its verdict (validation ratcheting), so only changed values are judged. Both
revisions get the schema's defaults first, as stored objects have them.
"""

from __future__ import annotations

import re
import typing as t

from auditor.k8s.objects import FieldPath
from auditor.schemas import cel

_CHAIN = re.compile(r"\b(self|oldSelf)((?:\.[A-Za-z_]\w*)+)")


def evaluate(
    rules: t.Sequence[cel.Rule], old: t.Any, new: t.Any, unsupported: set[str] | None = None
) -> list[cel.Violation]:
    """The transition rules that the change from `old` to `new` breaks, at the field it changes.

    Rules with `optionalOldSelf` (oldSelf a CEL optional, which celpy lacks) and rules needing a
    function the evaluator lacks go into `unsupported`, never guessed."""
    out: list[cel.Violation] = []
    for rule in rules:
        if not rule.transition:
            continue
        if rule.optional_old_self:
            if unsupported is not None:
                unsupported.add(rule.rule)
            continue
        for path, before, after in _pairs(old, new, rule.location, rule.correlation):
            if before == after:
                continue
            failure = cel.verdict(rule, cel.as_key(after), cel.as_key(before))
            if failure == cel.UNSUPPORTED:
                if unsupported is not None:
                    unsupported.add(rule.rule)
            elif failure is not None:
                where = cel.field_steps(rule.field_path) or _focus(rule.rule, before, after)
                out.append(cel.Violation(path + where, failure, rule.rule))
    return out


def _pairs(
    old: t.Any,
    new: t.Any,
    location: tuple[str, ...],
    correlation: tuple[tuple[str, ...] | None, ...],
    path: FieldPath = (),
) -> t.Iterator[tuple[FieldPath, t.Any, t.Any]]:
    """(path, old value, new value) for each value at `location` the two revisions share."""
    if old is None or new is None:
        return
    if not location:
        yield path, old, new
        return
    step, rest = location[0], location[1:]
    if step != cel.ANY:
        if isinstance(old, dict) and isinstance(new, dict):
            yield from _pairs(old.get(step), new.get(step), rest, correlation, (*path, step))
        return
    keys, more = (correlation[0], correlation[1:]) if correlation else (None, ())
    if keys == () and isinstance(old, dict) and isinstance(new, dict):
        for name, item in new.items():
            yield from _pairs(old.get(name), item, rest, more, (*path, str(name)))
    elif keys and isinstance(old, list) and isinstance(new, list):
        before = {_identity(i, keys): i for i in old if isinstance(i, dict)}
        for index, item in enumerate(new):
            if isinstance(item, dict):
                match = before.get(_identity(item, keys))
                yield from _pairs(match, item, rest, more, (*path, index))


def _identity(item: dict[str, t.Any], keys: tuple[str, ...]) -> str:
    return cel.as_key([item.get(k) for k in keys])


def _focus(rule: str, before: t.Any, after: t.Any) -> FieldPath:
    """The field a rule without fieldPath is about: the first it reads (`self.a.b`, then
    `oldSelf.a.b`) whose value changed, as deep as both revisions have objects to walk."""
    chains = sorted(_CHAIN.finditer(rule), key=lambda m: m[1] != "self")
    for match in chains:
        old, new, steps = before, after, []
        for name in match[2].split(".")[1:]:
            if not isinstance(old, dict) and not isinstance(new, dict):
                break  # a CEL method such as .exists(...), or a scalar
            old = old.get(name) if isinstance(old, dict) else None
            new = new.get(name) if isinstance(new, dict) else None
            steps.append(name)
        if steps and old != new:
            return tuple(steps)
    return ()
