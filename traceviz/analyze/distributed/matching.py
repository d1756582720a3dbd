"""Match collective instances across ranks, align the rank clocks, and split each rank's time
in a collective into waiting for peers and transfer.

Instance k of step N of process group G on rank r is matched with instance k of step N of G on
every other member of G (k = the ``Seq`` argument when every instance of G has one, else the
position in start order). A (G, N) whose ranks disagree on the count, the collective names or
the message sizes is not paired at all: a health warning names the step.
"""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np

from traceviz.analyze.distributed.model import ClockAlignment
from traceviz.analyze.model import HealthWarning
from traceviz.analyze.trace.gaps import nearest_rank
from traceviz.lazy import pandas as pd

#: Clock offsets whose spread exceeds this share of the median instance duration are warned.
SPREAD_WARN_SHARE = 0.10
#: Clock offsets whose spread exceeds this share of the median instance duration are not
#: estimable: the traces are inconsistent as one run (equal passes).
SPREAD_MAX_SHARE = 1.0
#: The largest plausible clock offset between two hosts of one run (and the largest gap
#: between the time ranges of two traces whose clocks could not be aligned): hosts of one job
#: keep their clocks within milliseconds of each other (NTP, PTP); a minute apart, the traces
#: were recorded at different times (equal passes).
MAX_CLOCK_OFFSET_NS = 60 * 1_000_000_000


def lower_median(values: np.ndarray) -> int:
    """The nearest-rank median (the lower one of an even count): an actual value, integer
    (:func:`traceviz.analyze.trace.gaps.nearest_rank` of the one group)."""
    return int(nearest_rank(np.sort(values), np.zeros(1, np.int64),
                            np.array([len(values)]), 0.5)[0])


def match_instances(inst: pd.DataFrame, members: dict[str, tuple[int, ...]],
                    steps: tuple[int, ...]) -> tuple[np.ndarray, list[HealthWarning], set[int]]:
    """Cross-rank match id per row of ``inst`` (all ranks; columns rank, step, group, name,
    nelems, seq, start_ns), -1 when unmatched; warnings; the step numbers with a mismatch.

    ``members``: group name -> the loaded ranks expected in it; ``steps``: the step numbers
    every rank has.
    """
    match = np.full(len(inst), -1, np.int64)
    if not len(inst):
        return match, [], set()
    df = inst[["rank", "step", "group", "name", "nelems", "seq", "start_ns"]].copy()
    df["row"] = np.arange(len(df))
    df = df[df["step"].isin(steps)]
    seq_groups = {g for g, s in df.groupby("group")["seq"] if (s.to_numpy() >= 0).all()}
    df = df.sort_values(["rank", "group", "step", "start_ns"], kind="stable")
    ordinal = df.groupby(["rank", "group", "step"]).cumcount().to_numpy()
    df["key"] = np.where(df["group"].isin(seq_groups), df["seq"].to_numpy(), ordinal)
    bad: dict[int, list[str]] = {}
    next_id = 0
    for (group, step), g in df.groupby(["group", "step"], sort=True):
        want = members.get(group, ())
        counts = g.groupby("rank").size()
        problem = None
        if set(counts.index) != set(want):
            missing = sorted(set(want) - set(counts.index))
            problem = f"ranks {missing} have no {group or 'default'}-group collective"
        elif counts.nunique() != 1:
            problem = "counts differ (" + ", ".join(
                f"rank {r}: {c}" for r, c in counts.items()) + ")"
        else:
            per_key = g.groupby("key").agg(
                n=("rank", "size"), ranks=("rank", "nunique"), names=("name", "nunique"),
                sizes=("nelems", lambda s: s[s >= 0].nunique()))
            if ((per_key["n"] != len(want)) | (per_key["ranks"] != len(want))).any():
                problem = "instances do not line up (different Seq numbers)"
            elif (per_key["names"] > 1).any():
                problem = "collective names differ"
            elif (per_key["sizes"] > 1).any():
                problem = "message sizes differ"
        if problem is not None:
            bad.setdefault(int(step), []).append(f"group {group or 'default'}: {problem}")
            continue
        keys, inv = np.unique(g["key"].to_numpy(), return_inverse=True)
        match[g["row"].to_numpy()] = next_id + inv
        next_id += len(keys)
    warnings = [
        HealthWarning(
            "collective_mismatch",
            f"step {step}: {'; '.join(msgs)} — its collectives are left out of the wait metrics",
            1)
        for step, msgs in sorted(bad.items())
    ]
    return match, warnings, set(bad)


def align_clocks(inst: pd.DataFrame, match: np.ndarray, ranks: list[int],
                 hosts: list[str | None]) -> tuple[ClockAlignment, list[HealthWarning]]:
    """Offset of each rank's clock from the lowest rank's (see ``docs/metrics.md``)."""
    ref = min(ranks)
    zero = {r: 0 for r in ranks}
    dur = (inst["end_ns"] - inst["start_ns"]).to_numpy()[match >= 0]
    med_dur = lower_median(dur) if len(dur) else None
    if len(ranks) > 1 and hosts[0] is not None and len(set(hosts)) == 1:
        return ClockAlignment("same_host", ref, zero, zero, med_dur), []
    m = inst.assign(match=match)[match >= 0]
    ref_end = m[m["rank"] == ref].set_index("match")["end_ns"]
    offsets, spreads = dict(zero), dict(zero)
    for r in ranks:
        if r == ref:
            continue
        own = m[m["rank"] == r].set_index("match")["end_ns"]
        common = own.index.intersection(ref_end.index)
        if not len(common):
            return ClockAlignment("none", ref, zero, zero, med_dur), (
                [HealthWarning("clocks_unaligned",
                               "no collective matched across ranks: rank clocks are taken as "
                               "they are (not aligned)", 0)] if len(ranks) > 1 else [])
        d = own[common].to_numpy() - ref_end[common].to_numpy()
        offsets[r] = lower_median(d)
        spreads[r] = lower_median(np.abs(d - offsets[r]))
    warnings = []
    worst = max(spreads.values())
    if med_dur is not None and worst > SPREAD_WARN_SHARE * med_dur:
        warnings.append(HealthWarning(
            "clock_offset_spread",
            f"rank clock offsets are uncertain: their spread ({worst / 1000:.1f} µs) exceeds "
            f"10 % of the median collective duration ({med_dur / 1000:.1f} µs)", 1))
    return ClockAlignment("collective_end", ref, offsets, spreads, med_dur), warnings


def clock_health(clock: ClockAlignment, ranks: list[int],
                 spans: list[tuple[int, int] | None], host: str | None
                 ) -> list[HealthWarning]:
    """Can the ranks' clocks be put on one axis as one run's? (``docs/metrics.md``, "Rank
    traces", consistency.) Each rank is checked against the reference rank:

    * one host (``same_host``): their absolute time ranges must overlap (a shared instant;
      touching is not enough) — ``rank_times_disjoint``;
    * aligned on collective ends: the spread of the per-instance offsets must be at most the
      median matched instance duration — ``clock_offsets_not_estimable`` — and the offset at
      most :data:`MAX_CLOCK_OFFSET_NS` — ``clock_offset_implausible``;
    * not aligned (nothing matched, hosts differ or unknown): their time ranges must be at
      most :data:`MAX_CLOCK_OFFSET_NS` apart — ``rank_times_disjoint``.

    ``spans``: each rank's absolute ``(first start, last end)``, ``None`` when unknown (not
    checked); ``host``: the shared host name (``same_host``).
    """
    ref = clock.reference_rank
    span = dict(zip(ranks, spans, strict=True))
    out: list[HealthWarning] = []
    for r in ranks:
        if r == ref:
            continue
        a, b = span.get(r), span.get(ref)
        if clock.aligned_by == "collective_end":
            spread, med = clock.spread_ns.get(r, 0), clock.median_instance_ns
            if med is not None and spread > SPREAD_MAX_SHARE * med:
                out.append(HealthWarning(
                    "clock_offsets_not_estimable",
                    f"rank {r}'s clock offset to rank {ref} cannot be estimated: its "
                    f"per-instance offsets spread {spread / 1000:,.1f} µs (median absolute "
                    f"deviation), more than the collectives' median duration "
                    f"{med / 1000:,.1f} µs: the matched collectives do not line up in time",
                    1))
            off = clock.offsets_ns.get(r, 0)
            if abs(off) > MAX_CLOCK_OFFSET_NS:
                out.append(HealthWarning(
                    "clock_offset_implausible",
                    f"rank {r}'s clock is {_seconds(abs(off))} "
                    f"{'ahead of' if off > 0 else 'behind'} rank {ref}'s (from collective "
                    f"ends), more than the {_seconds(MAX_CLOCK_OFFSET_NS)} two hosts of one run "
                    "can differ: the traces were recorded at different times", 1))
        elif a is not None and b is not None:
            gap = max(a[0], b[0]) - min(a[1], b[1])
            if clock.aligned_by == "same_host" and gap >= 0:
                out.append(HealthWarning(
                    "rank_times_disjoint",
                    f"rank {r}'s trace ({_when(a)}) and rank {ref}'s ({_when(b)}) do not "
                    f"overlap in time, though both were recorded on host {host}", 1))
            elif clock.aligned_by == "none" and gap > MAX_CLOCK_OFFSET_NS:
                out.append(HealthWarning(
                    "rank_times_disjoint",
                    f"rank {r}'s trace ({_when(a)}) and rank {ref}'s ({_when(b)}) are "
                    f"{_seconds(gap)} apart, more than the {_seconds(MAX_CLOCK_OFFSET_NS)} two "
                    "hosts of one run can differ", 1))
    return out


def _seconds(ns: int) -> str:
    """``735,003.8 s (8.5 days)``; the days only from one day."""
    days = ns / 86_400e9
    return f"{ns / 1e9:,.1f} s" + (f" ({days:,.1f} days)" if days >= 1 else "")


def _when(span: tuple[int, int]) -> str:
    """``2022-08-23 21:24:22.584 – 21:24:23.064 UTC`` (the date again when it changes)."""
    a, b = (datetime.fromtimestamp(t / 1e9, tz=timezone.utc) for t in span)
    first = a.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    second = b.strftime("%H:%M:%S.%f" if a.date() == b.date() else "%Y-%m-%d %H:%M:%S.%f")[:-3]
    return f"{first} – {second} UTC"


def waits(inst: pd.DataFrame, match: np.ndarray, offsets: dict[int, int]
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row: ``(wait, transfer, lateness, last_arrival_own_clock)`` in ns (0 / -1 for
    unmatched rows). Arrivals are compared on the reference clock."""
    n = len(inst)
    off = inst["rank"].map(offsets).fillna(0).to_numpy(np.int64)
    arrive = inst["start_ns"].to_numpy() - off
    end = inst["end_ns"].to_numpy() - off
    ok = match >= 0
    wait = np.zeros(n, np.int64)
    transfer = np.zeros(n, np.int64)
    late = np.zeros(n, np.int64)
    last_own = np.full(n, -1, np.int64)
    if ok.any():
        ids = match[ok]
        size = int(ids.max()) + 1
        last = np.full(size, np.iinfo(np.int64).min)
        first = np.full(size, np.iinfo(np.int64).max)
        np.maximum.at(last, ids, arrive[ok])
        np.minimum.at(first, ids, arrive[ok])
        wait[ok] = last[ids] - arrive[ok]
        transfer[ok] = np.maximum(end[ok] - last[ids], 0)
        late[ok] = arrive[ok] - first[ids]
        last_own[ok] = last[ids] + off[ok]
    return wait, transfer, late, last_own
