"""Reading the rules files: the rules declared beside a module, and the whole catalogue.

Each rule is declared once, in YAML beside the code that raises it: `<module>.rules.yaml` beside
a module that is a unit of its own (each policy check), else `rules.yaml` in the package whose
modules raise it (drift, verify, the repository loader, ...). Data rather than Python because
the whole catalogue must be known below the code that raises the rules: a suppression in the
repository names a rule, and so does a JSON report read back, and those layers cannot import the
pipelines; the package's data files they can read. A module takes its rules once, when it is
imported (`RULES = rules.of(__name__)`, then `RULES["rule-id"]`), so a rule it lacks fails the
import, and it raises the Rule objects, which carry their severity and category.
"""

from __future__ import annotations

import datetime
import difflib
import functools
import os
import re
import typing as t
from collections.abc import Iterator, Mapping
from pathlib import Path

from auditor.rules.rule import STAGES, Example, Rule, Severity

PACKAGE = Path(__file__).resolve().parent.parent  # the auditor package
ROOT = PACKAGE.parent
MODULE_FILE = ".rules.yaml"  # quotas.py -> quotas.rules.yaml
PACKAGE_FILE = "rules.yaml"
ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_TOP = {"stage", "paragraphs", "rules"}  # paragraphs: texts several rules share (YAML anchors)
_FIELDS = ("severity", "category", "summary", "help", "passes", "fails")
_OPTIONAL = {"unchecked"}  # Rule.unchecked: true where a finding means something went unchecked


class RulesFileError(ValueError):
    """A rules file the catalogue cannot be made of: a mistake in the code's own data."""


class UnknownRule(LookupError):
    """A rule ID not declared: a typo by a user, or code asking for a rule its rules file
    lacks."""

    def __init__(self, rule_id: str, known: t.Iterable[str], where: str = "the catalogue") -> None:
        close = difflib.get_close_matches(rule_id, list(known), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        super().__init__(f"no rule {rule_id!r} in {where}{hint}")
        self.rule_id = rule_id
        self.suggestions = close


class Declared(Mapping[str, Rule]):
    """The rules of one rules file, by ID."""

    def __init__(self, file: str, by_id: dict[str, Rule]) -> None:
        self.file, self._by_id = file, by_id

    def __getitem__(self, rule_id: str) -> Rule:
        try:
            return self._by_id[rule_id]
        except KeyError:
            raise UnknownRule(rule_id, self._by_id, self.file) from None

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._by_id

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_id)

    def __len__(self) -> int:
        return len(self._by_id)


def _candidates(module: str) -> tuple[Path, Path]:
    """The module's own rules file, and its package's."""
    base = PACKAGE.joinpath(*module.split(".")[1:])
    if base.is_dir():  # a package's __init__: its own file is the package's
        return base / PACKAGE_FILE, base / PACKAGE_FILE
    return base.with_name(base.name + MODULE_FILE), base.parent / PACKAGE_FILE


def file_of(module: str) -> Path:
    """Where the rules of `module` (a dotted name under auditor) are declared."""
    own, package = _candidates(module)
    return own if own.is_file() else package


def of(module: str) -> Declared:
    """The rules declared beside `module` (pass `__name__`)."""
    path = file_of(module)
    if not path.is_file():
        own, package = (p.relative_to(ROOT) for p in _candidates(module))
        where = f"{own} or {package}" if own != package else str(own)
        raise RulesFileError(f"{module} declares no rules: write {where}")
    return _read(path)


def declared_at(file: str, rule_id: str) -> Rule:
    """The rule `rule_id` of the rules file `file` (relative to the repository)."""
    return _read(ROOT / file)[rule_id]


def files() -> list[Path]:
    """Every rules file of the package."""
    found = []
    for folder, dirs, names in os.walk(PACKAGE):
        if "__init__.py" not in names:  # data folders (templates, testenv, caches) hold none
            dirs.clear()
            continue
        dirs.sort()
        found += [Path(folder, n) for n in names if n == PACKAGE_FILE or n.endswith(MODULE_FILE)]
    return found


@functools.cache
def catalogue() -> dict[str, Rule]:
    """Every rule, by ID: stage by stage in pipeline order, then by rules file."""
    declared = [_read(path) for path in files()]
    order = list(STAGES)
    declared.sort(key=lambda d: (min(order.index(r.stage) for r in d.values()), d.file))
    out: dict[str, Rule] = {}
    for rules in declared:
        for rule_id, rule in rules.items():
            first = out.setdefault(rule_id, rule)
            if first is not rule:
                raise RulesFileError(
                    f"rule {rule_id} is declared twice: {first.declared_in} and {rules.file}"
                )
    return out


def get(rule_id: str) -> Rule:
    """A rule by its ID, as a user or a JSON report names it."""
    rules = catalogue()
    try:
        return rules[rule_id]
    except KeyError:
        raise UnknownRule(rule_id, rules) from None


@functools.cache
def _read(path: Path) -> Declared:
    import yaml  # here: a run that only shows a report (the resident's answer) reads no rules

    file = str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    except (OSError, yaml.YAMLError) as exc:
        raise RulesFileError(f"{file}: {exc}") from exc
    if not isinstance(doc, dict) or not {"stage", "rules"} <= set(doc) <= _TOP:
        raise RulesFileError(f"{file}: needs `stage` and `rules` (and may have `paragraphs`)")
    if doc["stage"] not in STAGES:
        raise RulesFileError(f"{file}: stage {doc['stage']!r} is none of {', '.join(STAGES)}")
    if not isinstance(doc["rules"], dict) or not doc["rules"]:
        raise RulesFileError(f"{file}: `rules` must map rule IDs to rules")
    return Declared(
        file,
        {
            str(rule_id): _rule(f"{file}: rule {rule_id}", str(rule_id), body, doc["stage"], file)
            for rule_id, body in doc["rules"].items()
        },
    )


def _rule(where: str, rule_id: str, body: t.Any, stage: str, file: str) -> Rule:
    if not ID.fullmatch(rule_id):
        raise RulesFileError(f"{where}: an ID is lower-case words joined by hyphens")
    if not isinstance(body, dict) or not set(_FIELDS) <= set(body) <= {*_FIELDS, *_OPTIONAL}:
        keys = sorted(body) if isinstance(body, dict) else body
        raise RulesFileError(
            f"{where}: needs exactly {', '.join(_FIELDS)}, and may say {', '.join(_OPTIONAL)} "
            f"(has {keys})"
        )
    if not isinstance(body.get("unchecked", False), bool):
        raise RulesFileError(f"{where}: unchecked is true or false")
    try:
        severity = Severity(body["severity"])
    except ValueError:
        raise RulesFileError(f"{where}: severity is error or warning") from None
    return Rule(
        id=rule_id,
        severity=severity,
        category=_word(where, "category", body["category"]),
        stage=stage,
        summary=_prose(where, "summary", body["summary"]),
        help=_prose(where, "help", body["help"]),
        passes=_example(where, "passes", body["passes"]),
        fails=_example(where, "fails", body["fails"]),
        declared_in=file,
        unchecked=body.get("unchecked", False),
    )


def _word(where: str, key: str, value: t.Any) -> str:
    if not isinstance(value, str) or not ID.fullmatch(value):
        raise RulesFileError(f"{where}: {key} is a lower-case word (hyphens allowed)")
    return value


def _prose(where: str, key: str, value: t.Any) -> str:
    """Text with its line breaks and repeated spaces made single spaces; a list of texts (a
    shared paragraph among them) is joined."""
    parts = value if isinstance(value, list) else [value]
    if not parts or not all(isinstance(p, str) and p.strip() for p in parts):
        raise RulesFileError(f"{where}: {key} is text, or a list of texts")
    return " ".join(" ".join(parts).split())


def _example(where: str, key: str, value: t.Any) -> Example:
    """A sentence, or `{file, manifest}` (and `today`, the day its verdict is judged on)."""
    if isinstance(value, str):
        return Example(_prose(where, key, value))
    if not isinstance(value, dict) or not {"file", "manifest"} <= set(value) <= {
        "file",
        "manifest",
        "today",
    }:
        raise RulesFileError(f"{where}: {key} is a sentence, or file and manifest (and today)")
    today = value.get("today")
    if today is not None and not isinstance(today, datetime.date):
        raise RulesFileError(f"{where}: {key}.today is a date, YYYY-MM-DD")
    return Example(str(value["manifest"]), str(value["file"]), today)
