"""The trace's event names cost their strings and codes only: the hash table pandas builds over
the categories to check them distinct is not kept through the load and the analysis (on the
10⁶ distinct step names of ``benchmarks/many_steps.py`` it held 33 MiB at the peak).

pandas traces its hash tables' memory in a tracemalloc domain of their own (``KHASH_DOMAIN``):
what that domain still holds at the end is what the trace and the analysis keep.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import traceviz
from benchmarks.many_steps import write_trace

#: tracemalloc domain of pandas' khash tables (``pandas/_libs/include/pandas/vendored/klib``).
KHASH_DOMAIN = 424242
STEPS = 20_000


def _khash_bytes_held() -> int:
    snapshot = tracemalloc.take_snapshot()
    return sum(t.size for t in snapshot.traces if t.domain == KHASH_DOMAIN)


def test_load_and_analysis_keep_no_hash_table_over_the_names(tmp_path: Path) -> None:
    from traceviz.analyze.analysis import analyze

    path = tmp_path / "steps.json"
    write_trace(path, STEPS)
    tracemalloc.start()
    try:
        trace = traceviz.load(path, workers=1)
        assert len(trace.names) >= STEPS  # the step names are distinct
        after_load = _khash_bytes_held()
        result = analyze(trace, workers=1)
        after_analysis = _khash_bytes_held()
    finally:
        tracemalloc.stop()
    assert len(result.steps) == STEPS
    # A table over the names would hold at least 16 bytes a name (key and value, load < 1).
    assert after_load < 2 * STEPS
    assert after_analysis < 2 * STEPS


def test_names_are_looked_up_by_name_as_before(tmp_path: Path) -> None:
    """Dropping the table changes no lookup: pandas builds it again when asked."""
    path = tmp_path / "steps.json"
    write_trace(path, 3)
    names = traceviz.load(path, workers=1).names
    assert names.get_loc("ProfilerStep#2") == list(names).index("ProfilerStep#2")
    assert names.is_unique
