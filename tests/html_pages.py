"""A report's `-o html` page opened in headless Chromium (tests/chromium.py) as a person sees it:
its figures (series, legend, marks, axis ticks, data, the numbers' table) and the answer it leads
with. Shared by the acceptance test of the pages and the integration tests that open the pages
the real commands write; each page and its screenshot is kept in test-artifacts/html-reports/."""

from __future__ import annotations

import io
import json
import typing as t

from auditor.model import Report
from auditor.report import REPORTER_BY_NAME
from tests import chromium
from tests.conftest import ROOT

ARTIFACTS = ROOT / "test-artifacts" / "html-reports"
Doc = dict[str, t.Any]

# Per figure: the series it names, the legend pygal drew, each series' drawn marks (lines, bars,
# dots), the ticks of its y axis, each series' tallest bar on screen (px), the data it embeds, and
# its table's rows.
FIGURES = """JSON.stringify([...document.querySelectorAll('figure.chart')].map(f => ({
  id: f.id,
  series: JSON.parse(f.dataset.series),
  legend: [...f.querySelectorAll('svg .legends .legend text')].map(t => t.textContent),
  drawn: [...f.querySelectorAll('svg g.plot > g.series')].reduce((n, g) => {
    const serie = [...g.classList].find(c => c.startsWith('serie-'));
    n[serie] = (n[serie] || 0) + g.querySelectorAll('path.line, rect.rect, circle.dot').length;
    return n; }, {}),
  width: f.querySelector('svg').getBoundingClientRect().width,
  yticks: [...f.querySelectorAll('svg .axis.y .guides text')].map(t => t.textContent),
  tallest: [...f.querySelectorAll('svg g.plot > g.series')].reduce((n, g) => {
    const serie = [...g.classList].find(c => c.startsWith('serie-'));
    const heights = [...g.querySelectorAll('rect.rect')].map(r => r.getBoundingClientRect().height);
    n[serie] = Math.max(n[serie] || 0, ...heights);
    return n; }, {}),
  data: JSON.parse(f.querySelector('script.chart-data').textContent),
  rows: [...f.querySelectorAll('.numbers tbody tr')].map(r => [...r.cells].map(c => c.textContent)),
})))"""


# What a page leads with, as a person reads it, and whether it is on the first screen above every
# chart.
ANSWER = """(() => {
  const text = s => document.querySelector(s) ? document.querySelector(s).innerText : null;
  const answer = document.querySelector('#answer');
  const figure = document.querySelector('figure');
  return JSON.stringify({
    target: text('#target'), recommended: text('#recommended'),
    chosen: text('#chosen-as'), apart: text('#never-admitted'), capacity: text('#capacity'),
    when: text('#when'), where: text('#where'), preempts: text('#preempts'),
    changed: [...document.querySelectorAll('#answer table tbody tr')].map(
      r => [...r.cells].map(c => c.textContent)),
    first: !!answer && answer.getBoundingClientRect().bottom < window.innerHeight
      && (!figure || answer.getBoundingClientRect().bottom <= figure.getBoundingClientRect().top),
  });
})()"""


def both(report: Report) -> tuple[Doc, str]:
    """The report as -o json and as -o html."""
    out, page = io.StringIO(), io.StringIO()
    REPORTER_BY_NAME["json"](report, out)
    REPORTER_BY_NAME["html"](report, page)
    return json.loads(out.getvalue()), page.getvalue()


def opened(name: str, page: str) -> dict[str, Doc]:
    """The page in Chromium: no error, no request but the page itself; its figures by id."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.html"
    path.write_text(page)
    seen = chromium.visit(path, FIGURES)
    (ARTIFACTS / f"{name}.png").write_bytes(seen.screenshot)
    assert seen.errors == []
    assert seen.requests == [path.resolve().as_uri()]
    assert seen.screenshot.startswith(b"\x89PNG")
    assert "<script src" not in page and "http://" not in page.replace("http://www.w3.org", "")
    figures = {f["id"]: f for f in json.loads(seen.value)}
    for f in figures.values():
        assert f["legend"] == f["series"], f["id"]
        for i, _series in enumerate(f["series"]):
            assert f["drawn"].get(f"serie-{i}", 0) > 0, (f["id"], _series)
        assert f["width"] > 300, f["id"]  # laid out, not collapsed
    return figures


def answer(name: str) -> Doc:
    """The page's answer as Chromium shows it (the page opened by `opened` first)."""
    seen = chromium.visit(ARTIFACTS / f"{name}.html", ANSWER)
    assert seen.errors == []
    return t.cast(Doc, json.loads(seen.value))
