"""Hand-maintained mutants of the definition edges of ``gaps.py``, ``steps.py`` and ``links.py``.

Each mutant is one text substitution inside one function that breaks one edge of a definition in
docs/metrics.md, and names the hand-built tests that pin that edge (``tests/test_edge_mutants.py``
checks that every one of them fails under the mutant). The full campaign is
``python -m benchmarks.mutation`` (docs/reliability.md, "Mutation testing").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EdgeMutant:
    """``original`` → ``mutated`` inside ``function`` (``Class.method`` for a method)."""

    id: str
    module: str
    function: str
    original: str
    mutated: str
    edge: str  # the definition edge the mutant moves, as docs/metrics.md words it
    killers: tuple[str, ...]  # "tests/test_x.py::test_name", each taking at most ``tmp_path``


_METRICS = "tests/test_metrics_handbuilt.py"
_GAPS = "tests/test_gaps_edges.py"
_STEPS = "tests/test_steps_edges.py"
_LINKS = "tests/test_links_edges.py"

EDGE_MUTANTS: tuple[EdgeMutant, ...] = (
    EdgeMutant(
        "sync-ending-at-gap-start",
        "traceviz.analyze.trace.gaps", "_classify",
        'after_start = np.searchsorted(sync_end, g_start, side="right")',
        'after_start = np.searchsorted(sync_end, g_start, side="left")',
        "sync_wait: a sync call ended *after* the gap's start (one ending exactly at it does not "
        "count)",
        (f"{_METRICS}::test_sync_edges_a_sync_ending_at_the_gap_start_is_not_one_ending_at_the_"
         "launch_is",),
    ),
    EdgeMutant(
        "sync-ending-at-launch-start",
        "traceviz.analyze.trace.gaps", "_classify",
        'by_launch = np.searchsorted(sync_end, launch_ts, side="right")',
        'by_launch = np.searchsorted(sync_end, launch_ts, side="left")',
        "sync_wait: a sync call ended *no later than* the launch call's start (exactly at it "
        "counts)",
        (f"{_METRICS}::test_sync_edges_a_sync_ending_at_the_gap_start_is_not_one_ending_at_the_"
         "launch_is",),
    ),
    EdgeMutant(
        "launch-at-gap-start",
        "traceviz.analyze.trace.gaps", "_classify",
        "host = has_launch & (launch_ts >= g_start)",
        "host = has_launch & (launch_ts > g_start)",
        "host_wait / sync_wait: the launch call started *at or after* the gap's start",
        (f"{_GAPS}::test_a_launch_call_starting_exactly_at_the_gap_start_is_a_host_wait",),
    ),
    EdgeMutant(
        "graph-node-ending-at-gap-start",
        "traceviz.analyze.trace.gaps", "_classify",
        '"end": g_start[graph_gap],',
        '"end": g_start[graph_gap] + 1,',
        "graph_internal: an activity of the same graph launch ends *exactly* at the gap's start",
        (f"{_METRICS}::test_graph_replay_gaps_are_graph_internal_and_replay_row_is_exact",),
    ),
    EdgeMutant(
        "next-step-starting-at-this-end",
        "traceviz.analyze.trace.gaps", "step_timeline",
        "if gpu_start[nxt] > gpu_end[s]:",
        "if gpu_start[nxt] >= gpu_end[s]:",
        "period / tail hole: a next step starting exactly at this step's last end leaves no "
        "hole (touching intervals leave no hole)",
        (f"{_GAPS}::test_a_next_step_starting_exactly_at_this_steps_end_leaves_no_tail_hole",),
    ),
    EdgeMutant(
        "simultaneous-starts-earliest-launch",
        "traceviz.analyze.trace.gaps", "step_timeline",
        "order = rows[np.lexsort((launch_ts_all[rows], ts_all[rows], activity_step[rows]))]",
        "order = rows[np.lexsort((-launch_ts_all[rows], ts_all[rows], activity_step[rows]))]",
        "gap classification: of several activities starting at the gap's end, the one whose "
        "launch call started first ends it",
        (f"{_METRICS}::test_simultaneous_starts_take_the_earliest_launched_activity",),
    ),
    EdgeMutant(
        "nearest-rank",
        "traceviz.analyze.trace.gaps", "nearest_rank",
        "k = np.maximum(np.ceil(q * counts).astype(np.int64), 1) - 1",
        "k = np.maximum(np.floor(q * counts).astype(np.int64), 1) - 1",
        "gap percentiles are nearest-rank: the smallest length with at least p % at or below it",
        (f"{_METRICS}::test_gap_percentiles_are_nearest_rank_gap_lengths",),
    ),
    EdgeMutant(
        "call-at-window-start",
        "traceviz.analyze.trace.steps", "StepWindows.locate",
        'idx = np.searchsorted(self.start_ns, t_ns, side="right") - 1',
        'idx = np.searchsorted(self.start_ns, t_ns, side="left") - 1',
        "a call on a shared boundary belongs to the later step (the last window starting *at or "
        "before* it)",
        (f"{_STEPS}::test_a_call_on_a_shared_boundary_belongs_to_the_later_step",
         f"{_STEPS}::test_a_call_at_a_window_start_or_end_belongs_to_it_and_one_past_the_end_to_"
         "none"),
    ),
    EdgeMutant(
        "call-at-window-end",
        "traceviz.analyze.trace.steps", "StepWindows.locate",
        "inside = (idx >= 0) & (t_ns <= self.end_ns[idx_c])",
        "inside = (idx >= 0) & (t_ns < self.end_ns[idx_c])",
        "the window [ts, ts + dur] is closed: a call starting exactly at its end belongs to it",
        (f"{_STEPS}::test_a_call_at_a_window_start_or_end_belongs_to_it_and_one_past_the_end_to_"
         "none",),
    ),
    EdgeMutant(
        "touching-windows-overlap",
        "traceviz.analyze.trace.steps", "find_steps",
        "overlapping = int(np.count_nonzero(start[1:] < end[:-1]))",
        "overlapping = int(np.count_nonzero(start[1:] <= end[:-1]))",
        "overlapping_steps: a window starting *before* the previous one ends (touching is not)",
        (f"{_STEPS}::test_a_call_on_a_shared_boundary_belongs_to_the_later_step",),
    ),
    EdgeMutant(
        "same-start-longest-window-last",
        "traceviz.analyze.trace.steps", "find_steps",
        'rows = rows.sort_values(["ts_ns", "end_ns"], kind="stable")',
        'rows = rows.sort_values(["ts_ns"], kind="stable")',
        "windows sorted by (start, end): of two with one start, the one ending last takes every "
        "call",
        (f"{_STEPS}::test_of_two_windows_with_one_start_the_one_ending_last_takes_every_call",),
    ),
    EdgeMutant(
        "first-call-owns-shared-id",
        "traceviz.analyze.trace.links", "link_launches",
        "owner = rows[first]",
        "owner = rows[len(rows) - 1 - np.unique(keys[::-1], return_index=True)[1]]",
        "two runtime calls sharing a correlation id: the earlier one owns the activities",
        (f"{_LINKS}::test_of_two_calls_sharing_a_correlation_the_earlier_owns_the_activities",),
    ),
    EdgeMutant(
        "no-launch-is-minus-one",
        "traceviz.analyze.trace.links", "link_launches",
        "launch_row = np.full(len(g_corr), -1, np.int64)",
        "launch_row = np.full(len(g_corr), -2, np.int64)",
        "an activity with no launch call links to row -1 (``Links.launch_row``)",
        (f"{_LINKS}::test_activity_without_a_launch_call_links_to_minus_one",),
    ),
    EdgeMutant(
        "no-correlated-call-at-all",
        "traceviz.analyze.trace.links", "link_launches",
        "if len(uniq) and len(g_corr):",
        "if len(uniq) or len(g_corr):",
        "activities but no runtime call with a correlation id: every activity is unlinked",
        (f"{_LINKS}::test_activities_with_no_correlated_runtime_call_are_all_unlinked",),
    ),
)
