"""The kernel diff in the report model: a sortable table of the changed kernel groups, shown by
``traceviz kernel-diff`` and per mode by the run-vs-run comparison (definitions:
:mod:`traceviz.analyze.review.kernel_diff`, ``docs/comparison.md``)."""

from __future__ import annotations

from traceviz.analyze.review.kernel_diff import KernelDiff
from traceviz.report.model import Table, num

#: Changed kernel groups listed per diff before the rest are summarised.
MAX_KERNEL_ROWS = 40

KERNEL_COLUMNS = ("kernel (matched by)", "family", "status", "count/step A", "count/step B",
                  "µs/step A", "µs/step B", "Δ µs/step", "B/A")


def _count(x: float) -> str:
    return num(x, 0 if x == int(x) else 2)


def kernel_rows(diff: KernelDiff, max_rows: int = MAX_KERNEL_ROWS) -> list[tuple[str, ...]]:
    """The changed groups (by impact), at most ``max_rows``, formatted."""
    return [
        (r.key, r.family, r.status, _count(r.count_a), _count(r.count_b),
         f"{r.ns_a / 1000:,.1f}", f"{r.ns_b / 1000:,.1f}", f"{r.delta_ns / 1000:+,.1f}",
         "–" if r.ratio is None else f"{r.ratio:.2f}×")
        for r in diff.changes[:max_rows]
    ]


def kernel_note(diff: KernelDiff, max_rows: int = MAX_KERNEL_ROWS) -> str:
    """What the table holds and leaves out, in words."""
    counts = diff.counts()
    said = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    shown = len(diff.changes)
    extra = (f" Showing the {max_rows} largest of {shown} changes." if shown > max_rows else "")
    return (f"Per step with GPU work (A: {diff.steps_a} steps, B: {diff.steps_b}); Inductor "
            f"kernels matched by what they fuse (trailing _<n> dropped); faster / slower: GPU "
            f"time per step changed by more than {diff.min_change * 100:g} %. Groups: "
            f"{said or 'none'}; GPU time per step B − A, all groups: "
            f"{diff.delta_ns / 1000:+,.1f} µs.{extra}")


def kernel_table(diff: KernelDiff, id_: str, title: str) -> Table:
    """The changed kernel groups as a sortable table (``id_``: its fixed DOM id)."""
    return Table(id_, title, KERNEL_COLUMNS, tuple(kernel_rows(diff)),
                 (False, False, False, True, True, True, True, True, True), kernel_note(diff),
                 (True, False, False, False, False, False, False, False, False), sortable=True)
