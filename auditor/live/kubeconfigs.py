"""Kubeconfig files read as kubectl reads them, in time linear in their size.

The Kubernetes client merges the files of $KUBECONFIG by looking each new entry's name up in
a list of the entries so far: quadratic, 235 s before the first request at 8,000 contexts
(bench/kubeconfig.py has the numbers). Here each file is read once (libyaml's parser when
there is one) and its entries indexed by name, so a lookup is a dict's; what the client gets
is the one context asked for, with its cluster and user, as a kubeconfig of its own.

kubectl's merge: the files in order, the first to name a context, cluster or user wins, and so
does the first current-context; a file that does not exist is skipped; each file's relative
paths (certificates, keys, token files, an exec plugin's command given as a path) are relative
to that file's folder.

Malformed files are a ConfigError naming the file and what is wrong, never a Python error.
"""

from __future__ import annotations

import json
import os
import typing as t
from dataclasses import dataclass

import yaml

from auditor.errors import ConfigError

Json = dict[str, t.Any]
SECTIONS = {"clusters": "cluster", "contexts": "context", "users": "user"}
# Fields holding a path, per section entry, resolved against the file that names them.
PATHS = {
    "cluster": ("certificate-authority",),
    "user": ("client-certificate", "client-key", "tokenFile"),
}
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class NoSuchContext(LookupError):
    """No file names the context asked for (or none is current)."""


@dataclass(frozen=True)
class Chosen:
    """One context, ready for the client: a kubeconfig of that context alone."""

    name: str
    config: Json
    base: str  # the folder an exec plugin runs in: that of the file naming the user


def choose(files: t.Sequence[str], context: str | None) -> Chosen:
    """The context `context` (else the current one) of `files` merged as kubectl merges."""
    entries: dict[str, dict[str, tuple[Json, str]]] = {s: {} for s in SECTIONS}
    current: str | None = None
    for file in files:
        doc = _read(file)
        folder = os.path.dirname(os.path.abspath(file))
        for section, key in SECTIONS.items():
            named = entries[section]
            for entry in _entries(doc, section, key, file):
                named.setdefault(entry["name"], (_resolved(entry, key, folder), file))
        if current is None and doc.get("current-context"):
            current = str(doc["current-context"])
    name = context or current
    if not name or name not in entries["contexts"]:
        raise NoSuchContext(name or "(current)")
    ctx, ctx_file = entries["contexts"][name]
    body = ctx.get("context") or {}
    config: Json = {"contexts": [ctx], "current-context": name, "clusters": [], "users": []}
    base = os.path.dirname(os.path.abspath(ctx_file))
    for section, key in (("clusters", "cluster"), ("users", "user")):
        wanted = body.get(key)
        if wanted is None:
            continue
        if wanted not in entries[section]:
            raise ConfigError(
                f"context {name} of {ctx_file} names {key} {wanted}, which no kubeconfig file "
                "defines"
            )
        entry, where = entries[section][wanted]
        config[section].append(entry)
        if section == "users":
            base = os.path.dirname(os.path.abspath(where))
    return Chosen(name, config, base)


def _read(file: str) -> Json:
    try:
        with open(file, "rb") as stream:
            data = stream.read()
        # JSON is YAML, read a hundred times faster: tools that write large kubeconfigs often
        # write JSON
        doc = _json(data)
        if doc is None:
            doc = yaml.load(data, Loader=_LOADER)
    except FileNotFoundError:
        return {}  # kubectl skips a file of $KUBECONFIG that does not exist
    except OSError as exc:
        raise ConfigError(f"the kubeconfig {file} cannot be read: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"the kubeconfig {file} is not YAML{where}: {problem}") from exc
    if doc is None:
        return {}  # an empty file: no contexts
    if not isinstance(doc, dict):
        raise ConfigError(
            f"the kubeconfig {file} holds {_what(doc)} at its top level, not a kubeconfig "
            "(a mapping with clusters, contexts and users)"
        )
    return doc


def _json(data: bytes) -> Json | None:
    if data.lstrip()[:1] != b"{":
        return None
    try:
        doc = json.loads(data)
    except ValueError:
        return None  # YAML's flow style, say: the YAML parser says what it makes of it
    return doc if isinstance(doc, dict) else None


def _entries(doc: Json, section: str, key: str, file: str) -> t.Iterator[Json]:
    items = doc.get(section)
    if items is None:
        return
    if not isinstance(items, list):
        raise ConfigError(f"the kubeconfig {file}: {section} is {_what(items)}, not a list")
    for index, entry in enumerate(items):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ConfigError(
                f"the kubeconfig {file}: {section}[{index}] is not a mapping with a name"
            )
        if not isinstance(entry.get(key) or {}, dict):
            raise ConfigError(
                f"the kubeconfig {file}: {section}[{index}] ({entry['name']}): {key} is "
                f"{_what(entry[key])}, not a mapping"
            )
        yield entry


def _resolved(entry: Json, key: str, folder: str) -> Json:
    """`entry` with its relative paths made absolute against its file's folder."""
    body = entry.get(key)
    if not body:
        return entry
    fixed = dict(body)
    for field in PATHS.get(key, ()):
        value = fixed.get(field)
        if isinstance(value, str) and value and not os.path.isabs(value):
            fixed[field] = os.path.join(folder, os.path.expanduser(value))
    plugin = fixed.get("exec")
    if isinstance(plugin, dict):
        command = plugin.get("command")
        if isinstance(command, str) and os.sep in command and not os.path.isabs(command):
            fixed["exec"] = {**plugin, "command": os.path.join(folder, command)}
    return {**entry, key: fixed}


def _what(value: object) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    return f"a {type(value).__name__} ({value!r})"[:60]
