"""Multi-rank analysis: ``analyze_ranks([(trace, analysis), ...]) -> RanksAnalysis``.

Two halves: a pure per-rank extraction, ``rank_digest(trace, analysis) -> RankDigest``
(:mod:`.digest`: compact, picklable, what a worker process sends back), and the cross-rank part,
``analyze_digests([digest, ...]) -> RanksAnalysis``: rank discovery (:mod:`.discover`), collective
instances (:mod:`.instances`), cross-rank matching and clocks (:mod:`.matching`),
per-rank-per-step metrics and stragglers (:mod:`.metrics`). ``analyze_ranks`` is both in one
process. Definitions: ``docs/metrics.md``, section "Rank traces".

Before anything cross-rank is trusted, the traces must be **consistent** as one run: world
sizes and GPU models agree, and the clocks can be put on one axis (:func:`.matching.
clock_health`). When they are not, the result says why (``consistent``, ``inconsistency``)
and carries no waits, lateness or stragglers, only each rank's own figures — unless
``force=True``, which computes them anyway (the warnings stay).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from traceviz.analyze.distributed.digest import (
    RankDigest,
    instance_frame,
    rank_digest,
)
from traceviz.analyze.distributed.discover import device_health, rank_health
from traceviz.analyze.distributed.matching import (
    align_clocks,
    clock_health,
    match_instances,
    waits,
)
from traceviz.analyze.distributed.metrics import (
    collective_summaries,
    exposed_by_step,
    rank_summary,
    run_straggler,
    step_stragglers,
)
from traceviz.analyze.distributed.model import (
    Instances,
    RanksAnalysis,
    RankStep,
)
from traceviz.analyze.model import Analysis, HealthWarning
from traceviz.lazy import pandas as pd
from traceviz.trace import Trace

#: Health codes that make the rank traces inconsistent as one run (each names both values).
INCONSISTENT_CODES = frozenset({
    "world_size_mismatch", "device_mismatch", "rank_times_disjoint",
    "clock_offsets_not_estimable", "clock_offset_implausible",
})


def analyze_ranks(items: Sequence[tuple[Trace, Analysis]], *, force: bool = False
                  ) -> RanksAnalysis:
    """Analyze the traces of the ranks of one run together (each with its own analysis);
    ``force``: see :func:`analyze_digests`."""
    return analyze_digests([rank_digest(t, a) for t, a in items], force=force)


def analyze_digests(digests: Sequence[RankDigest], *, force: bool = False) -> RanksAnalysis:
    """The cross-rank analysis of the ranks' digests (any order: the result is in rank order,
    the first digest of a rank kept).

    Traces that are not consistent as one run (see the module docstring) get no cross-rank
    results (waits, lateness, stragglers, collective medians, step skew) unless ``force``.
    """
    keep, health, world = rank_health([d.info.rank for d in digests],
                                      [d.info.path for d in digests],
                                      [d.info.world_size for d in digests])
    kept = [digests[i] for i in keep]
    ranks = [d.info.rank for d in kept]
    rank_infos = tuple(d.info for d in kept)
    health.extend(device_health(ranks, [ri.gpu for ri in rank_infos]))

    step_sets = [{s.number for s in d.steps} for d in kept]
    common = set.intersection(*step_sets) if step_sets else set()
    partial = set.union(*step_sets) - common if step_sets else set()
    if partial:
        health.append(HealthWarning(
            "steps_not_on_all_ranks",
            f"{len(partial)} step numbers are not in every rank's trace (profiler windows "
            "differ): their collectives are not matched", len(partial)))
    steps = tuple(sorted(common))

    for d in kept:
        if d.outside:
            health.append(HealthWarning(
                "collectives_outside_steps",
                f"rank {d.info.rank}: {d.outside} collective kernels launched outside every "
                "numbered step are not matched", d.outside))
    inst = instance_frame(kept)

    pg: dict[str, tuple[int, ...]] = {}
    for ri in rank_infos:
        for name, members in ri.groups.items():
            pg.setdefault(name, members)
    members = {g: tuple(r for r in pg.get(g, ranks) if r in ranks) or tuple(ranks)
               for g in (inst["group"].unique() if len(inst) else ())}
    match, warns, bad_steps = match_instances(inst, members, steps)
    health.extend(warns)
    hosts = [ri.hostname for ri in rank_infos]
    clock, cwarn = align_clocks(inst, match, ranks, hosts)
    health.extend(cwarn)
    health.extend(clock_health(clock, ranks, [d.span_ns for d in kept], hosts[0] if hosts
                               else None))
    if any(w.code == "clock_offsets_not_estimable" for w in health):  # says it more strongly
        health = [w for w in health if w.code != "clock_offset_spread"]
    inconsistency = tuple(w.message for w in health if w.code in INCONSISTENT_CODES)
    cross = not inconsistency or force
    if not cross:  # nothing is paired: every row unmatched, every comm metric None
        match = np.full(len(inst), -1, np.int64)
    wait, transfer, late, last_own = waits(inst, match, clock.offsets_ns)
    inst = inst.assign(match=match, wait_ns=wait, transfer_ns=transfer, lateness_ns=late,
                       last_own_ns=last_own)

    rank_steps: list[RankStep] = []
    for d in kept:
        rank_steps.extend(_rank_steps(d, inst[inst["rank"] == d.info.rank], steps,
                                      bad_steps if cross else set(steps)))
    rank_steps_t = tuple(rank_steps)
    clamped = sum(s.effective_busy_clamped for s in rank_steps_t)
    if clamped:
        health.append(HealthWarning(
            "effective_busy_clamped",
            f"{clamped} rank-steps have a comm wait larger than their GPU busy time (rank "
            "clocks aligned badly, or concurrent collectives whose waits add up): their "
            "effective busy is shown as 0", clamped))
    with_coll = set(inst.loc[inst["match"] >= 0, "step"].astype(int)) if len(inst) else set()
    stragglers = step_stragglers(rank_steps_t, with_coll)
    periods = pd.DataFrame({"step": [s.step for s in rank_steps_t],
                            "period": [s.period_ns for s in rank_steps_t]})
    per_step = (periods.groupby("step")["period"].agg(["max", "min"])
                if len(periods) and cross else None)
    return RanksAnalysis(
        ranks=rank_infos,
        world_size=world,
        clock=clock,
        instances=_instances(inst),
        steps=steps,
        rank_steps=rank_steps_t,
        per_rank=tuple(rank_summary(r, [s for s in rank_steps_t if s.rank == r]) for r in ranks),
        collectives=collective_summaries(inst) if len(inst) else (),
        step_stragglers=stragglers,
        straggler=run_straggler(stragglers, rank_steps_t, inst) if len(inst) else None,
        step_skew_ns_median=float(np.median(per_step["max"] - per_step["min"]))
        if per_step is not None else None,
        slowest_period_ns_median=float(np.median(per_step["max"]))
        if per_step is not None else None,
        health=tuple(health),
        rank_health=tuple(d.health for d in kept),
        consistent=not inconsistency,
        inconsistency=inconsistency,
        forced=bool(inconsistency) and force,
    )


def _rank_steps(d: RankDigest, inst: pd.DataFrame, steps: tuple[int, ...], bad: set[int]
                ) -> list[RankStep]:
    base = d.base_time_ns
    m = inst[inst["match"] >= 0]
    transfers = pd.DataFrame({
        "step": m["step"].to_numpy(np.int64),
        "ts_ns": np.maximum(m["start_ns"].to_numpy(), m["last_own_ns"].to_numpy()) - base,
        "end_ns": m["end_ns"].to_numpy() - base,
    })
    transfers = transfers[transfers["end_ns"] > transfers["ts_ns"]]
    c = d.compute_in_comm
    exposed = exposed_by_step((c.step, c.ts_ns, c.end_ns), transfers)
    sums = m.groupby("step")[["wait_ns", "transfer_ns", "lateness_ns"]].sum()
    count = inst.groupby("step").size()
    by_number = {s.number: s for s in d.steps}
    compute = d.compute_busy_ns
    rank = d.info.rank
    out = []
    for n in steps:
        s = by_number[n]
        ok = n not in bad
        row = sums.loc[n] if n in sums.index else None
        out.append(RankStep(
            rank=rank, step=n, period_ns=s.period_ns, gpu_busy_ns=s.gpu_busy_ns,
            compute_busy_ns=compute.get(n, 0), host_wait_ns=s.host_wait_ns,
            sync_wait_ns=s.sync_wait_ns, cpu_bound_share=s.cpu_bound_share,
            collectives=int(count.get(n, 0)), matched=ok,
            comm_wait_ns=(int(row["wait_ns"]) if row is not None else 0) if ok else None,
            comm_transfer_ns=(int(row["transfer_ns"]) if row is not None else 0) if ok else None,
            exposed_comm_ns=exposed.get(n, 0) if ok and s.period_ns > 0 else None,
            lateness_ns=(int(row["lateness_ns"]) if row is not None else 0) if ok else None,
        ))
    return out


def _instances(inst: pd.DataFrame) -> Instances:
    def col(name: str, dtype: type | str = np.int64) -> np.ndarray:
        return inst[name].to_numpy(dtype) if len(inst) else np.zeros(0, dtype)

    return Instances(
        rank=col("rank"), step=col("step"), group=col("group", object), name=col("name", object),
        nelems=col("nelems"), bytes=col("bytes"), seq=col("seq"), start_ns=col("start_ns"),
        end_ns=col("end_ns"), match=col("match"), wait_ns=col("wait_ns"),
        transfer_ns=col("transfer_ns"), lateness_ns=col("lateness_ns"),
    )


__all__ = ["RankDigest", "RanksAnalysis", "analyze_digests", "analyze_ranks", "rank_digest"]
