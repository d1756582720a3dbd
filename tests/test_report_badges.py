"""Modes that did not run wear SKIPPED / FAILED badges (their own colour) in every format; a
skipped mode's verdicts have status SKIPPED in the data too, a failed mode's stay
INCONCLUSIVE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.synthetic_runs import COMPILED, EAGER, FAILED, ModeSpec, write_run_dir
from traceviz.report.badges import FAILED as FAILED_BADGE
from traceviz.report.badges import SKIPPED, not_run_badge
from traceviz.report.compare_report import build, load_run_dir, render

SKIP = ModeSpec(kernels=(), status="skipped", reason="no Triton implementation", correct=None)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory):
    run = write_run_dir(tmp_path_factory.mktemp("badges"),
                        {"eager": EAGER, "compile": COMPILED, "broken": FAILED, "triton": SKIP})
    return build(load_run_dir(run))


@pytest.mark.parametrize(("row_status", "shown"), [
    ("ok", None), ("missing", None), ("skipped", SKIPPED), ("failed", FAILED_BADGE),
    ("crashed", FAILED_BADGE), ("timeout", FAILED_BADGE), ("mismatch", FAILED_BADGE)])
def test_only_modes_that_did_not_run_get_a_not_run_badge(row_status: str, shown: str | None):
    assert not_run_badge(row_status) == shown


def test_json_status_is_skipped_for_a_skipped_mode_and_the_badge_says_failed(built) -> None:
    doc = json.loads(render(*built, "json"))
    by = {(v["mode"], v["kind"]): v for v in doc["verdicts"]}
    for kind in ("speed", "fusion", "launch"):
        assert by[("triton", kind)]["status"] == "SKIPPED"
        assert by[("triton", kind)]["badge"] == "SKIPPED"
        assert by[("broken", kind)]["status"] == "INCONCLUSIVE"
        assert by[("broken", kind)]["badge"] == "FAILED"
    assert by[("compile", "speed")]["badge"] == by[("compile", "speed")]["status"]
    assert doc["headline"]["triton"]["badge"] == "SKIPPED"
    assert doc["headline"]["triton"]["speed_status"] == "SKIPPED"
    assert doc["headline"]["broken"]["badge"] == "FAILED"


def test_html_gives_skipped_and_failed_their_own_coloured_class(built) -> None:
    page = render(*built, "html", plotlyjs="cdn")
    assert '<span class="status st-SKIPPED">SKIPPED</span>' in page
    assert '<span class="status st-FAILED">FAILED</span>' in page
    css = {cls: page.split(f".st-{cls}{{", 1)[1].split("}", 1)[0]
           for cls in ("INCONCLUSIVE", "SKIPPED", "FAILED")}
    assert len(set(css.values())) == 3, css


def _rows_of(text: str, mode: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(f"│ {mode} ")]


def test_text_and_markdown_show_the_badges_not_inconclusive(built) -> None:
    text = render(*built, "text")
    for mode, shown in (("triton", "SKIPPED"), ("broken", "FAILED")):
        rows = [r for r in _rows_of(text, mode) if "INCONCLUSIVE" in r or shown in r]
        assert rows and all(shown in r and "INCONCLUSIVE" not in r for r in rows), rows
    md = render(*built, "md")
    assert "⏭️ **SKIPPED**" in md and "💥 **FAILED**" in md
    triton_lines = [line for line in md.splitlines() if line.startswith("| triton |")]
    assert triton_lines and not any("INCONCLUSIVE" in line for line in triton_lines)


def test_notebook_view_shows_the_badges(tmp_path: Path) -> None:
    from traceviz.api import load_run

    run = write_run_dir(tmp_path, {"eager": EAGER, "compile": COMPILED, "triton": SKIP})
    html = load_run(run)._repr_html_()
    assert ">SKIPPED</b>" in html and ">INCONCLUSIVE</b>" not in html


def test_html_health_notes_follow_the_headline(built) -> None:
    from dataclasses import replace

    from traceviz.report.html import render_html

    page = render_html(replace(built[1], warnings=("compile: an informational note",)), "cdn")
    assert (page.index('<section id="headline">') < page.index('id="health"')
            < page.index('<section id="verdicts">'))
