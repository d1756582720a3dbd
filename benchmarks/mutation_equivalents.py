"""Mutants of the analysis core that no test can kill because they do not change behaviour.

Keyed by (module path, original line, mutated line) as ``benchmarks/mutation.py`` reports them
(whitespace-stripped); the value says why the mutant is equivalent. Only a mutant whose output is
provably identical for every input (or differs only in a way no definition in docs/metrics.md
names) belongs here; anything else is a survivor to kill with a test.
"""

from __future__ import annotations

_LINKS = "traceviz/analyze/links.py"
_STEPS = "traceviz/analyze/steps.py"
_GAPS = "traceviz/analyze/gaps.py"

_INT_FILL = ("np.full with an int fill value and no dtype is already int64 (numpy's default "
             "integer on the 64-bit platforms traceviz supports)")
_INT64_SCALAR = ("the values are numpy int64 (column minima/maxima), so an array of them is int64 "
                 "without the dtype")
_PANDAS_KIND = ("pandas ignores `kind` when sorting on several columns (it always uses a stable "
                "lexsort), so the sort is identical whatever `kind` says")

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
}
