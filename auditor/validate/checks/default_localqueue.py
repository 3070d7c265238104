"""A LocalQueue named `default` changes how every job in its namespace is queued: say so.

With LocalQueueDefaulting (stable since Kueue 0.17), jobs in the namespace that carry no
`kueue.x-k8s.io/queue-name` label are sent to the LocalQueue named `default`, and the label can no
longer be emptied on a job there. Intended sometimes, surprising often.

Its rules, each with an example that passes and one that fails, are declared beside it in
default_localqueue.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.model import Finding
from auditor.validate.checks._common import KUEUE

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
DEFAULT_LOCALQUEUE = RULES["default-localqueue"]

ID = "default-localqueue"


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    for queue in ctx.of_kind("LocalQueue"):
        if queue.key.group == KUEUE and queue.name == "default":
            yield Finding.about(
                queue,
                DEFAULT_LOCALQUEUE,
                f"every job in namespace {queue.namespace} without a kueue.x-k8s.io/queue-name "
                "label will be queued here (LocalQueueDefaulting), and jobs there can no longer "
                "drop the label; rename the queue unless that is intended",
                path=["metadata", "name"],
            )
