"""Every output block of README.md and docs/*.md is what ``python -m scripts.docs_outputs``
produces now from the committed run directories and traces; the marker language does what
scripts/docs_outputs.py says; README.md stays within 200 lines.

The freshness check runs every marked command (26–41 s on the shared 2-core machine, 11 s of it
``python reports/verdict_table.py`` over the ten committed runs and the rank report). Skipped
when the committed GPU runs are absent (a checkout without ``reports/``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts import docs_outputs as d

ROOT = Path(__file__).resolve().parents[1]
needs_runs = pytest.mark.skipif(not (ROOT / "reports/tiny_transformer/manifest.json").is_file(),
                                reason="the committed GPU runs (reports/) are absent")


def _check(*pages: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scripts.docs_outputs", "--check", *pages],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=600, check=False)


@needs_runs
def test_every_output_block_in_the_docs_is_current() -> None:
    proc = _check()
    assert proc.returncode == 0, (
        "stale output blocks; run `python -m scripts.docs_outputs` and commit the result:\n"
        f"{proc.stdout[-8000:]}{proc.stderr[-2000:]}")


def test_the_pages_have_output_blocks_of_every_kind() -> None:
    specs = [b.spec for p in d.DEFAULT_PAGES
             for b in d.find_blocks(p, (ROOT / p).read_text(encoding="utf-8"))]
    assert len(specs) >= 15
    for command in ("traceviz report", "traceviz kernel-diff", "traceviz check",
                    "traceviz export", "profile-summary", "python reports/verdict_table.py",
                    "python above", "python -m scripts.edited_run"):
        assert any(command in s for s in specs), command


@needs_runs
def test_a_stale_block_fails_the_check_with_a_diff(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("Text.\n\n<!-- output: $ traceviz report reports/tiny_transformer --format "
                    'json | json-each headline "{mode}: {speed_status}" | head 2 -->\n```text\n'
                    "$ traceviz report reports/tiny_transformer --format json\n"
                    "compile: WIN\n```\n<!-- /output -->\n", encoding="utf-8")
    proc = _check(str(page))
    assert proc.returncode == 1
    assert "-compile: WIN\n+compile: INCONCLUSIVE\n+reduce-overhead: WIN\n+…\n" in proc.stdout
    assert page.read_text(encoding="utf-8").count("compile: WIN") == 1  # --check writes nothing
    fixed = subprocess.run([sys.executable, "-m", "scripts.docs_outputs", str(page)], cwd=ROOT,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True,
                           capture_output=True, text=True)
    assert fixed.returncode == 0 and _check(str(page)).returncode == 0


def test_an_unmarked_traceviz_transcript_fails_the_check(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```\n$ traceviz report x.json --format text\nsomething\n```\n\n"
                    "<!-- recorded: a GPU run -->\n```\n$ traceviz profile w.py\nok\n```\n"
                    "<!-- /recorded -->\n", encoding="utf-8")
    proc = _check(str(page))
    assert proc.returncode == 1
    assert f"{page}:1: a traceviz transcript outside" in proc.stderr
    assert ":7:" not in proc.stderr


def test_a_command_with_an_unexpected_exit_status_is_an_error(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- output: traceviz report no-such-file.json -->\n```\n```\n"
                    "<!-- /output -->\n", encoding="utf-8")
    proc = _check(str(page))
    assert proc.returncode == 2
    assert "exit status 1, expected 0" in proc.stderr


LINES = [f"line {i}" for i in range(1, 7)]


def test_head_and_tail_mark_the_cut_with_an_ellipsis_and_keep_exact_lengths_whole() -> None:
    assert d.apply_filter(LINES, ["head", "2"]) == ["line 1", "line 2", "…"]
    assert d.apply_filter(LINES, ["head", "6"]) == LINES
    assert d.apply_filter(LINES, ["tail", "2"]) == ["…", "line 5", "line 6"]
    assert d.apply_filter(LINES, ["tail", "6"]) == LINES


def test_from_section_grep_and_sub_select_lines() -> None:
    assert d.apply_filter(LINES, ["from", "line 5"]) == ["…", "line 5", "line 6"]
    assert d.apply_filter(LINES, ["from", "line 1"]) == LINES
    table = ["intro", "| a |", "|---|", "| 1 |", "", "| b |"]
    assert d.apply_filter(table, ["section", r"^\| a"]) == ["| a |", "|---|", "| 1 |"]
    assert d.apply_filter(LINES, ["grep", "[26]$"]) == ["line 2", "line 6"]
    assert d.apply_filter(LINES, ["grep-v", "[2-6]$"]) == ["line 1"]
    assert d.apply_filter(["a: b: c"], ["sub", "^.*(b)", r"\1"]) == ["b: c"]
    with pytest.raises(d.SpecError):
        d.apply_filter(LINES, ["from", "nowhere"])


def test_json_each_formats_each_item_of_a_mapping_or_a_list() -> None:
    doc = ['{"h": {"x": {"mode": "x", "n": 1}, "y": {"mode": "y", "n": 2}},',
           ' "v": [{"k": "a"}, {"k": "b"}]}']
    assert d.apply_filter(doc, ["json-each", "h", "{mode}={n}"]) == ["x=1", "y=2"]
    assert d.apply_filter(doc, ["json-each", "v", "<{k}>"]) == ["<a>", "<b>"]


def test_keep_head_and_keep_tail_hold_the_recorded_lines_around_the_output() -> None:
    text = ("<!-- output: python -c \"print('new')\" | keep-head 1 | keep-tail 1 -->\n```\n"
            "$ recorded command   \nold\nrecorded end\n```\n<!-- /output -->\n")
    (block,) = d.find_blocks("page.md", text)
    assert d.render(block, text) == "```\n$ recorded command\nnew\nrecorded end\n```\n"


def test_a_marker_quoted_inside_a_fence_is_an_example_not_a_block() -> None:
    text = ("````text\n<!-- output: traceviz report x -->\n```\n```\n<!-- /output -->\n````\n"
            "<!-- output: traceviz report y -->\n```\n```\n<!-- /output -->\n")
    assert [b.spec for b in d.find_blocks("page.md", text)] == ["traceviz report y"]


def test_readme_stays_within_200_lines() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200
