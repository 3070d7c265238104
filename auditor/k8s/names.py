"""Label keys and values as the API server's validation reads them (apimachinery's
IsQualifiedName and IsValidLabelValue), with its wording, so an offline finding reads like the
server's refusal.

A qualified name is an optional DNS-1123 subdomain prefix (at most 253 characters) and `/`, then
a name of at most 63 characters: alphanumerics, `-`, `_` and `.`, starting and ending with an
alphanumeric. A label value is empty, or such a name.
"""

from __future__ import annotations

import re
import typing as t

_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
NAME_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)


def qualified_name_errors(value: str) -> list[str]:
    """Why `value` is no qualified name (a label key, a resource name); empty when it is one."""
    prefix, slash, name = value.rpartition("/")
    if slash and not prefix:
        return ["prefix part must be non-empty"]
    if value.count("/") > 1:
        return ["a qualified name must consist of an optional prefix and a name, split by '/'"]
    errors = []
    if slash and (len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)):
        errors.append(
            "prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters"
        )
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    elif not _NAME.fullmatch(name):
        errors.append(f"name part {NAME_RULE}")
    return errors


def label_value_errors(value: str) -> list[str]:
    """Why `value` is no label value; empty when it is one (the empty string is)."""
    if len(value) > 63:
        return ["must be no more than 63 characters"]
    if value and not _NAME.fullmatch(value):
        return [f"a valid label {NAME_RULE}"]
    return []


def label_errors(labels: t.Mapping[t.Any, t.Any]) -> t.Iterator[tuple[str, str]]:
    """Each key of a label map (matchLabels, a node's labels) with why it or its value is not
    what the API server accepts, naming the offending key or value."""
    for key, value in labels.items():
        for why in qualified_name_errors(str(key)):
            yield str(key), f"{key!r}: {why}"
        for why in label_value_errors(str(value)):
            yield str(key), f"{value!r}: {why}"
