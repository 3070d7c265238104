"""An editor speaking LSP to the language server over its stdin and stdout."""

from __future__ import annotations

import json
import sys
import typing as t
from pathlib import Path

from lsprotocol import types
from pygls import uris
from pygls.lsp.client import LanguageClient

LQ = "tenants/team-a/gpu-prod/localqueues.yaml"


class Editor:
    """A client over the server's stdio: what it was last sent for each file."""

    def __init__(self, repo: Path, *options: str) -> None:
        self.repo = repo
        self.options = options  # of `lsp`
        self.client = LanguageClient("test-editor", "1")
        self.diagnostics: dict[str, list[types.Diagnostic]] = {}
        self.versions: dict[str, int] = {}

        def published(params: types.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = list(params.diagnostics)

        self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(published)

    def uri(self, path: str) -> str:
        return t.cast(str, uris.from_fs_path(str(self.repo / path)))

    async def start(self) -> None:
        argv = ["-m", "auditor", "--repo", str(self.repo), "lsp", *self.options]
        await self.client.start_io(sys.executable, *argv, cwd=str(self.repo))
        await self.client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=self.uri("."))
        )
        self.client.initialized(types.InitializedParams())
        await self.settled()

    async def settled(self) -> None:
        """Every notification the server sent before answering a request: the server handles
        messages in order, so a request answered means what came before it was handled."""
        await self.client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri(LQ)),
                position=types.Position(line=0, character=0),
            )
        )

    async def type(self, path: str, text: str) -> None:
        uri = self.uri(path)
        if uri not in self.versions:
            self.versions[uri] = 1
            self.client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(
                        uri=uri, language_id="yaml", version=1, text=self.on_disk(path)
                    )
                )
            )
        self.versions[uri] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                [types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        await self.settled()

    def on_disk(self, path: str) -> str:
        file = self.repo / path
        return file.read_text() if file.exists() else ""  # a file the editor creates

    async def close(self, path: str) -> None:
        uri = self.uri(path)
        del self.versions[uri]
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        await self.settled()

    def findings(self) -> list[str]:
        return sorted(
            json.dumps(d.data, sort_keys=True) for found in self.diagnostics.values() for d in found
        )

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()  # type: ignore[no-untyped-call]
