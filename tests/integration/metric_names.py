"""The metric names a rule or dashboard query uses, and the ones the exporter serves, to hold
one against the other."""

from __future__ import annotations

import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from auditor import rules
from auditor.model import ClusterResult, Finding, Report
from auditor.report import metrics

SELECTOR = re.compile(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\})?")
MATCHER = re.compile(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)\s*\"")
# `by (labels) (metric...` and `by (labels) (rate(metric...`: labels the metric itself must carry.
AGGREGATED = re.compile(r"\bby\s*\(([^)]*)\)\s*\(\s*(?:rate\(|increase\()?\s*([a-zA-Z_:][\w:]*)")
LABEL_LISTS = re.compile(r"\b(?:by|on|without|ignoring|group_left|group_right)\s*\([^)]*\)")
NOT_METRICS = {
    "by", "on", "without", "ignoring", "group_left", "group_right", "and", "or", "unless",
    "sum", "max", "min", "rate", "increase", "time", "absent", "clamp_min", "label_replace",
    "histogram_quantile", "bool",
}  # fmt: skip
Used = dict[str, set[str]]  # metric -> label names its selectors match on


def exported(tmp_path: Path) -> Used:
    """The metrics, with their label names, that a drift report with one finding exports."""
    report = Report(
        "drift",
        findings=[Finding(rules.get("drift-quota"), "m", cluster="gpu-prod")],
        clusters=[ClusterResult("gpu-prod")],
    )
    out = tmp_path / "drift.prom"
    metrics.export(report, metrics_file=out)
    written: Used = {}
    for family in text_string_to_metric_families(out.read_text()):
        for sample in family.samples:
            written.setdefault(sample.name, set()).update(sample.labels)
    return written
