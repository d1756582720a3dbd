"""Open generated reports in a real headless Chromium (Playwright) and check what renders.

Needs Debian's ``chromium`` at /usr/bin/chromium and the ``playwright`` Python package. Without
them the test is skipped, unless ``TRACEVIZ_REQUIRE_BROWSER=1`` (set in CI), where it fails.
Screenshots go to ``tests/_artifacts/`` (git-ignored).

Every comparison page is checked for what a reader sees at 1400 px: no figure that draws
nothing (such a figure is one line saying why), legend entries that are the drawn traces, and
tables that fit (no horizontal overflow, no cell cut short except a name shortened on purpose).
A page built with ``--plotlyjs cdn`` says in each plot's place why it is blank while the CDN is
unreachable, and says nothing once plotly.js has loaded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import traceviz
from tests.synthetic_runs import (
    COMPILED,
    CUDAGRAPH,
    EAGER,
    ModeSpec,
    paired_split,
    standard_run,
    write_run_dir,
)
from tests.test_report_html import EVIL, evil_trace
from traceviz.report.compare_report import build, load_run_dir, render
from traceviz.report.html import CDN_NOTE, CDN_URL, render_html
from traceviz.report.model import build_trace_report

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "_artifacts"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
#: Plotly graph divs with their number of traces, from the page's own plotly state.
FIGURES_JS = """() => Array.from(document.querySelectorAll('.plotly-graph-div')).map(
  d => [d.id, (d._fullData || []).length, d.querySelectorAll('.main-svg').length])"""
#: Per plotly figure: the names of the traces that draw a value (not null / NaN: bars, points,
#: cells, slices), of those with a legend entry, and the legend entries on screen.
LEGENDS_JS = """() => Array.from(document.querySelectorAll('.plotly-graph-div')).map(d => {
  const values = t => Array.from((t.orientation === 'h' ? t.x : t.y) ?? t.z ?? t.values
                                 ?? t.labels ?? []).flat(2);
  const drawn = (d._fullData || []).filter(t => t.visible !== false && values(t).some(
    v => v !== null && v !== undefined && !(typeof v === 'number' && isNaN(v))));
  return {id: d.id, drawn: drawn.map(t => t.name),
          legend: drawn.filter(t => t.showlegend).map(t => t.name),
          shown: Array.from(d.querySelectorAll('.legendtext')).map(e => e.textContent)};
})"""
#: Tables that overflow their box, cells whose content overflows the cell, and cells cut short
#: (ending in "…") that are not a name shortened on purpose (those expand: <details>; a name
#: shortened in the middle, "copai4rt….py", is not cut short).
FIT_JS = """() => ({
  overflow: Array.from(document.querySelectorAll('.scroll')).filter(
    d => d.scrollWidth > d.clientWidth).map(
    d => [d.querySelector('table').id, d.scrollWidth, d.clientWidth]),
  cells: Array.from(document.querySelectorAll('td, th')).filter(
    c => c.scrollWidth > c.clientWidth + 1).map(c => c.innerText),
  cut: Array.from(document.querySelectorAll('td, th')).filter(
    c => c.innerText.trim().endsWith('\u2026') && !c.querySelector('details')).map(
    c => c.innerText),
  page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
})"""
#: The CDN notes of a page: whether each is visible, and its text.
OFFLINE_JS = """() => Array.from(document.querySelectorAll('.cdn-note')).map(
  e => [e.checkVisibility(), e.innerText])"""


@pytest.fixture(scope="module")
def browser() -> Any:
    missing = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "the playwright package is not installed"
    if missing is None and not CHROMIUM.is_file():
        missing = f"{CHROMIUM} is missing (apt-get install chromium)"
    if missing:
        if os.environ.get("TRACEVIZ_REQUIRE_BROWSER") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        yield b
        b.close()


def open_page(browser: Any, html_path: Path, shot: str, cdn: str | None = None
              ) -> tuple[Any, list[str], list[str]]:
    """Load a report; return the page, console errors and JS dialogs seen. ``cdn``: how the
    CDN answers: "offline" (every request to it aborted) or "plotly" (it serves the installed
    plotly.js)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    if cdn == "offline":
        page.route(f"{CDN_URL}**", lambda route: route.abort())
    elif cdn == "plotly":
        import plotly.offline as po

        page.route(f"{CDN_URL}**", lambda route: route.fulfill(
            status=200, content_type="application/javascript", body=po.get_plotlyjs()))
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(html_path.as_uri())
    if cdn != "offline":
        page.wait_for_function("() => document.querySelectorAll('.plotly-graph-div .main-svg')"
                               ".length > 0")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / shot), full_page=True)
    return page, errors, dialogs


def test_single_trace_report_renders_every_figure_and_escapes_names(browser: Any,
                                                                  tmp_path: Path) -> None:
    trace = traceviz.load(evil_trace(tmp_path / "t.json"))
    out = tmp_path / "trace.html"
    out.write_text(render_html(build_trace_report(trace, traceviz.analyze(trace))))
    page, errors, dialogs = open_page(browser, out, "browser_trace_report.png")
    assert errors == [] and dialogs == []
    figs = {fid: (n, svgs) for fid, n, svgs in page.evaluate(FIGURES_JS)}
    assert set(figs) == {"fig-steps", "fig-timeline", "fig-gaps", "fig-host-wait",
                         "fig-families"}
    assert all(n > 0 and svgs > 0 for n, svgs in figs.values()), figs
    assert EVIL in page.inner_text("#tbl-kernels")  # shown as text, never executed


def test_comparison_report_shows_the_expected_verdicts(browser: Any, tmp_path: Path) -> None:
    run = standard_run(tmp_path / "run")
    out = run / "report.html"
    out.write_text(render(*build(load_run_dir(run)), "html", "inline"))
    page, errors, dialogs = open_page(browser, out, "browser_comparison_report.png")
    assert errors == [] and dialogs == []
    figs = {fid: n for fid, n, _ in page.evaluate(FIGURES_JS)}
    assert set(figs) == {"fig-times", "fig-counts", "fig-waterfall-0", "fig-waterfall-1"}
    assert all(n > 0 for n in figs.values()), figs
    rows = page.eval_on_selector_all(
        "#tbl-verdicts tbody tr",
        "rows => rows.map(r => Array.from(r.cells).slice(0, 3).map(c => c.innerText.trim()))")
    assert rows == [
        ["compile", "speed", "WIN"], ["compile", "fusion", "WIN"], ["compile", "launch", "WIN"],
        ["cudagraph", "speed", "WIN"], ["cudagraph", "fusion", "WIN"],
        ["cudagraph", "launch", "WIN"],
        # a failed mode wears FAILED (its verdicts' status stays INCONCLUSIVE in the data)
        ["broken", "speed", "FAILED"], ["broken", "fusion", "FAILED"],
        ["broken", "launch", "FAILED"],
    ]
    # The headline section comes first, one line per mode, leading with the outcome.
    assert page.eval_on_selector("main section", "s => s.id") == "headline"
    heads = page.eval_on_selector_all(
        "#tbl-headlines tbody tr", "rows => rows.map(r => r.cells[3].innerText.trim())")
    assert len(heads) == 3 and heads[0].startswith("2.00× faster by unpaired medians")
    assert_what_is_drawn_is_what_is_said(page)


def assert_what_is_drawn_is_what_is_said(page: Any) -> None:
    """Every plot draws something, its legend lists exactly the traces it draws, and the
    tables fit the 1400 px page."""
    for fig in page.evaluate(LEGENDS_JS):
        assert fig["drawn"], f"{fig['id']} draws nothing"
        if fig["shown"]:
            assert sorted(fig["shown"]) == sorted(fig["legend"]), fig
    fit = page.evaluate(FIT_JS)
    assert fit["overflow"] == [] and fit["cells"] == [] and fit["cut"] == [], fit
    assert fit["page"][0] <= fit["page"][1], fit


def cpu_run(root: Path) -> Path:
    """A run on the CPU: eager and compile traces with steps and no GPU activity or launch
    call, cudagraph skipped (as ``profile --device cpu`` records it)."""
    return write_run_dir(root, {
        "eager": ModeSpec(kernels=(), median_ms=150.659, spread_ms=39.0),
        "compile": ModeSpec(kernels=(), median_ms=33.338, spread_ms=8.9),
        "cudagraph": ModeSpec(kernels=(), status="skipped", correct=None,
                              reason="cudagraph needs a CUDA device; none is available here"),
    }, name="elementwise")


def wide_run(root: Path) -> Path:
    """A GPU run whose comparison tables are as wide as real ones: long mode names, noisy step
    times with ranges, the unprofiled split, a skip with a long reason."""
    base, mode = [1.181, 1.2, 1.15, 1.19], [0.874, 0.88, 0.86, 0.87]
    split = paired_split(base, mode, [b - 0.4 for b in base], [m - 0.1 for m in mode])
    return write_run_dir(root, {
        "eager": EAGER,
        "max-autotune-no-cudagraphs": ModeSpec(kernels=COMPILED.kernels, median_ms=0.874,
                                               spread_ms=0.2, paired=split),
        "reduce-overhead": CUDAGRAPH,
        "triton": ModeSpec(kernels=(), status="skipped", correct=None,
                           reason="the workload has no hand-written Triton implementation "
                           "(triton_step)"),
    }, name="wide")


def test_a_cpu_run_page_hides_gpu_charts_and_fits_1400_px(browser: Any, tmp_path: Path) -> None:
    run = cpu_run(tmp_path / "run")
    out = run / "report.html"
    out.write_text(render(*build(load_run_dir(run)), "html", "inline"))
    page, errors, dialogs = open_page(browser, out, "browser_cpu_run_report.png")
    assert errors == [] and dialogs == []
    # the counts chart has nothing to draw on the CPU: one line in its place says why
    assert {fid for fid, _, _ in page.evaluate(FIGURES_JS)} == {"fig-times"}
    empty = page.locator("#fig-counts")
    assert empty.is_visible() and "figure-empty" in (empty.get_attribute("class") or "")
    assert "not drawn" in empty.inner_text() and "CPU" in empty.inner_text()
    assert_what_is_drawn_is_what_is_said(page)
    # the skip reason wraps as text: a few lines, not one word per line
    reason = page.locator("#tbl-modes tbody tr:last-child td:nth-child(2)")
    assert reason.inner_text().startswith("skipped: cudagraph needs")
    lines = page.evaluate("e => Math.round(e.getBoundingClientRect().height / "
                          "parseFloat(getComputedStyle(e).lineHeight))",
                          reason.element_handle())
    assert lines <= 4, lines


def test_a_wide_comparison_fits_1400_px(browser: Any, tmp_path: Path) -> None:
    run = wide_run(tmp_path / "run")
    out = run / "report.html"
    out.write_text(render(*build(load_run_dir(run)), "html", "inline"))
    page, errors, dialogs = open_page(browser, out, "browser_wide_report.png")
    assert errors == [] and dialogs == []
    assert page.locator("#tbl-unprofiled").count() == 1
    assert_what_is_drawn_is_what_is_said(page)


def test_a_cdn_page_says_why_its_plots_are_blank_offline(browser: Any, tmp_path: Path) -> None:
    run = standard_run(tmp_path / "run")
    out = run / "report.html"
    out.write_text(render(*build(load_run_dir(run)), "html", "cdn"))
    page, _, _ = open_page(browser, out, "browser_cdn_offline.png", cdn="offline")
    figures = page.eval_on_selector_all(".plotly-graph-div", "ds => ds.map(d => d.id)")
    notes = page.evaluate(OFFLINE_JS)
    assert len(notes) == len(figures) == 4
    assert all(visible and CDN_NOTE in text for visible, text in notes), notes


def test_a_cdn_page_says_nothing_once_plotly_loads(browser: Any, tmp_path: Path) -> None:
    run = standard_run(tmp_path / "run")
    out = run / "report.html"
    out.write_text(render(*build(load_run_dir(run)), "html", "cdn"))
    page, errors, _ = open_page(browser, out, "browser_cdn_online.png", cdn="plotly")
    assert errors == []
    notes = page.evaluate(OFFLINE_JS)
    assert len(notes) == 4 and not any(visible for visible, _ in notes), notes
    assert all(n > 0 for _, n, _ in page.evaluate(FIGURES_JS))


def test_an_inline_page_has_no_cdn_note(browser: Any, tmp_path: Path) -> None:
    run = standard_run(tmp_path / "run")
    out = run / "report.html"
    out.write_text(render(*build(load_run_dir(run)), "html", "inline"))
    page, _, _ = open_page(browser, out, "browser_inline.png", cdn="offline")
    page.wait_for_function("() => document.querySelectorAll('.main-svg').length > 0")
    assert page.evaluate(OFFLINE_JS) == []
