"""The profile summary's "profiled ms (x)" says what its inflation is over when that is not the
step column (issue 38, item 1: a CPU run showed a 19.99 ms step beside "5.65 (0.98x)"): the
unprofiled steps timed one by one just before the trace, named per mode when they fell outside
the step column's own p10–p90 (an edge counts as inside)."""

from __future__ import annotations

from typing import Any

import pytest

from traceviz.cli.display import inflation_bases, profile_summary


def entry(adjacent_ms: float, median: float = 20.0, p10: float = 18.0,
          p90: float = 22.0) -> dict[str, Any]:
    return {"status": "ok",
            "timing": {"median_ms": median, "p10_ms": p10, "p90_ms": p90, "noisy": False},
            "profiled": {"step_ms": adjacent_ms * 1.1, "adjacent_unprofiled_ms": adjacent_ms,
                         "inflation": 1.1}}


@pytest.mark.parametrize(("adjacent_ms", "named"), [
    (20.0, False), (18.0, False), (22.0, False),  # inside, both edges included
    (17.999, True), (22.001, True), (5.65, True),
])
def test_a_mode_is_named_only_when_its_inflation_base_left_the_step_band(
        adjacent_ms: float, named: bool) -> None:
    text = inflation_bases({"eager": entry(20.0), "compile": entry(adjacent_ms)})
    if named:
        assert text is not None and text.endswith(f"in ms: compile {adjacent_ms:.4g}")
    else:
        assert text is None


def test_the_line_appears_under_the_summary_table() -> None:
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(profile_summary({"compile": entry(5.65)}, 200))
    out = " ".join(console.export_text().split())
    assert "(x): the profiled step over the unprofiled steps timed one by one" in out
    assert "in ms: compile 5.65" in out


def test_modes_without_a_trace_or_timing_are_left_out() -> None:
    no_trace = {"status": "failed", "timing": entry(5.0)["timing"], "profiled": {}}
    no_timing = {"status": "ok", "profiled": entry(5.0)["profiled"]}
    no_p10 = {**entry(5.0), "timing": {"median_ms": 20.0, "p90_ms": 22.0}}
    assert inflation_bases({"a": no_trace, "b": no_timing, "c": no_p10}) is None
