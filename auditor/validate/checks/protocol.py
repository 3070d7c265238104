"""What a check module is: the protocol strict mypy holds every module in `checks._MODULES` to.

A check module defines
- `ID`: the check's kebab-case name;
- `RULES`: its rules, declared beside it in `<module>.rules.yaml` (`rules.of(__name__)`);
- `check(ctx)`: yields findings of those rules about one cluster (`checks.CheckContext`);
- `RERUN`: what an edit of one file makes an editor's server (auditor/validate/session.py)
  compute again of it (`Rerun`).

Whatever a check reads is noted while it runs (`checks.Reads`); `RERUN` says only how narrowly
its findings may be renewed once an edit touched what it read.
"""

from __future__ import annotations

import typing as t
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from auditor.model import Finding, Resource
from auditor.rules import Rule

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext


@dataclass(frozen=True)
class Rerun:
    """How a check's findings are renewed after an edit of a file that touched what it read.

    The default: the check runs again over the whole cluster. `per_object`: its findings about
    an object depend on that object alone (with the profiles and the files it reads), so it runs
    again on the edited file's objects only (what it finds in other files, a profile's, depends
    on the profiles and those files alone, and is kept). `per_object_of`: its findings about
    objects of these kinds depend on that object and objects of other kinds alone, so an edit
    of a file holding only such objects runs it on that file's objects of those kinds, with
    every object of the other kinds.

    `refers` (with `per_object_of`): the (kind, name) of each object of another kind an object
    of those kinds refers to. Its findings about an object then depend on that object, the
    objects it refers to, and which objects of the other kinds there are (their names), and are
    yielded one object at a time, in the objects' order: an edit that changes objects of the
    other kinds without adding, removing or renaming any runs it on the objects referring to
    those it changed (a ClusterQueue's quota: its LocalQueues alone).

    `project`: all the check reads of an object of the kinds it asks for, whatever their order
    (None: anything of it). An edit that leaves what it reads of every object as it was does
    not run it again (a LocalQueue's ClusterQueue, to a check of the queues' names)."""

    per_object: bool = False
    per_object_of: frozenset[str] = frozenset()
    refers: t.Callable[[Resource], t.Iterable[tuple[str, str]]] | None = None
    project: t.Callable[[Resource], t.Hashable | None] | None = None


CLUSTER = Rerun()  # the whole cluster again
PER_OBJECT = Rerun(per_object=True)


def per_object_of(
    *kinds: str, refers: t.Callable[[Resource], t.Iterable[tuple[str, str]]] | None = None
) -> Rerun:
    return Rerun(per_object_of=frozenset(kinds), refers=refers)


class Check(t.Protocol):
    """A check module (see the module's docstring)."""

    @property
    def ID(self) -> str: ...

    @property
    def RULES(self) -> Mapping[str, Rule]: ...

    @property
    def RERUN(self) -> Rerun: ...

    def check(self, ctx: CheckContext) -> Iterator[Finding]: ...
