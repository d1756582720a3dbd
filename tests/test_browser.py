"""Open generated reports in a real headless Chromium (Playwright) and check what renders.

Needs Debian's ``chromium`` at /usr/bin/chromium and the ``playwright`` Python package. Without
them the test is skipped, unless ``TRACEVIZ_REQUIRE_BROWSER=1`` (set in CI), where it fails.
Screenshots go to ``tests/_artifacts/`` (git-ignored).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import traceviz
from tests.synthetic_runs import standard_run
from tests.test_report_html import EVIL, evil_trace
from traceviz.report.compare_report import build, load_run_dir, render
from traceviz.report.html import render_html
from traceviz.report.model import build_trace_report

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "_artifacts"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
#: Plotly graph divs with their number of traces, from the page's own plotly state.
FIGURES_JS = """() => Array.from(document.querySelectorAll('.plotly-graph-div')).map(
  d => [d.id, (d._fullData || []).length, d.querySelectorAll('.main-svg').length])"""


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


def open_page(browser: Any, html_path: Path, shot: str) -> tuple[Any, list[str], list[str]]:
    """Load a report; return the page, console errors and JS dialogs seen."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(html_path.as_uri())
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
