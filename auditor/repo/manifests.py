"""Turn YAML text into Resources that remember the file and line of every field.

One flow per file: decode the bytes (UTF-8, a byte order mark dropped); read the documents,
by the fast reader when the file is plain (auditor/repo/fast_reader.py), else by PyYAML
(auditor/repo/pyyaml_reader.py, which says what is wrong, with its line); make each mapping
document with an identity a Resource, whose fields' lines PyYAML derives when first asked for.

Bad input never stops a run: each problem becomes a Finding with the file and line, and the
loader goes on with the next document or file.
"""

from __future__ import annotations

import contextlib
import typing as t

from auditor import rules
from auditor.model import Finding, Resource
from auditor.repo import fast_reader, pyyaml_reader
from auditor.repo.pyyaml_reader import FileLines, Lines

_RULES = rules.of(__name__)
MISSING_IDENTITY = _RULES["missing-identity"]
NOT_UTF8 = _RULES["not-utf8"]

Document = tuple[dict[str, t.Any], int, int]  # a Resource's body, line, index in its file


def documents(resources: list[Resource]) -> list[Document]:
    """What `restore` needs to make `resources` (all of one file) again: plain, picklable data."""
    return [(r.body, r.line, t.cast(Lines, r.line_source).index) for r in resources]


def restore(docs: list[Document], file: str, text: t.Callable[[], str]) -> list[Resource]:
    """The Resources of a file from `documents`, without parsing it; field lines are derived
    from `text()` (the file, read again) when a finding first asks for one."""
    lines = FileLines(text)
    lines.wanted = [index for _body, _line, index in docs]
    return [Resource(body, file, line, line_source=Lines(lines, i)) for body, line, i in docs]


def decode(data: bytes) -> str:
    """A file's bytes as `load_bytes` reads them (UTF-8, without a byte order mark)."""
    text = data.decode("utf-8")
    return text[1:] if text.startswith("\ufeff") else text


def load_text(text: str, file: str) -> tuple[list[Resource], list[Finding]]:
    """Every mapping document in `text` as a Resource; everything wrong as a Finding."""
    return _load(text, text.encode("utf-8"), file)


def load_bytes(data: bytes, file: str) -> tuple[list[Resource], list[Finding]]:
    """Every mapping document in a file's bytes as a Resource; everything wrong as a Finding."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return [], [
            Finding(
                NOT_UTF8,
                f"the file is not UTF-8 (byte 0x{data[exc.start]:02x} at offset "
                f"{exc.start}); save it as UTF-8",
                file=file,
                line=line,
            )
        ]
    if text.startswith("\ufeff"):
        return _load(text[1:], data[3:], file)
    return _load(text, data, file)


def _load(text: str, data: bytes, file: str) -> tuple[list[Resource], list[Finding]]:
    """`text`'s documents (`data`: the same, as UTF-8 without a byte order mark): the fast
    reader reads a plain manifest; PyYAML anything it leaves (and every problem, with its line)."""
    resources: list[Resource] = []
    findings: list[Finding] = []
    lines = FileLines(text)
    read = fast_reader.documents(data)
    for got in read if read is not None else pyyaml_reader.documents(text, file):
        if isinstance(got, Finding):
            findings.append(got)
        else:
            _take(*got, file, lines, resources, findings)
    return resources, findings


def _take(
    index: int,
    line: int,
    body: dict[str, t.Any],
    file: str,
    file_lines: FileLines,
    resources: list[Resource],
    findings: list[Finding],
) -> None:
    """A mapping document as a Resource, or the finding that it has no identity."""
    file_lines.wanted.append(index)
    resource = Resource(body, file, line, line_source=Lines(file_lines, index))
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
            Finding(
                MISSING_IDENTITY,
                f"the object has no {', '.join(missing)}",
                file=file,
                line=line,
            )
        )
        return
    resources.append(resource)


def quiet() -> contextlib.AbstractContextManager[None]:
    """Around the reading of many files: the fast reader's parser keeps its error messages to
    itself (PyYAML's become the findings)."""
    return fast_reader.quiet()


def _yaml_type(value: object) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), type(value).__name__
    )
