"""Kernel-level diff of two traces: which kernels were added, removed, got faster or slower.

A trace's **kernel profile** (:func:`kernel_profile`) groups the GPU activities (kernels,
memcpy, memset) attributed to a step with GPU work by (family, match key) and sums, per group,
their count and their duration (integer ns). Per-step numbers divide by the number of steps
with GPU work, so two traces with different step counts compare.

The **match key** (:func:`match_key`) is the activity's name, except for Inductor-generated
Triton kernels (``triton_{poi,red,per,tem,for,spl}_fused_…_<n>``), whose trailing ``_<n>``
index is dropped: Inductor numbers its kernels per compilation, so ``triton_poi_fused_add_mul_3``
in one run is ``triton_poi_fused_add_mul_0`` in another; they are matched by what they fuse.
Kernels of one trace sharing a key (``…_add_0`` and ``…_add_1``) form one group.

The **diff** (:func:`kernel_diff`) matches the groups of A and B by (family, key), one
:class:`KernelChange` each, with ``delta_ns`` = B − A in ns per step (the impact on the step;
``< 0``: B spends less). Status, first that applies:

* ``added`` — no such group in A; ``removed`` — none in B;
* ``slower`` / ``faster`` — the GPU time per step changed by more than ``min_change`` of A's
  (relative, default 5 %: :data:`MIN_CHANGE`);
* ``recounted`` — time within ``min_change`` but the count per step differs;
* ``unchanged`` — otherwise.

Rows are sorted by ``|delta_ns|``, largest first (ties: by key).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from traceviz.analyze.model import Analysis
from traceviz.lazy import pandas as pd
from traceviz.trace.tables import Trace

#: Default relative change of a kernel group's GPU time per step counted as faster / slower.
MIN_CHANGE = 0.05

ADDED, REMOVED, SLOWER, FASTER, RECOUNTED, UNCHANGED = (
    "added", "removed", "slower", "faster", "recounted", "unchanged")
KERNEL_STATUSES = (ADDED, REMOVED, SLOWER, FASTER, RECOUNTED, UNCHANGED)

_INDUCTOR = re.compile(r"^(triton_(?:poi|red|per|tem|for|spl)_fused_.+?)_\d+$")


def match_key(name: str) -> str:
    """The name kernels are matched by: an Inductor kernel's name without its trailing
    ``_<n>`` (``triton_poi_fused_add_mul_3`` → ``triton_poi_fused_add_mul``); else the name."""
    m = _INDUCTOR.match(name)
    return m.group(1) if m else name


@dataclass(frozen=True)
class KernelGroup:
    """The activities of one trace sharing (family, key): their names, count and total ns."""

    key: str
    family: str
    names: tuple[str, ...]  # sorted
    count: int
    total_ns: int


@dataclass(frozen=True)
class KernelProfile:
    """A trace's kernel groups over its ``steps`` steps with GPU work."""

    steps: int
    groups: tuple[KernelGroup, ...]  # sorted by (family, key)


def kernel_profile(trace: Trace, analysis: Analysis) -> KernelProfile:
    """The kernel groups of ``trace`` over the steps with GPU work (module doc)."""
    with_gpu = np.append(analysis.steps.column("period_ns") > 0, False)
    step = analysis.activity_step
    keep = with_gpu[np.where(step >= 0, step, len(with_gpu) - 1)]
    gpu = trace.gpu
    if len(gpu) == 0 or not keep.any():
        return KernelProfile(int(with_gpu.sum()), ())
    names = gpu["name"].cat.categories
    df = pd.DataFrame({"code": gpu["name"].cat.codes.to_numpy()[keep],
                       "family": analysis.activity_family[keep].astype(str),
                       "dur": gpu["dur_ns"].to_numpy()[keep].astype(np.int64)})
    acc: dict[tuple[str, str], tuple[set[str], int, int]] = {}
    for (code, family), r in df.groupby(["code", "family"], sort=True)["dur"].agg(
            ["count", "sum"]).iterrows():
        name = str(names[int(code)])
        k = (str(family), match_key(name))
        seen, c, t = acc.get(k, (set(), 0, 0))
        acc[k] = (seen | {name}, c + int(r["count"]), t + int(r["sum"]))
    groups = tuple(KernelGroup(key, fam, tuple(sorted(n)), c, t)
                   for (fam, key), (n, c, t) in sorted(acc.items()))
    return KernelProfile(int(with_gpu.sum()), groups)


@dataclass(frozen=True)
class KernelChange:
    """One kernel group matched across A and B; per-step numbers are float (count / steps,
    ns / steps), ``None`` on the side that lacks the group."""

    key: str
    family: str
    status: str  # one of KERNEL_STATUSES
    names_a: tuple[str, ...]
    names_b: tuple[str, ...]
    count_a: float  # per step
    count_b: float
    ns_a: float  # GPU time per step
    ns_b: float

    @property
    def delta_ns(self) -> float:
        """B − A, ns per step (the change of the step's GPU work)."""
        return self.ns_b - self.ns_a

    @property
    def ratio(self) -> float | None:
        """B / A GPU time per step (``None`` when either side has none)."""
        return self.ns_b / self.ns_a if self.ns_a > 0 and self.ns_b > 0 else None

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "family": self.family, "status": self.status,
                "names_a": list(self.names_a), "names_b": list(self.names_b),
                "count_per_step": [self.count_a, self.count_b],
                "us_per_step": [self.ns_a / 1000, self.ns_b / 1000],
                "delta_us_per_step": self.delta_ns / 1000, "ratio": self.ratio}

    def phrase(self) -> str:
        """"triton_poi_fused_add_mul (triton) slower: 12.0 → 15.0 µs/step (+3.0)"."""
        what = {ADDED: "added", REMOVED: "removed"}.get(self.status, self.status)
        return (f"{self.key} ({self.family}) {what}: {self.ns_a / 1000:,.1f} → "
                f"{self.ns_b / 1000:,.1f} µs/step ({self.delta_ns / 1000:+,.1f}), "
                f"{self.count_a:g} → {self.count_b:g} per step")


@dataclass(frozen=True)
class KernelDiff:
    """Every kernel group of A and B matched (module doc); ``rows`` by impact."""

    steps_a: int
    steps_b: int
    min_change: float
    rows: tuple[KernelChange, ...]

    @property
    def changes(self) -> tuple[KernelChange, ...]:
        """The rows whose status is not ``unchanged``, by impact."""
        return tuple(r for r in self.rows if r.status != UNCHANGED)

    def counts(self) -> dict[str, int]:
        """Rows per status (every status, zeros included)."""
        return {s: sum(r.status == s for r in self.rows) for s in KERNEL_STATUSES}

    @property
    def delta_ns(self) -> float:
        """B − A GPU time per step summed over every group (ns)."""
        return sum(r.delta_ns for r in self.rows)

    def as_dict(self) -> dict[str, Any]:
        return {"steps": [self.steps_a, self.steps_b], "min_change": self.min_change,
                "counts": self.counts(), "delta_us_per_step": self.delta_ns / 1000,
                "changes": [r.as_dict() for r in self.changes],
                "unchanged": [r.key for r in self.rows if r.status == UNCHANGED]}


def _status(a: KernelGroup | None, b: KernelGroup | None, ns_a: float, ns_b: float,
            count_a: float, count_b: float, min_change: float) -> str:
    if a is None:
        return ADDED
    if b is None:
        return REMOVED
    if ns_b - ns_a > min_change * ns_a:
        return SLOWER
    if ns_a - ns_b > min_change * ns_a:
        return FASTER
    return RECOUNTED if count_a != count_b else UNCHANGED


def kernel_diff(a: KernelProfile, b: KernelProfile, min_change: float = MIN_CHANGE) -> KernelDiff:
    """Match the kernel groups of ``a`` and ``b`` and classify each change (module doc)."""
    if min_change < 0:
        raise ValueError(f"min_change must be >= 0, got {min_change}")
    by_a = {(g.family, g.key): g for g in a.groups}
    by_b = {(g.family, g.key): g for g in b.groups}
    rows = []
    for k in sorted(by_a.keys() | by_b.keys()):
        ga, gb = by_a.get(k), by_b.get(k)
        ns_a = ga.total_ns / a.steps if ga and a.steps else 0.0
        ns_b = gb.total_ns / b.steps if gb and b.steps else 0.0
        ca = ga.count / a.steps if ga and a.steps else 0.0
        cb = gb.count / b.steps if gb and b.steps else 0.0
        rows.append(KernelChange(k[1], k[0], _status(ga, gb, ns_a, ns_b, ca, cb, min_change),
                                 ga.names if ga else (), gb.names if gb else (), ca, cb,
                                 ns_a, ns_b))
    rows.sort(key=lambda r: (-abs(r.delta_ns), r.key, r.family))
    return KernelDiff(a.steps, b.steps, min_change, tuple(rows))
