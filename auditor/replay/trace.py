"""The workload trace: what was submitted to a cluster's LocalQueues, when, and for how long it ran.

A versioned JSON document (`traceVersion`), described by trace.schema.json next to this module
(docs/replay.md explains it). Reading one checks it against that schema and names the file and
the field that is wrong; a reader refuses versions it does not know.
"""

from __future__ import annotations

import json
import typing as t
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import jsonschema

from auditor.errors import ConfigError
from auditor.repo.outfile import write_whole

VERSION = 1
SCHEMA_FILE = "trace.schema.json"
RESOURCES = ("cpu", "memory", "nvidia.com/gpu")  # what a flavor's quota covers in a trace
GPU = "nvidia.com/gpu"


@dataclass(frozen=True)
class TracedWorkload:
    namespace: str
    local_queue: str
    priority_class: str | None
    requests: dict[str, str]  # one pod's, as quantities
    pod_count: int
    submitted_at: float  # seconds from the trace's start
    run_seconds: float  # once admitted
    still_running: bool = False  # recorded before it finished: run time so far

    @classmethod
    def from_json(cls, w: dict[str, t.Any]) -> TracedWorkload:
        """A workload from its JSON (a trace's, as trace.schema.json checks it, or a live
        start's): the one reading of the format `to_json` writes."""
        return cls(
            namespace=w["namespace"],
            local_queue=w["localQueue"],
            priority_class=w.get("priorityClass"),
            requests=dict(w["requests"]),
            pod_count=int(w["podCount"]),
            submitted_at=float(w["submittedAt"]),
            run_seconds=float(w["runSeconds"]),
            still_running=bool(w.get("stillRunning", False)),
        )

    def to_json(self) -> dict[str, t.Any]:
        out: dict[str, t.Any] = {
            "namespace": self.namespace,
            "localQueue": self.local_queue,
            "priorityClass": self.priority_class,
            "requests": dict(self.requests),
            "podCount": self.pod_count,
            "submittedAt": round(self.submitted_at, 3),
            "runSeconds": round(self.run_seconds, 3),
        }
        if self.still_running:
            out["stillRunning"] = True
        return out


@dataclass(frozen=True)
class Trace:
    cluster: str
    recorded: dict[str, t.Any]  # source (live|synthetic), seconds, from/to or seed
    workloads: list[TracedWorkload] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        """The window: the recorded one, or until the last submission when that is later."""
        last = max((w.submitted_at for w in self.workloads), default=0.0)
        return max(float(self.recorded.get("seconds") or 0), last)

    @property
    def longest_run(self) -> float:
        return max((w.run_seconds for w in self.workloads), default=0.0)

    def to_json(self) -> dict[str, t.Any]:
        return {
            "traceVersion": VERSION,
            "cluster": self.cluster,
            "recorded": dict(self.recorded),
            "workloads": [w.to_json() for w in self.workloads],
        }


def schema() -> dict[str, t.Any]:
    text = resources.files("auditor.replay").joinpath(SCHEMA_FILE).read_text()
    return t.cast(dict[str, t.Any], json.loads(text))


def parse(doc: t.Any, source: str) -> Trace:
    """A trace from its JSON document; ConfigError naming `source` and the field when it is not
    one."""
    if isinstance(doc, dict) and doc.get("traceVersion") not in (None, VERSION):
        raise ConfigError(
            f"{source}: traceVersion {doc.get('traceVersion')!r} is not one this kueue-gitops "
            f"reads (it reads version {VERSION})"
        )
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema()).iter_errors(doc)
    )
    if error is not None:
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        raise ConfigError(f"{source}: {where.lstrip('.') or 'the document'}: {error.message}")
    return Trace(
        cluster=doc["cluster"],
        recorded=doc["recorded"],
        workloads=sorted(
            (TracedWorkload.from_json(w) for w in doc["workloads"]), key=lambda w: w.submitted_at
        ),
    )


def read(path: Path) -> Trace:
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read the trace {path}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON: {exc.msg} at line {exc.lineno}") from exc
    return parse(doc, str(path))


def write(trace: Trace, path: Path) -> None:
    """Whole or not at all (an interrupt or a full disk never leaves half a trace)."""
    write_whole(path, json.dumps(trace.to_json(), indent=1) + "\n", what="the trace")
