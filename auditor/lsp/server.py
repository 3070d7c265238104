"""The language server: a `validate` session (auditor/validate/session.py) over stdio (pygls).

On `initialized` it loads the repository of the workspace (or of --repo), publishes the
findings of every file and keeps the session. `didOpen` and `didChange` hand the buffer's text to
the session, which computes again what depends on that file; the server then publishes the
diagnostics of each file whose findings changed, and always of the edited one. `didClose` puts
the file on disk back; `didChangeWatchedFiles` reports files changed on disk. A diagnostic is a
finding: its rule's id as the code (and the rule's documentation as its link), the message, the
severity (a suppressed finding is a hint saying until when), and the range of the field's line;
its data is the finding as `validate -o json` writes it. Hover on a finding's line shows the
rule's documentation, as `kueue-gitops explain` prints it.

Given the repository's baseline (`lsp --baseline FILE`, as the pull-request check runs
`validate --baseline FILE`), a finding it holds is a hint too, saying so: the editor shows what
a change adds, as the check fails on it, without hiding what the estate had. The file is read
again whenever it changes on disk (written again by `validate --write-baseline`).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import logging
from importlib import metadata
from pathlib import Path

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer

from auditor.errors import AuditorError
from auditor.model import Finding, Report, Severity
from auditor.repo import baseline
from auditor.repo.root import find_root
from auditor.rules import render
from auditor.speed import collector
from auditor.validate.session import Session

log = logging.getLogger(__name__)
SOURCE = "kueue-gitops"


class Server(LanguageServer):
    """The protocol's side: documents in, diagnostics and hovers out."""

    def __init__(
        self, repo: Path | None, schemas: Path | None, baseline_file: Path | None = None
    ) -> None:
        try:
            version = metadata.version("kueue-gitops")
        except metadata.PackageNotFoundError:  # pragma: no cover - a bare checkout
            version = "unknown"
        super().__init__(SOURCE, version)  # edits arrive as changes to the text (incremental)
        self.repo, self.schemas = repo, schemas
        self.session: Session | None = None
        self.published: dict[str, list[str]] = {}  # path -> its findings, as last published
        self.baseline_file = baseline_file
        # The baseline as last read, and what the file was then (its mtime and size, or why
        # it could not be read): read again only when that changes.
        self.baseline: baseline.Baseline | None = None
        self.baseline_read: object = None

    # -- the session --------------------------------------------------------------------------

    def start(self) -> None:
        """Load the repository: --repo, else the workspace's root, else the current folder."""
        given = self.repo
        if given is None:
            root_uri = self.workspace.root_uri
            folder = uris.to_fs_path(root_uri) if root_uri else None
            given = Path(folder) if folder else Path.cwd()
        try:
            self.session = Session(find_root(given), self.schemas)
        except AuditorError as exc:
            self.complain(str(exc))
            return
        gc.collect()
        gc.freeze()  # the loaded repository stays: no collection needs to walk it again
        self.publish(set())

    def complain(self, message: str) -> None:
        log.error("%s", message)
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Error, message=f"{SOURCE}: {message}")
        )

    def path_of(self, uri: str) -> str | None:
        """The repository path of a document (None: outside the repository)."""
        if self.session is None:
            return None
        fs = uris.to_fs_path(uri)
        if fs is None:
            return None
        try:
            return Path(fs).resolve().relative_to(self.session.tree.root).as_posix()
        except ValueError:
            return None

    def edited(self, uri: str, text: str | None) -> None:
        path = self.path_of(uri)
        if path is None or self.session is None:
            return
        try:
            self.session.edit(path, None if text is None else text.encode("utf-8"))
        except AuditorError as exc:  # a profile that does not parse, say: until it does
            self.complain(str(exc))
            return
        self.publish({path})

    def publish(self, always: set[str]) -> None:
        """Diagnostics for each file whose findings changed since last published, and for the
        files in `always` (the edited one: its client waits for them)."""
        assert self.session is not None
        now: dict[str, list[Finding]] = {}
        for finding in self.accepted(self.session.findings):
            if finding.file:
                now.setdefault(finding.file, []).append(finding)
        for path in sorted(set(now) | set(self.published) | always):
            found = now.get(path, [])
            idents = [json.dumps(f.to_json(), sort_keys=True, default=str) for f in found]
            if idents == self.published.get(path, []) and path not in always:
                continue
            if idents:
                self.published[path] = idents
            else:
                self.published.pop(path, None)
            lines = self.lines(path) if found else []
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=uris.from_fs_path(str(self.session.tree.root / path)) or path,
                    diagnostics=[diagnostic(f, lines) for f in found],
                )
            )

    def accepted(self, findings: list[Finding]) -> list[Finding]:
        """`findings`, those the baseline holds marked as validate --baseline marks them (on
        copies: the session's stay as it computed them)."""
        known = self.read_baseline()
        if known is None:
            return findings
        copies = [dataclasses.replace(f) for f in findings]
        baseline.apply(Report("validate", copies), known)
        return copies

    def read_baseline(self) -> baseline.Baseline | None:
        """The --baseline file (a relative one from the repository's root), read again when it
        changed; a file that cannot be read is said once, and marks nothing until it can."""
        if self.baseline_file is None or self.session is None:
            return None
        path = self.session.tree.root / self.baseline_file
        try:
            stat = path.stat()
            stamp: object = (stat.st_mtime_ns, stat.st_size)
        except OSError as exc:
            stamp = f"{path}: cannot read the baseline ({exc.strerror})"
        if stamp == self.baseline_read:
            return self.baseline
        self.baseline_read, self.baseline = stamp, None
        if isinstance(stamp, str):
            self.complain(stamp)
            return None
        try:
            self.baseline = baseline.read(path, "validate")
        except AuditorError as exc:
            self.complain(str(exc))
        return self.baseline

    def lines(self, path: str) -> list[str]:
        assert self.session is not None
        try:
            return self.session.tree.read(path).decode("utf-8", errors="replace").splitlines()
        except OSError:
            return []

    def hover(self, uri: str, line: int) -> types.Hover | None:
        path = self.path_of(uri)
        if path is None or self.session is None:
            return None
        here = [f for f in self.session.findings if f.file == path and (f.line or 1) - 1 == line]
        if not here:
            return None
        rules = list(dict.fromkeys(f.rule for f in here))
        text = "\n\n---\n\n".join(
            f"**{r.id}**\n\n{render.help_markdown(r)}\n[{r.anchor}]({r.url})" for r in rules
        )
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


def diagnostic(finding: Finding, lines: list[str]) -> types.Diagnostic:
    """A finding as the editor shows it, on its line from the first to the last character."""
    number = max((finding.line or 1) - 1, 0)
    text = lines[number] if number < len(lines) else ""
    start = _utf16(text[: len(text) - len(text.lstrip())])
    end = max(_utf16(text.rstrip()), start)
    rule = finding.rule
    message = finding.message
    if finding.cluster is not None:
        message = f"{finding.cluster}: {message}"
    severity = (
        types.DiagnosticSeverity.Error
        if rule.severity is Severity.ERROR
        else types.DiagnosticSeverity.Warning
    )
    if finding.suppressed is not None:
        severity = types.DiagnosticSeverity.Hint
        accepted = finding.suppressed
        message = (
            f"baselined ({accepted.source}): {message}"
            if accepted.baselined
            else f"suppressed until {accepted.expires} ({accepted.reason}): {message}"
        )
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=number, character=start),
            end=types.Position(line=number, character=end),
        ),
        message=message,
        severity=severity,
        code=rule.id,
        code_description=types.CodeDescription(href=rule.url),
        source=SOURCE,
        data=finding.to_json(),
    )


def _utf16(text: str) -> int:
    """A column as the protocol counts it by default: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def build(
    repo: Path | None = None, schemas: Path | None = None, baseline_file: Path | None = None
) -> Server:
    server = Server(repo, schemas, baseline_file)

    @server.feature(types.INITIALIZED)
    def initialized(ls: Server, _params: types.InitializedParams) -> None:
        ls.start()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Server, params: types.DidOpenTextDocumentParams) -> None:
        ls.edited(params.text_document.uri, params.text_document.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Server, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.edited(uri, ls.workspace.get_text_document(uri).source)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Server, params: types.DidCloseTextDocumentParams) -> None:
        ls.edited(params.text_document.uri, None)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: Server, params: types.DidChangeWatchedFilesParams) -> None:
        if ls.session is None:
            return
        paths = {p for p in (ls.path_of(c.uri) for c in params.changes) if p is not None}
        try:
            for path in sorted(paths):
                if path not in ls.session.tree.buffers:  # an open buffer wins over the disk
                    ls.session.changed(path)
        except AuditorError as exc:
            ls.complain(str(exc))
            return
        ls.publish(set())

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: Server, params: types.HoverParams) -> types.Hover | None:
        return ls.hover(params.text_document.uri, params.position.line)

    return server


def serve(
    repo: Path | None = None, schemas: Path | None = None, baseline_file: Path | None = None
) -> None:
    """Serve one editor over stdin and stdout until it says exit."""
    logging.basicConfig(level=logging.WARNING, format="kueue-gitops lsp: %(message)s")
    with collector.seldom():  # an edit makes many objects and next to no cycles: as validate
        build(repo, schemas, baseline_file).start_io()
