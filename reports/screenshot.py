"""Screenshot a traceviz HTML report with headless Chromium (for the PNGs next to the examples).

Usage: ``.venv/bin/python reports/screenshot.py REPORT_INLINE.html OUT.png``. Render the report
with ``--plotlyjs inline`` for the screenshot (the browser here has no internet, so a CDN report
would show empty figures); commit the small ``--plotlyjs cdn`` HTML next to the PNG.
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def main(src: Path, out: Path) -> None:
    """Full-page PNG of ``src`` at 1400 px wide, once every plotly figure has drawn."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(src.resolve().as_uri())
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.plotly-graph-div'))"
            ".every(d => d.querySelector('.main-svg'))"
        )
        page.screenshot(path=str(out), full_page=True)
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
