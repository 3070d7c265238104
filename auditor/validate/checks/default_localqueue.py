"""A LocalQueue named `default` changes how every job in its namespace is queued: say so.

From Kueue v0.10 (LocalQueueDefaulting, locked on from v0.17 and no longer a gate in v0.19), jobs
in a namespace that carry no `kueue.x-k8s.io/queue-name` label are sent to the LocalQueue named
`default`, and the label can no longer be emptied on a job there. Intended sometimes,
surprising often. Which name, and whether the cluster's release does it at all, is the
release's own (auditor/kueue/api/: its constants and its gate), so gpu-legacy's v0.9.1 is not
warned of a behaviour it does not have.

Its rules, each with an example that passes and one that fails, are declared beside it in
default_localqueue.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.kueue import config as kueue_config
from auditor.model import Finding
from auditor.validate.checks import protocol
from auditor.validate.checks._common import KUEUE, kueue_configuration, kueue_release

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
DEFAULT_LOCALQUEUE = RULES["default-localqueue"]

ID = "default-localqueue"
RERUN = protocol.CLUSTER
GATE = "LocalQueueDefaulting"  # a gate from v0.10 to v0.18; the behaviour stays after it


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    known = kueue_release(ctx)
    name = known.default_name("LocalQueue")
    if name is None or kueue_config.gate(kueue_configuration(ctx), known, GATE) is False:
        return
    for queue in ctx.of_kind("LocalQueue"):
        if queue.key.group == KUEUE and queue.name == name:
            yield Finding.about(
                queue,
                DEFAULT_LOCALQUEUE,
                f"every job in namespace {queue.namespace} without a kueue.x-k8s.io/queue-name "
                f"label will be queued here (Kueue {known.version} defaults such jobs to the "
                f"LocalQueue named {name}), and jobs there can no longer drop the label; rename "
                "the queue unless that is intended",
                path=["metadata", "name"],
            )
