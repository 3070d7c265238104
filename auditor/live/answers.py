"""What makes an API server's answer an answer, decided here once for every reader.

Bounded: an answer is read to at most MAX_BYTES once decompressed (a 2 MiB gzip body can
decompress to gigabytes), and decoded only when it holds at most MAX_ELEMENTS array items and
object members, nested at most MAX_DEPTH deep: what one answer can cost in memory is known
before Python builds a single object of it. Past any of them the request fails with Overrun.

Well-formed: a `Status` of failure is the refusal it says, whatever the HTTP status carrying
it; a LIST's answer is a `<Kind>List` of the apiVersion asked, with `items`, each an object of
that kind and apiVersion with a name; a GET's is an object of the kind asked. Anything else is
Malformed. Either way the kind is not read, never read as empty: an answer read as "nothing
there" would report every object of the repository deleted.
"""

from __future__ import annotations

import json
import re
import typing as t

import urllib3

from auditor.errors import ClusterAccessError
from auditor.k8s.objects import Json
from auditor.live.apierrors import Malformed, Overrun, refusal

MIB = 2**20
MAX_BYTES = 64 * MIB  # one answer, decompressed: a page of 500 objects is a few MiB
MAX_ELEMENTS = 4_000_000  # array items and object members: ~150 bytes each once decoded
MAX_DEPTH = 200  # a Kueue Workload's CRD, the deepest object drift reads, is 40 deep
CHUNK = MIB

# A JSON string (escapes included): strings are skipped when the shape of an answer is measured.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_SHAPE = bytes(b for b in range(256) if b not in b"[]{},")


def read(raw: urllib3.BaseHTTPResponse, cluster: str, action: str) -> bytes:
    """The whole body of `raw` (not read yet), decompressed, or Overrun past MAX_BYTES."""
    body = bytearray()
    for chunk in raw.stream(CHUNK, decode_content=True):
        body += chunk
        if len(body) > MAX_BYTES:
            raw.close()  # the rest is never read: the connection is dropped, not pooled
            zipped = raw.headers.get("Content-Encoding")
            said = f" once decompressed ({zipped})" if zipped else ""
            raise _overrun(cluster, action, f"more than {MAX_BYTES // MIB} MiB{said}")
    return bytes(body)


def decode(data: bytes, code: int, cluster: str, action: str) -> t.Any:
    """The JSON of a successful answer (None when empty), once it is known to be bounded; a
    `Status` of failure in it is raised as the refusal it says."""
    if not data:
        return None
    shape = _STRING.sub(b"", data).translate(_SQUARE, _NOT_SHAPE)  # strings hold no structure
    if shape.count(b",") + shape.count(b"[") > MAX_ELEMENTS:
        raise _overrun(cluster, action, f"more than {MAX_ELEMENTS:,} values")
    if not _within(shape.replace(b",", b""), MAX_DEPTH):
        raise _overrun(cluster, action, f"values nested more than {MAX_DEPTH} deep")
    try:
        doc = json.loads(data)
    except RecursionError as exc:  # unbalanced, and deeper than the parser's own stack
        raise _overrun(cluster, action, f"values nested more than {MAX_DEPTH} deep") from exc
    except ValueError as exc:  # a proxy's error page, a truncated body
        raise ClusterAccessError(
            f"cluster {cluster}: {action} answered with something not JSON ({exc})",
            cluster=cluster,
            action=action,
        ) from exc
    if isinstance(doc, dict) and doc.get("kind") == "Status" and doc.get("status") != "Success":
        said = doc.get("code")
        raise refusal(cluster, action, said if isinstance(said, int) else code, data)
    return doc


def _within(brackets: bytes, depth: int) -> bool:
    """Whether `brackets` (balanced `[` and `]` alone) nest at most `depth` deep: each pass
    takes away the innermost pairs. Unbalanced ones are not JSON, which json says better."""
    if brackets.count(b"[") != brackets.count(b"]"):
        return True
    for _ in range(depth):
        if not brackets:
            return True
        brackets = brackets.replace(b"[]", b"")
    return not brackets


def _overrun(cluster: str, action: str, what: str) -> Overrun:
    return Overrun(
        f"cluster {cluster}: {action} answered with {what}, past what one answer may hold "
        "(docs/contracts.md, Input limits): not read",
        cluster=cluster,
        action=action,
    )


def listed(page: t.Any, api_version: str, kind: str, cluster: str, action: str) -> list[Json]:
    """The items of one page of a LIST of `kind` in `api_version`, each with its apiVersion
    and kind (a built-in kind's LIST leaves them out of its items)."""
    wrong = _not_a_list(page, api_version, kind)
    if wrong:
        raise _malformed(cluster, action, f"{wrong} for a {kind}List of {api_version}")
    items: list[Json] = page["items"] or []  # a Go nil slice is JSON null: no items
    for item in items:
        wrong = _not_one(item, api_version, kind)
        if wrong:
            raise _malformed(cluster, action, f"an item {wrong} for a {kind} of {api_version}")
        item.setdefault("apiVersion", api_version)
        item.setdefault("kind", kind)
    return items


def token(page: Json, cluster: str, action: str) -> str | None:
    """The continue token of a LIST page (None: the last page)."""
    found = (page.get("metadata") or {}).get("continue") or None
    if found is not None and not isinstance(found, str):
        raise _malformed(cluster, action, "a continue token that is not a string")
    return found


def one(doc: t.Any, api_version: str, kind: str, cluster: str, action: str) -> Json:
    """The object a GET of `kind` in `api_version` answered."""
    wrong = _not_one(doc, api_version, kind)
    if wrong:
        raise _malformed(cluster, action, f"an object {wrong} for a {kind} of {api_version}")
    return t.cast(Json, doc)


def _not_a_list(page: t.Any, api_version: str, kind: str) -> str | None:
    if not isinstance(page, dict):
        return _described(page)
    if page.get("kind") != f"{kind}List":
        return f"a {page.get('kind') or 'JSON object without a kind'}"
    if page.get("apiVersion") != api_version:
        return f"a {kind}List of apiVersion {page.get('apiVersion')}"
    if "items" not in page:
        return f"a {kind}List without items"
    if not isinstance(page["items"], list | None):
        return f"a {kind}List whose items are {_described(page['items'])}"
    return None


def _not_one(obj: t.Any, api_version: str, kind: str) -> str | None:
    """What is wrong with `obj` as an object of `kind`: its kind and apiVersion, when it says
    them (a built-in kind's LIST items do not), must be the ones asked, and it has a name."""
    if not isinstance(obj, dict):
        return f"that is {_described(obj)}"
    if obj.get("kind", kind) != kind or obj.get("apiVersion", api_version) != api_version:
        return f"of kind {obj.get('kind')} in {obj.get('apiVersion')}"
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        return "without a name"
    return None


def _described(doc: t.Any) -> str:
    return "nothing" if doc is None else f"a JSON {type(doc).__name__}"


def _malformed(cluster: str, action: str, what: str) -> Malformed:
    return Malformed(
        f"cluster {cluster}: {action} answered {what}: not read, so nothing "
        "of the kind is compared",
        cluster=cluster,
        action=action,
    )
