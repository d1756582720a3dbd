"""Where a profile run's time went: seconds per announced phase of a child
(``traceviz/collect/runner.py``, ``phase_seconds``) and the lines ``profile`` prints from them
(``traceviz/cli/display.py``, ``time_spent``); known answers by construction."""

from __future__ import annotations

import io

from traceviz.cli.display import time_spent
from traceviz.collect.profiled_step import PHASE_PREFIX
from traceviz.collect.runner import _pump, phase_seconds


def test_each_phase_lasts_until_the_next_one_and_the_last_until_the_end() -> None:
    marks = [("start", 10.0), ("loading", 12.5), ("timing", 13.0), ("tracing", 20.0)]
    assert phase_seconds(marks, 21.25) == {"start": 2.5, "loading": 0.5, "timing": 7.0,
                                           "tracing": 1.25}


def test_a_phase_announced_twice_is_summed_and_keeps_its_first_place() -> None:
    marks = [("start", 0.0), ("timing", 1.0), ("tracing", 3.0), ("timing", 4.0)]
    assert list(phase_seconds(marks, 4.5).items()) == [("start", 1.0), ("timing", 2.5),
                                                        ("tracing", 1.0)]


def test_the_pump_marks_every_phase_line_and_only_those() -> None:
    marks: list[tuple[str, float]] = [("start", 0.0)]
    seen: list[str] = []
    stream = io.StringIO(f"hello\n{PHASE_PREFIX}loading\nnoise\n{PHASE_PREFIX}timing\n")
    _pump(stream, io.StringIO(), seen.append, {"phase": "start"}, None, marks)
    assert [m[0] for m in marks] == ["start", "loading", "timing"] and seen == ["loading",
                                                                                "timing"]
    assert marks[1][1] <= marks[2][1]


def test_the_stacked_phase_of_a_modes_own_child_is_counted_once() -> None:
    modes = {"eager": {"wall_s": 10.0, "phase_s": {"start": 4.0, "timing": 4.0, "stacks": 2.0},
                       "stack_profiled": {"status": "ok", "log": "logs/eager.log"}}}
    assert time_spent(modes) == ["eager: 10 s (start 4.0, timing 4.0, stacks 2.0)"]


def test_the_time_lines_add_the_stacked_processes_of_earlier_runs_and_against() -> None:
    modes = {"eager": {"wall_s": 10.0, "phase_s": {"start": 4.0, "timing": 6.0},
                       "stack_profiled": {"wall_s": 5.0}},
             "compile": {"wall_s": 30.0, "phase_s": {"compiling": 25.0, "timing": 5.0},
                         "against": {"wall_s": 12.0}},
             "old": {"wall_s": 3.0}}  # a manifest from before phase_s: no line
    assert time_spent(modes) == [
        "eager: 15 s (start 4.0, timing 6.0, stacks 5.0)",
        "compile: 42 s (compiling 25.0, timing 5.0, against 12.0)"]
