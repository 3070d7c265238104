"""Language-server benchmark: from `didChange` to `publishDiagnostics`, over the real protocol.

    python bench/lsp/run.py [--objects N ...] [--edits 20]

For each size, bench/validate/generate.py writes a corpus (1,700 tenants make 10,394 objects)
into a temporary repository; `kueue-gitops lsp` is started on it over stdio (pygls' client, as
an editor would), and once it has loaded the repository the client makes `--edits` edits, one at
a time, each waiting for the diagnostics of the edited file: a label of a tenant's Namespace, the
ClusterQueue of a tenant's LocalQueue, the subject of a tenant's RoleBinding, a quota in the
cluster's ClusterQueues file (one file of many objects), in turn, each on another tenant.
Prints, per size, the time to load (initialize to the first answer), the median and p95 of the
edits, the median per kind of edit, and the server's peak RSS, as a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import typing as t
from pathlib import Path

from lsprotocol import types
from pygls import uris
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.validate.generate import generate

OBJECTS_PER_TENANT = 10_394 / 1_700  # what the generator writes, platform objects included
GOAL_MS = 100.0  # at 10k objects: the median (issue 29), each kind of edit and the p95 (48)


def edits(tenants: int, count: int) -> list[tuple[str, str, str, str]]:
    """(kind of edit, path, old text, new text) for `count` edits over distinct tenants."""
    out: list[tuple[str, str, str, str]] = []
    for i in range(count):
        tenant = f"t{(i * 37) % tenants:05d}"
        base = f"tenants/{tenant}/gpu-prod"
        kind = ("namespace label", "localqueue target", "rolebinding subject", "quota")[i % 4]
        if kind == "namespace label":
            old = f"platform.example.com/tenant: {tenant}"
            out.append((kind, f"{base}/namespace.yaml", old, f"{old}\n    team: edited{i}"))
        elif kind == "localqueue target":
            out.append(
                (kind, f"{base}/localqueues.yaml", "clusterQueue: cq-", "clusterQueue: cq-1")
            )
        elif kind == "rolebinding subject":
            out.append((kind, f"{base}/rbac.yaml", f"example-org:{tenant}", f"example-org:x{i}"))
        else:
            old = 'nominalQuota: "1"'
            out.append(
                (kind, "clusters/gpu-prod/clusterqueues.yaml", old, f'nominalQuota: "{i + 2}"')
            )
    return out


class Client:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.client = LanguageClient("bench", "1")
        self.waiting: dict[str, asyncio.Future[float]] = {}
        self.versions: dict[str, int] = {}

        def published(params: types.PublishDiagnosticsParams) -> None:
            future = self.waiting.pop(params.uri, None)
            if future is not None and not future.done():
                future.set_result(time.perf_counter())

        self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(published)

    def uri(self, path: str) -> str:
        return t.cast(str, uris.from_fs_path(str(self.repo / path)))

    async def start(self) -> float:
        started = time.perf_counter()
        argv = ["-m", "auditor", "--repo", str(self.repo), "lsp"]
        await self.client.start_io(sys.executable, *argv, cwd=str(self.repo))
        await self.client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities())
        )
        self.client.initialized(types.InitializedParams())
        await self.client.text_document_hover_async(  # answered once the repository is loaded
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=self.uri("x.yaml")),
                position=types.Position(line=0, character=0),
            )
        )
        return time.perf_counter() - started

    async def change(self, path: str, text: str) -> float:
        """Seconds from sending the change to the edited file's diagnostics."""
        uri = self.uri(path)
        if uri not in self.versions:  # opened first (not timed), as an editor opens a file
            self.versions[uri] = 1
            opened = asyncio.get_running_loop().create_future()
            self.waiting[uri] = opened
            self.client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(
                        uri=uri, language_id="yaml", version=1, text=(self.repo / path).read_text()
                    )
                )
            )
            await opened
        self.versions[uri] += 1
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiting[uri] = future
        sent = time.perf_counter()
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=uri, version=self.versions[uri]
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return await future - sent

    def peak_rss_mib(self) -> float:
        server = self.client._server  # the server's process
        assert server is not None
        for line in Path(f"/proc/{server.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()  # type: ignore[no-untyped-call]


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def measure(objects: int, count: int) -> str:
    tenants = max(1, round(objects / OBJECTS_PER_TENANT))
    with tempfile.TemporaryDirectory(prefix="bench-lsp-") as folder:
        repo = Path(folder)
        written = generate(repo, tenants)
        client = Client(repo)
        load = await client.start()
        texts: dict[str, str] = {}
        times: dict[str, list[float]] = {}
        try:
            for kind, path, old, new in edits(tenants, count):
                text = texts.get(path) or (repo / path).read_text()
                assert old in text, (path, old)
                texts[path] = text.replace(old, new, 1)
                times.setdefault(kind, []).append(await client.change(path, texts[path]))
            rss = client.peak_rss_mib()
        finally:
            await client.stop()
    every = [s * 1000 for found in times.values() for s in found]
    kinds = ", ".join(f"{k} {statistics.median(v) * 1000:.0f}" for k, v in times.items())
    return (
        f"| {written:,} | {load:.1f} s | {statistics.median(every):.0f} ms | {p95(every):.0f} ms "
        f"| {kinds} | {rss:.0f} MiB |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, nargs="+", default=[1000, 10_000, 50_000])
    parser.add_argument("--edits", type=int, default=20)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        "| objects | load | didChange→publishDiagnostics median | p95 | median by edit (ms) "
        "| server peak RSS |"
    )
    print("|---|---|---|---|---|---|")
    for objects in args.objects:
        print(asyncio.run(measure(objects, args.edits)), flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"goal: median and p95 ≤ {GOAL_MS:.0f} ms at 10k objects")


if __name__ == "__main__":
    main()
