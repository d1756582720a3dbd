"""The adversarial campaign (``benchmarks/adversarial``, issue 37): its data-loss check, and a
fixed subset of its cases — one or more per numbered item of the issue — run through the same
case functions as ``python -m benchmarks.adversarial``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.adversarial.campaign import all_cases, select
from benchmarks.adversarial.harness import lost, run_case, snapshot

#: Case ids, by the issue's item they try.
SUBSET = (
    "outputs/report-ranks/read-rank/force",  # 1: a rank trace not named *.pt.trace.json*
    "outputs/report-run/read-manifest-outside/force",  # 1: a manifest-named ../ trace
    "outputs/report-trace/hardlink-to-input/force",  # 1: same inode
    "outputs/profile/web-project/force",  # 2: a folder holding manifest.json
    "outputs/export/fifo/force",  # 3: a special file
    "outputs/kernel-diff/device/force",  # 3: a device node
    "outputs/report-trace/directory/force",  # 10: a directory
    "outputs/export/proc",  # 10: a read-only place
    "outputs/compare-runs/new-file",  # control: the command line works
    "traces/duplicate-traceEvents-full-first/json",  # 5
    "manifests/speedup-edited/report",  # 6
    "manifests/ci-swapped/check-expect",  # 6
    "manifests/blocks-nan/compare",  # 6
    "traces/begin-end-steps-paired/json",  # 7
    "traces/deep-nesting-3000x200/json",  # 8
    "options/thresholds-fifo/report-trace",  # 9
    "traces/markup-close-tag/text",  # 11
    "traces/control-osc-title/md",  # 11
    "options/thresholds-non-utf8/check",  # 12
    "options/env-ascii/report-trace",  # 12
    "traces/empty-traceEvents/json",  # 13
    "traces/scalar-null/json",  # 13
    "traces/dur-1e400-one/json",  # 13
    "options/max-slowdown-5",  # 13
)
CASES = {c.id: c for c in all_cases()}


def test_case_ids_are_unique_and_cover_every_category() -> None:
    cases = all_cases()
    assert len({c.id for c in cases}) == len(cases) >= 300
    assert {c.category for c in cases} == {"outputs", "traces", "manifests", "options"}
    assert select(cases, ["traces"]) == [c for c in cases if c.category == "traces"]


def test_snapshot_names_deleted_changed_and_retyped_entries(tmp_path: Path) -> None:
    (tmp_path / "kept").write_text("a")
    (tmp_path / "changed").write_text("a")
    (tmp_path / "deleted").write_text("a")
    (tmp_path / "allowed").write_text("a")
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "link").symlink_to("kept")
    before = snapshot(tmp_path)
    (tmp_path / "changed").write_text("b")
    (tmp_path / "deleted").unlink()
    (tmp_path / "allowed").write_text("b")
    (tmp_path / "pipe").unlink()
    (tmp_path / "pipe").write_text("")
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to("changed")
    (tmp_path / "new").write_text("c")
    assert lost(before, snapshot(tmp_path), {"allowed"}) == [
        "changed (file) changed", "deleted (file) deleted", "link (symlink) changed",
        "pipe: fifo became file"]


@pytest.mark.slow
@pytest.mark.parametrize("case_id", SUBSET)
def test_adversarial_case_holds(case_id: str) -> None:
    outcome = run_case(CASES[case_id])
    if outcome.skipped:
        pytest.skip(outcome.skipped)
    assert outcome.problems == {}, outcome.steps
