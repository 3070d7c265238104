"""What every page shares: the JSON report as a mapping, escaping, a table of numbers, a
quantity as a number and trace time as a clock."""

from __future__ import annotations

import html
import typing as t

from auditor.k8s.quantity import QuantityError, parse

Doc = dict[str, t.Any]


def e(value: t.Any) -> str:
    return html.escape("" if value is None else str(value))


def table(columns: list[str], rows: list[list[t.Any]], caption: str) -> str:
    head = "".join(f'<th scope="col">{e(c)}</th>' for c in columns)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{e(v)}</td>' if isinstance(v, int | float) else f"<td>{e(v)}</td>"
            for v in row
        )
        + "</tr>"
        for row in rows
    )
    return (
        f"<table><caption>{e(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def number(raw: t.Any) -> float:
    """A Kubernetes quantity as a number (0 for none or what does not parse)."""
    if raw in (None, ""):
        return 0.0
    try:
        return float(parse(raw).value)
    except QuantityError:
        return 0.0


def clock(seconds: float) -> str:
    """Trace time as h:mm:ss from the trace's start."""
    whole = round(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
