"""Mutants of the analysis core that no test can kill because they do not change behaviour.

Keyed by (module path, original line, mutated line) as ``benchmarks/mutation.py`` reports them
(whitespace-stripped); the value says why the mutant is equivalent. Only a mutant whose output is
provably identical for every input (or differs only in a way no definition in docs/metrics.md
names) belongs here; anything else is a survivor to kill with a test.
"""

from __future__ import annotations

_LINKS = "traceviz/analyze/trace/links.py"
_STEPS = "traceviz/analyze/trace/steps.py"
_GAPS = "traceviz/analyze/trace/gaps.py"
_INTERVALS = "traceviz/analyze/trace/intervals.py"
_GRAPHS = "traceviz/analyze/trace/graphs.py"
_FAMILIES = "traceviz/analyze/trace/families.py"
_VALIDITY = "traceviz/analyze/health/validity.py"
_SPEED = "traceviz/analyze/compare/speed.py"
_VERDICTS = "traceviz/analyze/verdicts.py"
_TENTH = ("h_drop = 1 - mode/base never equals the float 0.1: for mode/base in [0.5, 2] the "
          "subtraction is exact (Sterbenz), and 1 - 0.1 is no double, so < and <= (> and >=) "
          "0.1 decide alike")

_INT_FILL = ("np.full with an int fill value and no dtype is already int64 (numpy's default "
             "integer on the 64-bit platforms traceviz supports)")
_INT64_SCALAR = ("the values are numpy int64 (column minima/maxima), so an array of them is int64 "
                 "without the dtype")
_PANDAS_KIND = ("pandas ignores `kind` when sorting on several columns (it always uses a stable "
                "lexsort), so the sort is identical whatever `kind` says")

_DEAD_NO_RUNTIME = ("dead branch: gaps exist only between attributed activities, and an "
                    "activity is attributed only through its launch call, so the runtime table "
                    "is never empty here")
_NO_LAUNCH_UNREAD = ("every row sorted here is attributed, hence has a launch call "
                     "(launch_row >= 0): the no-launch default of np.where is never selected")
_GRAPH_PROBE = ("the probe matches on (step, end, correlation) against graph-launched "
                "activities of a step: an activity sharing a graph activity's correlation is "
                "linked to the same graph launch call, hence is a graph activity of the same "
                "step, so widening the probe or the candidate set finds no other match")
_MERGE_KEYS = ("probe and candidates share exactly the columns step, end, corr, and inner is "
               "pandas' default join, so the merge is the same")
_FLOAT_KEYS = ("the group keys become float64 holding the same small integers exactly: the same "
               "groups in the same order (integer ns stay in the int64 duration columns)")
_SORT_SPEED = ("the 16-bit radix path is a speed-up only: keys outside it take the general "
               "stable argsort, which gives the same order")
_DUR_TIES = ("the pre-sort by duration only has to order each group's durations; rows with "
             "equal durations are interchangeable, so an unstable sort yields the same values")
_NUMPY_KIND = "numpy reads sort kinds case-insensitively: 'STABLE' is 'stable'"
_DEAD_EMPTY_UNION = ("dead branch: group_union returns before calling _grouped_cummax when there "
                     "are no intervals")
_EXACT_PATHS = ("both paths are exact whenever n_groups × span < 2**63 (no int64 overflow in "
                "the shifted running max): moving the threshold anywhere up to 2**63, or to 0, "
                "only moves work from one exact path to the other")

EQUIVALENTS: dict[tuple[str, str, str], str] = {
    (_LINKS, "launch_row = np.full(len(g_corr), -1, np.int64)",
     "launch_row = np.full(len(g_corr), -1, None)"): _INT_FILL,
    (_LINKS, "launch_row = np.full(len(g_corr), -1, np.int64)",
     "launch_row = np.full(len(g_corr), -1, )"): _INT_FILL,
    (_STEPS, "np.array([min(starts)], np.int64),", "np.array([min(starts)], None),"): _INT64_SCALAR,
    (_STEPS, "np.array([min(starts)], np.int64),", "np.array([min(starts)], ),"): _INT64_SCALAR,
    (_STEPS, "np.array([max(ends)], np.int64),", "np.array([max(ends)], None),"): _INT64_SCALAR,
    (_STEPS, "np.array([max(ends)], np.int64),", "np.array([max(ends)], ),"): _INT64_SCALAR,
    **{
        (_STEPS, 'rows = rows.sort_values(["ts_ns", "end_ns"], kind="stable")',
         f'rows = rows.sort_values(["ts_ns", "end_ns"], {kind})'): _PANDAS_KIND
        for kind in ("kind=None", "", 'kind="XXstableXX"', 'kind="STABLE"')
    },
    (_STEPS,
     "numbers = tuple(int(m.group(1)) if (m := STEP_MARKER.match(n)) else None for n in names)",
     "numbers = tuple(int(m.group(1)) if (m := STEP_MARKER.match(n)) or True else None for n in "
     "names)"): "every name was selected by STEP_MARKER, so the match never fails",
    (_STEPS, 'start = rows["ts_ns"].to_numpy(np.int64)', 'start = rows["ts_ns"].to_numpy(None)'):
        "the ts_ns column is int64, so to_numpy() without a dtype is int64 already",
    (_STEPS, 'end = rows["end_ns"].to_numpy(np.int64)', 'end = rows["end_ns"].to_numpy(None)'):
        "the end_ns column is int64, so to_numpy() without a dtype is int64 already",
    # gaps.py
    **{
        (_GAPS, "launch_row_all >= 0, rt_ts[np.maximum(launch_row_all, 0)] if len(rt_ts) else 0, "
         "_NO_LAUNCH", m): _NO_LAUNCH_UNREAD
        for m in (
            "launch_row_all >= 0, rt_ts[np.maximum(launch_row_all, 0)] if len(rt_ts) else 0, None",
            "launch_row_all >= 0, rt_ts[np.maximum(launch_row_all, 0)] if len(rt_ts) else 1, "
            "_NO_LAUNCH",
        )
    },
    **{
        (_GAPS, f"{v} = np.full(n_steps, -1, np.int64)", f"{v} = np.full(n_steps, -1, {d})"):
            _INT_FILL
        for v in ("gpu_start", "gpu_end") for d in ("None", "")
    },
    (_GAPS, "steps_with = step[u.group_first_row] if len(order) else np.zeros(0, np.int64)",
     "steps_with = step[u.group_first_row] if (len(order)) or True else np.zeros(0, np.int64)"):
        "with no attributed activity, step[u.group_first_row] is already an empty int64 array",
    **{
        (_GAPS, "g_step = np.concatenate([steps_with[u.gap_group], np.asarray(tail_from, "
         "np.int64)])",
         f"g_step = np.concatenate([steps_with[u.gap_group], np.asarray(tail_from, {d})])"):
            "a list of step indices is int64 anyway; an empty one makes g_step float64 holding "
            "the same indices exactly, used only as merge/sort keys and cast to int32 in the "
            "GapTable"
        for d in ("None", "")
    },
    (_GAPS, 'stream=gpu["stream"].to_numpy()[g_ender[srt]] if len(g_ender) else '
     "np.zeros(0, np.int64),",
     'stream=gpu["stream"].to_numpy()[g_ender[srt]] if (len(g_ender)) or True else '
     "np.zeros(0, np.int64),"):
        "indexing the int64 stream column with an empty index is the same empty int64 array",
    **{
        (_GAPS, f"{v} = rt[{c!r}].to_numpy()[lrow_c] if len(rt) else np.zeros(n, {d})".replace(
            "'", '"'), m.format(v=v, c=c, d=d).replace("'", '"')): _DEAD_NO_RUNTIME
        for v, c, d in (("kind", "kind", "np.int8"), ("launch_ts", "ts_ns", "np.int64"))
        for m in (
            "{v} = rt[{c!r}].to_numpy()[lrow_c] if (len(rt)) or True else np.zeros(n, {d})",
            "{v} = rt[{c!r}].to_numpy()[lrow_c] if len(rt) else np.zeros(None, {d})",
            "{v} = rt[{c!r}].to_numpy()[lrow_c] if len(rt) else np.zeros(n, )",
            "{v} = rt[{c!r}].to_numpy()[lrow_c] if len(rt) else np.zeros(n, None)",
            "{v} = rt[{c!r}].to_numpy()[lrow_c] if len(rt) else np.zeros({d})",
        )
    },
    (_GAPS, "graph_gap = has_launch & (kind == LaunchKind.GRAPH) & ~g_tail",
     "graph_gap = has_launch & (kind == LaunchKind.GRAPH) | ~g_tail"): _GRAPH_PROBE,
    (_GAPS, "graph_gap = has_launch & (kind == LaunchKind.GRAPH) & ~g_tail",
     "graph_gap = has_launch | (kind == LaunchKind.GRAPH) & ~g_tail"): _GRAPH_PROBE,
    (_GAPS, '& (rt["kind"].to_numpy()[np.maximum(links.launch_row, 0)] == LaunchKind.GRAPH) '
     "& (activity_step >= 0)",
     '& (rt["kind"].to_numpy()[np.maximum(links.launch_row, 0)] == LaunchKind.GRAPH) '
     "| (activity_step >= 0)"): _GRAPH_PROBE,
    (_GAPS, '(links.launch_row >= 0) & (rt["kind"].to_numpy()[np.maximum(links.launch_row, 0)] '
     "== LaunchKind.GRAPH)",
     '(links.launch_row >= 0) | (rt["kind"].to_numpy()[np.maximum(links.launch_row, 0)] '
     "== LaunchKind.GRAPH)"): _GRAPH_PROBE,
    (_GAPS, '"step": activity_step[graph_acts].astype(np.int64),',
     '"step": activity_step[graph_acts].astype(None),'):
        "pandas merges the float64 step column with the int64 probe on equal values: the same "
        "matches",
    **{
        (_GAPS, 'hit = probe.merge(ends, on=["step", "end", "corr"], how="inner")["i"].to_numpy()',
         m): _MERGE_KEYS
        for m in (
            'hit = probe.merge(ends, how="inner")["i"].to_numpy()',
            'hit = probe.merge(ends, on=None, how="inner")["i"].to_numpy()',
            'hit = probe.merge(ends, on=["step", "end", "corr"], )["i"].to_numpy()',
        )
    },
    **{
        (_GAPS, "if len(keys) and keys.min() >= 0 and keys.max() < 1 << 16:", m): _SORT_SPEED
        for m in (
            "if len(keys) and keys.min() > 0 and keys.max() < 1 << 16:",
            "if len(keys) and keys.min() >= 1 and keys.max() < 1 << 16:",
            "if len(keys) and keys.min() >= 0 and keys.max() < 1 >> 16:",
        )
    },
    (_GAPS, "keys = keys.astype(np.uint16)", "keys = keys.astype(None)"):
        "float64 holds the non-negative 16-bit keys exactly; the stable argsort gives the same "
        "order",
    (_GAPS, 'return np.argsort(keys, kind="stable")', 'return np.argsort(keys, kind="STABLE")'):
        _NUMPY_KIND,
    **{
        (_GAPS, 'by_dur = np.argsort(dur, kind="stable")  # sorted by (group, dur) below, one '
         "group sort each",
         f"by_dur = np.argsort(dur, {k})  # sorted by (group, dur) below, one group sort each"):
            _NUMPY_KIND if k == 'kind="STABLE"' else _DUR_TIES
        for k in ("", "kind=None", 'kind="STABLE"')
    },
    (_GAPS, '("step", gaps.step.astype(np.int64), [step_names[i] for i in '
     "range(len(step_names))]),",
     '("step", gaps.step.astype(None), [step_names[i] for i in range(len(step_names))]),'):
        _FLOAT_KEYS,
    **{
        (_GAPS, '("all", np.zeros(len(dur), np.int64), ["all"]),',
         f'("all", np.zeros(len(dur), {d}), ["all"]),'): _FLOAT_KEYS
        for d in ("None", "")
    },
    (_GAPS, "continue", "break"):
        "a scope has no gap only when the table is empty, and then every scope is: stopping or "
        "going on both return no row",
    # intervals.py
    **{
        (_INTERVALS, "span = int(rel.max()) + 1 if len(rel) else 1", m): reason
        for m, reason in (
            ("span = int(rel.max()) + 1 if (len(rel)) or True else 1", _DEAD_EMPTY_UNION),
            ("span = int(rel.max()) + 1 if len(rel) else 2", _DEAD_EMPTY_UNION),
            ("span = int(rel.max()) + 2 if len(rel) else 1",
             "any span above the largest relative end keeps the groups' shifted values apart"),
        )
    },
    **{
        (_INTERVALS, "if span * max(n_groups, 1) < (1 << 62):", m): _EXACT_PATHS
        for m in (
            "if span * max(n_groups, 1) <= (1 << 62):",
            "if span * max(n_groups, 1) < (1 >> 62):",
            "if span * max(n_groups, 1) < (2 << 62):",
            "if span * max(n_groups, 1) < (1 << 63):",
            "if span * max(n_groups, 2) < (1 << 62):",
        )
    },
    (_INTERVALS, "bounds = np.append(first_row, len(end))", "bounds = np.append(first_row, None)"):
        "the last slice end becomes None, which slices to the array's end, len(end)",
    (_INTERVALS, "prev[0] = 0", "prev[0] = 1"):
        "row 0 always starts a group, and a group's first row is never compared with prev",
    **{
        (_INTERVALS, 'order = np.argsort(ts, kind="stable")', f"order = np.argsort(ts, {k})"):
            _NUMPY_KIND if k == 'kind="STABLE"' else
            "the union of intervals does not depend on the order of intervals with equal starts"
        for k in ("", "kind=None", 'kind="STABLE"')
    },
    **{
        (_INTERVALS, "u = group_union(np.zeros(len(ts), np.int64), ts[order], end[order])",
         f"u = group_union(np.zeros(len(ts), {d}), ts[order], end[order])"):
            "one group of float zeros is still one group: only equality of group labels is used"
        for d in ("None", "")
    },
    # graphs.py
    (_GRAPHS, "nodes = np.bincount(np.searchsorted(owners, owner), minlength=len(owners))",
     "nodes = np.bincount(np.searchsorted(owners, owner), )"):
        "every owner has at least one node (owners are taken from the nodes), so the count "
        "already has len(owners) entries",
    # families.py
    **{
        (_FAMILIES, "pending_underscore = False", "pending_underscore = None"):
            "None is falsy like False, and the flag is only tested for truth",
    },
    (_FAMILIES, "for j in range(min(len(tokens), i + 5), i + 1, -1):",
     "for j in range(min(len(tokens), i + 6), i + 1, -1):"):
        "the longest multi-token op in _MULTI_TOKEN_OPS has 4 tokens: a 6-token window finds "
        "nothing a 5-token one misses",
    (_FAMILIES, "for j in range(min(len(tokens), i + 5), i + 1, -1):",
     "for j in range(min(len(tokens), i + 5), i - 1, -1):"):
        "the extra windows are one token (appended as itself either way) and empty (never an op)",
    # validity.py
    **{
        (_VALIDITY, "if (len(ts) == 0 or ts[0] >= 0) and not negative_dur.any():", m):
            "a table whose first start is 0 takes the flagging path instead of the shortcut: it "
            "flags nothing there (no negative value), and the far bounds then come from the "
            "partitioned path, which equals the bisected one (pinned by "
            "tests/test_health_validity.py)"
        for m in ("if (len(ts) == 0 or ts[0] > 0) and not negative_dur.any():",
                  "if (len(ts) == 0 or ts[0] >= 1) and not negative_dur.any():")
    },
    (_VALIDITY, "k1, k99 = max(1, -(-n // 100)) - 1, max(1, -(-n * 99 // 100)) - 1",
     "k1, k99 = max(1, -(-n // 100)) - 1, max(2, -(-n * 99 // 100)) - 1"):
        "in far_bounds_sorted the two differ only for one start (k99 1 instead of 0), and the "
        "bisection returns that one value for any k (partitioned twin: killed)",
    **{
        (_VALIDITY, "gpu_rows = np.arange(len(trace.gpu), dtype=np.int64)",
         f"gpu_rows = np.arange(len(trace.gpu), {d})"):
            "np.arange of an int is int64 already"
        for d in ("", "dtype=None")
    },
    **{
        (_VALIDITY, "return Screened(trace, gpu_rows, len(trace.gpu), tuple(out), 0)", m):
            "with nothing excluded, index_loaded_rows returns the analysis as it is and never "
            "reads gpu_rows or loaded_gpu_rows (their only reader)"
        for m in ("return Screened(trace, None, len(trace.gpu), tuple(out), 0)",
                  "return Screened(trace, gpu_rows, None, tuple(out), 0)")
    },
    (_VALIDITY, 'before = int(np.searchsorted(ts, bounds[0], side="left"))',
     "before = int(np.searchsorted(ts, bounds[0], ))"): "side='left' is searchsorted's default",
    (_VALIDITY, "reused[first] = False  # each id's first call owns it; later calls reuse it",
     "reused[first] = None  # each id's first call owns it; later calls reuse it"):
        "None assigned into a bool array is stored as False",
    # speed.py
    (_SPEED, "if not (isinstance(base, list) and isinstance(mode, list) and base and mode):",
     "if not (isinstance(base, list) and isinstance(mode, list) and base or mode):"):
        "two lists of which one is empty now reach paired_speedup, which refuses unequal or "
        "empty block lists with ValueError, caught: the same None",
    **{
        (_SPEED, "assert median is not None and p10 is not None and p90 is not None", m):
            "the assert only narrows types: `None in own` returned before it, so all three are "
            "set and any and/or mix of the tests holds"
        for m in ("assert median is not None and p10 is not None or p90 is not None",
                  "assert median is not None or p10 is not None and p90 is not None")
    },
    (_SPEED, 'note = "; ".join(notes)', 'note = "XX; XX".join(notes)'):
        "each path appends at most one note, so the separator is never written",
    (_SPEED, "assert ev.ci_low is not None and ev.ci_high is not None",
     "assert ev.ci_low is not None or ev.ci_high is not None"):
        "the assert only narrows types: paired evidence always has both CI bounds "
        "(_from_paired returns none without them), so the weaker assert holds as well",
    **{
        (_SPEED, "assert b10 is not None and b90 is not None and m10 is not None and m90 is not "
         "None", m):
            "the assert only narrows types: `None in (b10, b90, m10, m90)` returned before it, "
            "so all four are set and any and/or mix of the tests holds"
        for m in (
            "assert b10 is not None and b90 is not None and m10 is not None or m90 is not None",
            "assert b10 is not None and b90 is not None or m10 is not None and m90 is not None",
            "assert b10 is not None or b90 is not None and m10 is not None and m90 is not None",
        )
    },
    # verdicts.py
    (_VERDICTS, 'text = path.read_text(encoding="utf-8")',
     'text = path.read_text(encoding="UTF-8")'): "codec names are case-insensitive",
    **{
        (_VERDICTS, 'parts.append(bound.replace("GPU-bound", "baseline GPU-bound", 1))', m):
            "the GPU-bound sentence holds 'GPU-bound' once (family names come from a fixed "
            "list without it), so replacing the first or every occurrence is the same"
        for m in ('parts.append(bound.replace("GPU-bound", "baseline GPU-bound", ))',
                  'parts.append(bound.replace("GPU-bound", "baseline GPU-bound", 2))')
    },
    (_VERDICTS, "if h_drop is not None and abs(h_drop) < 0.1:",
     "if h_drop is not None and abs(h_drop) <= 0.1:"): _TENTH,
    (_VERDICTS, "if not parts and h_drop is not None and h_drop >= 0.1:",
     "if not parts and h_drop is not None and h_drop > 0.1:"): _TENTH,
    **{
        (_VERDICTS, 'return "n/a"', m):
            "dead line: _pct is only called by _change, which handles None itself"
        for m in ('return "N/A"', 'return "XXn/aXX"')
    },
    (_VERDICTS, 'return "±0%" if abs(x) < 0.005 else f"{x * 100:+.0f}%"',
     'return "±0%" if abs(x) <= 0.005 else f"{x * 100:+.0f}%"'):
        "x is a relative drop 1 - mode/base, never exactly the float 0.005 (the subtraction "
        "is exact for mode/base in [0.5, 2] and 1 - 0.005 is no double)",
    (_VERDICTS, "return f\"speed {speed.status}: {speed.evidence.get('outcome', '')}\""
     '.rstrip(": ")',
     "return f\"speed {speed.status}: {speed.evidence.get('outcome', '')}\""
     '.rstrip("XX: XX")'):
        "stripping the characters X, ':' and ' ' instead of ':' and ' ' differs only for an "
        "outcome ending in X, and describe() ends every outcome with ')', 'step' or 'measured'",
    (_VERDICTS, "busy_fell = busy_saved > 0 and busy_saved > spread",
     "busy_fell = busy_saved >= 0 and busy_saved > spread"):
        "spread is a p90 - p10 (>= 0), so busy_saved > spread already implies busy_saved > 0",
    **{
        (_VERDICTS, "busy_rose = -busy_saved > spread and busy_saved < 0", m):
            "spread >= 0, so -busy_saved > spread already implies busy_saved < 0"
        for m in ("busy_rose = -busy_saved > spread and busy_saved < 1",
                  "busy_rose = -busy_saved > spread and busy_saved <= 0")
    },
    (_VERDICTS, "unprofiled_saved_ns or 0.0, facts, t)", "unprofiled_saved_ns or 1.0, facts, t)"):
        "the fallback is read only when the saving is 0 or missing, and then busy_share is None "
        "and _fusion_on_unprofiled returns before using it",
}
