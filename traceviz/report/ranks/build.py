"""The multi-rank report model: :func:`build_ranks_report` turns a
:class:`~traceviz.analyze.distributed.model.RanksAnalysis` into a
:class:`~traceviz.report.model.Report` (the straggler sentence first, then per-rank medians,
the rank × step table, collectives and, with ``figures``, the rank plots; rank traces that
could not be analysed are a fact line and a "Failed ranks" section first)."""

from __future__ import annotations

from collections.abc import Sequence

from traceviz.analyze.distributed.model import FailedRank, RanksAnalysis
from traceviz.report.model import Figure, Report, Section, table, us
from traceviz.report.ranks.text import consistency_fact, straggler_sentence
from traceviz.report.units import pct

_N = True


def build_ranks_report(r: RanksAnalysis, figures: bool = True,
                       failed: Sequence[FailedRank] = ()) -> Report:
    """The report; ``figures=False`` leaves the plots out (text output: no plotly import)."""
    st = r.straggler
    facts = [
        ("straggler", straggler_sentence(r)),
        ("one run", consistency_fact(r)),
        ("ranks", f"{len(r.ranks)} traces"
         + (f" of world size {r.world_size}" if r.world_size is not None else "")
         + f": {', '.join(str(i.rank) for i in r.ranks)}"),
        ("steps on every rank", ", ".join(map(str, r.steps)) or "none"),
        ("clocks", _clock_fact(r)),
        ("slowest rank's step period", f"{us(r.slowest_period_ns_median)} µs (median over steps"
         f"); step skew {us(r.step_skew_ns_median)} µs" if r.cross_rank
         else "not compared: the traces are not one run"),
    ]
    if failed:
        facts.insert(2, ("failed ranks", f"{len(failed)} of {len(failed) + len(r.ranks)} rank "
                         "traces could not be analysed (see Failed ranks); the results are "
                         "those of the others"))
    if st is not None:
        facts.append(("straggler share", f"rank {st.rank}: {pct(st.share_of_steps)} of "
                      f"{st.matched_steps} matched steps, mean lateness "
                      f"{us(st.mean_lateness_ns)} µs/step, cause {st.cause}"))
    per_rank = table(
        "ranks-per-rank", "Per rank (medians over steps; µs)",
        [("rank", _N), ("steps", _N), ("period", _N), ("GPU busy", _N), ("compute busy", _N),
         ("effective busy", _N), ("comm wait", _N), ("comm transfer", _N),
         ("exposed comm", _N), ("host wait", _N), ("cpu-bound", _N)],
        [(str(p.rank), str(p.steps), us(p.period_ns_median), us(p.gpu_busy_ns_median),
          us(p.compute_busy_ns_median), us(p.effective_busy_ns_median),
          us(p.comm_wait_ns_median), us(p.comm_transfer_ns_median),
          us(p.exposed_comm_ns_median), us(p.host_wait_ns_median),
          pct(p.cpu_bound_share_median)) for p in r.per_rank])
    steps = table(
        "ranks-steps", "Rank × step (µs)",
        [("step", _N), ("rank", _N), ("period", _N), ("comm wait", _N), ("transfer", _N),
         ("lateness", _N), ("host wait", _N), ("compute busy", _N), ("collectives", _N)],
        [(str(s.step), str(s.rank), us(s.period_ns), us(s.comm_wait_ns),
          us(s.comm_transfer_ns), us(s.lateness_ns), us(s.host_wait_ns),
          us(s.compute_busy_ns), str(s.collectives)) for s in r.rank_steps],
        note="– : the step's collectives did not match across ranks (see Trace health)."
        if r.cross_rank else "– : not computed: the rank traces are not one run (see Trace "
        "health).")
    colls = table(
        "ranks-collectives", "Matched collectives",
        [("group", False), ("collective", False), ("bytes", _N), ("count", _N),
         ("wait p50 µs", _N), ("transfer p50 µs", _N)],
        [(c.group or "default", c.name, f"{c.bytes:,}" if c.bytes >= 0 else "–",
          str(c.count), us(c.wait_p50_ns), us(c.transfer_p50_ns)) for c in r.collectives])
    plots: tuple[Figure, ...] = ()
    if figures:
        from traceviz.report.ranks import figures as rf

        plots = (Figure("ranks-heatmap", rf.rank_step_heatmap(r)),
                 Figure("ranks-bars", rf.rank_stacked_bars(r)),
                 Figure("ranks-arrivals", rf.arrival_spread(r)))
    failed_section = () if not failed else (Section(
        "ranks-failed", "Failed ranks", "Rank traces that could not be analysed, with the "
        "reason; they are left out of every number below.",
        (table("ranks-failed-list", "Failed ranks", [("path", False), ("reason", False)],
                [(f.path, f.reason) for f in failed]),)),)
    sections = (
        *failed_section,
        Section("ranks", "Ranks", "comm wait = last arrival − own arrival (the collective "
                "kernel spins for its peers); transfer = end − last arrival; effective busy = "
                "GPU busy − comm wait (0 at least). Definitions: docs/metrics.md, Rank traces.",
                (per_rank, *plots[:2]), grid=False),
        Section("ranks-collectives", "Collectives", "Instance k of step N matched across the "
                "ranks of its process group; arrival = kernel start.", (colls, *plots[2:])),
        Section("ranks-steps", "Steps", "Every rank in every step all ranks recorded.",
                (steps,)),
    )
    return Report(kind="ranks", title=f"traceviz — {len(r.ranks)} rank traces",
                  facts=tuple(facts),
                  warnings=tuple(w.message for w in r.health) + tuple(
                      f"rank {i.rank}: {w.message}"
                      for i, h in zip(r.ranks, r.rank_health, strict=True)
                      for w in h),
                  sections=sections)


def _clock_fact(r: RanksAnalysis) -> str:
    c = r.clock
    if c.aligned_by == "same_host":
        return "one host: one clock, no correction"
    if c.aligned_by == "none":
        return "not aligned (no matched collective)"
    offs = ", ".join(f"rank {k}: {us(v, 3)} µs (± {us(c.spread_ns[k], 3)})"
                     for k, v in c.offsets_ns.items() if k != c.reference_rank)
    return f"aligned on collective ends to rank {c.reference_rank}: {offs}"


