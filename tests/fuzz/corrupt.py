"""Ways to corrupt one file of a repository, as Hypothesis strategies.

A Corruption names its file, its kind and its arguments, so a failing case prints as something
that can be pasted into `regressions.py`. `apply` changes the file in place; `restore` puts the
original back (whatever the file was turned into: a link, a FIFO, a folder).
"""

from __future__ import annotations

import os
import re
import shutil
import typing as t
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

# Values a person, a generator or a bad merge might leave where a scalar was.
ODD_VALUES = (
    "1e309", "-1e309", ".inf", "-.inf", ".nan", "9" * 5001, "9" * 5000, '"' + "9" * 5001 + '"',
    '"1e999999999"', "1e999999999", '"1e-999999999"', "0x1F", "0o17", "1_000", "1:20", "-0",
    "+5", "00012", "2001-12-14", "2001-12-14T21:59:43.10-05:00", "~", '""', "yes", "off",
    "1.5", "-1", "[]", "{}", "[a, b]", "{a: 1}", '"text"', "|\n  block\n", ">-\n  folded\n",
    "!!binary aGVsbG8=", "!!set {a, b}", "!!omap [a: 1]", "!!python/object:os.system x",
    "!custom x", "!!float 1", "!!int x", "!!timestamp x", "*nowhere", "&a {b: *a}", "@", "`",
    "'unterminated", '"\\x00"', "\t1",
)  # fmt: skip
ODD_KEYS = (
    "? [a, b]", "? {a: 1}", "1", "true", "~", "1.5", "<<", "'1'", "yes", "2001-12-14",
    "!!binary aGVsbG8=", "&k key", "*k", "'' ", "a b", "\t",
)  # fmt: skip
TAGS = ("!!python/object:os.system", "!!binary", "!custom", "!!set", "!!omap", "!!timestamp",
        "!!float", "!!int", "!!str", "!!null", "!!bool", "!!map", "!!seq", "!<tag:x>")  # fmt: skip
ENCODINGS = ("utf-16", "utf-16-le", "utf-32", "latin-1", "bom", "nul", "invalid-utf8", "crlf",
             "cr", "u2028")  # fmt: skip
FILE_TYPES = ("link-inside", "link-outside", "link-folder-inside", "link-folder-outside",
              "link-loop", "link-dangling", "fifo", "folder", "empty", "huge", "many-docs",
              "duplicate", "directive", "doc-end")  # fmt: skip
KEY_LINE = re.compile(rb"^(\s*-?\s*)([A-Za-z0-9_.\"'/-]+):(\s+)(\S.*)?$")


@dataclass(frozen=True)
class Corruption:
    file: str  # relative to the repository
    how: str  # byte-flip, truncate, indent, tag, anchor, value, key, encoding, file-type
    at: int = 0  # a position or a line, taken modulo the file's length
    arg: t.Any = None

    def apply(self, root: Path, outside: Path) -> None:
        path = root / self.file
        data = path.read_bytes()
        if self.how == "file-type":
            _file_type(path, data, str(self.arg), root, outside)
            return
        path.write_bytes(_mutate(data, self))

    def restore(self, root: Path, original: bytes) -> None:
        path = root / self.file
        if path.is_symlink() or path.is_file() or _is_special(path):
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
        path.write_bytes(original)


def _is_special(path: Path) -> bool:
    return os.path.lexists(path) and not path.is_dir()


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _mutate(data: bytes, c: Corruption) -> bytes:
    size = max(len(data), 1)
    lines = _lines(data)
    row = c.at % max(len(lines), 1)
    if c.how == "byte-flip":
        out = bytearray(data)
        for offset, value in c.arg:
            if out:
                out[(c.at + offset) % len(out)] = value
        return bytes(out)
    if c.how == "truncate":
        return data[: c.at % size]
    if c.how == "indent":  # arg: spaces to add (or, below 0, characters to take away; 0: a tab)
        line = lines[row]
        if c.arg < 0:
            lines[row] = line[-c.arg :]
        else:
            lines[row] = (b" " * c.arg if c.arg else b"\t") + line
        return b"\n".join(lines)
    if c.how in ("tag", "anchor", "value"):
        key_rows = [i for i, line in enumerate(lines) if KEY_LINE.match(line)]
        if not key_rows:
            return data
        i = key_rows[c.at % len(key_rows)]
        m = KEY_LINE.match(lines[i])
        assert m is not None
        head, key, space, value = m[1], m[2], m[3], m[4] or b""
        if c.how == "tag":
            new = f"{c.arg} ".encode() + value
        elif c.how == "anchor":
            j = key_rows[(c.at + 1 + c.arg) % len(key_rows)]
            other = KEY_LINE.match(lines[j])
            assert other is not None
            lines[j] = other[1] + other[2] + b": *x" if j != i else lines[j]
            new = b"&x " + value if value else b"&x"
        else:
            new = str(c.arg).encode()
        lines[i] = head + key + b":" + space + new
        return b"\n".join(lines)
    if c.how == "key":
        key_rows = [i for i, line in enumerate(lines) if KEY_LINE.match(line)]
        if not key_rows:
            return data
        i = key_rows[c.at % len(key_rows)]
        m = KEY_LINE.match(lines[i])
        assert m is not None
        lines[i] = m[1] + str(c.arg).encode() + b":" + m[3] + (m[4] or b"")
        return b"\n".join(lines)
    if c.how == "encoding":
        return _encode(data, str(c.arg), c.at)
    raise AssertionError(f"no corruption {c.how}")


def _encode(data: bytes, how: str, at: int) -> bytes:
    text = data.decode("utf-8", errors="replace")
    if how in ("utf-16", "utf-16-le", "utf-32"):
        return text.encode(how)
    if how == "latin-1":
        return text.replace("a", "\u00e9", 1).encode("latin-1", errors="replace")
    if how == "bom":
        return b"\xef\xbb\xbf" + data
    if how == "nul":
        return data[: at % max(len(data), 1)] + b"\x00" + data[at % max(len(data), 1) :]
    if how == "invalid-utf8":
        return data[: at % max(len(data), 1)] + b"\xc3\x28" + data[at % max(len(data), 1) :]
    if how == "crlf":
        return data.replace(b"\n", b"\r\n")
    if how == "cr":
        return data.replace(b"\n", b"\r")
    return text.replace("\n", "\u2028", 3).encode()  # u2028: a line break to YAML 1.1 only


def _file_type(path: Path, data: bytes, how: str, root: Path, outside: Path) -> None:
    path.unlink()
    if how == "link-inside":
        os.symlink(os.path.relpath(root / "clusters/gpu-prod/cohorts.yaml", path.parent), path)
    elif how == "link-outside":
        os.symlink(outside / "secret.yaml", path)
    elif how == "link-folder-inside":
        os.symlink(os.path.relpath(root / "tenants/team-b", path.parent), path)
    elif how == "link-folder-outside":
        os.symlink(outside, path)
    elif how == "link-loop":
        os.symlink(path.name, path)
    elif how == "link-dangling":
        os.symlink("nowhere.yaml", path)
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "folder":
        path.mkdir()
        (path / "inner.yaml").write_bytes(data)
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "huge":
        with open(path, "wb") as f:
            f.truncate(11 * 1024 * 1024)  # sparse: never read
    elif how == "many-docs":
        path.write_bytes(data + b"\n---\n" * 20_000)
    elif how == "duplicate":
        path.write_bytes(data + b"\n---\n" + data)
    elif how == "directive":
        path.write_bytes(b"%YAML 1.1\n%TAG ! tag:example.com,2000:\n---\n" + data)
    else:
        path.write_bytes(data.replace(b"\n---", b"\n...\n---", 1) + b"\n...\n")


def corruptions(files: t.Sequence[str]) -> st.SearchStrategy[Corruption]:
    """Every kind of corruption, of any of `files`."""
    file = st.sampled_from(files)
    at = st.integers(min_value=0, max_value=10_000)
    flips = st.lists(st.tuples(st.integers(0, 64), st.integers(0, 255)), min_size=1, max_size=8)
    return st.one_of(
        st.builds(Corruption, file, st.just("byte-flip"), at, flips),
        st.builds(Corruption, file, st.just("truncate"), at),
        st.builds(Corruption, file, st.just("indent"), at, st.integers(-4, 4)),
        st.builds(Corruption, file, st.just("tag"), at, st.sampled_from(TAGS)),
        st.builds(Corruption, file, st.just("anchor"), at, st.integers(-3, 3)),
        st.builds(Corruption, file, st.just("value"), at, st.sampled_from(ODD_VALUES)),
        st.builds(Corruption, file, st.just("key"), at, st.sampled_from(ODD_KEYS)),
        st.builds(Corruption, file, st.just("encoding"), at, st.sampled_from(ENCODINGS)),
        st.builds(Corruption, file, st.just("file-type"), at, st.sampled_from(FILE_TYPES)),
    )
