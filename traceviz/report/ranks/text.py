"""Words and tables of the multi-rank report: the straggler sentence, and a plain-text
rendering of the :class:`~traceviz.report.model.Report` (``--format text``), every string in
it shown with its control characters escaped (:func:`~traceviz.report.inert.visible`)."""

from __future__ import annotations

from traceviz.analyze.distributed.model import RanksAnalysis
from traceviz.report.inert import visible
from traceviz.report.model import Report, Table


def _ms(ns: float) -> str:
    return f"{ns / 1e6:.1f} ms" if abs(ns) >= 100_000 else f"{ns / 1000:.1f} µs"


def straggler_sentence(r: RanksAnalysis) -> str:
    """"rank 1 arrives 0.6 ms late at 6 of 6 allreduce per step (median per allreduce; 9.5 ms
    per step in all, 85 % of it at allreduce #0 (8,100 µs); …): it is host-bound (host wait
    8.9 ms/step …)"; or why there is no straggler (also: the traces are not one run)."""
    st = r.straggler
    if st is None:
        if not r.cross_rank:
            return (f"the rank traces are not one run ({_checks(len(r.inconsistency))} failed, "
                    "see Trace health): no straggler is named (--force-ranks names one anyway)")
        if not r.step_stragglers:
            return "no collective was matched across ranks: no straggler can be named"
        return "all ranks arrive together at every matched collective: no straggler"
    name = st.collective_name or "collective"
    if st.cause == "host":
        bound = (f"it is host-bound (host wait {_ms(st.host_wait_ns_median)}/step vs compute "
                 f"{_ms(st.compute_busy_ns_median)})")
    elif st.cause == "gpu":
        bound = (f"it is GPU-bound (compute {_ms(st.compute_busy_ns_median)}/step vs host wait "
                 f"{_ms(st.host_wait_ns_median)})")
    else:
        bound = "cause unknown (its trace has no GPU activity to tell host from GPU)"
    where = ""
    if st.concentrated_at is not None:
        cname, index, share = st.concentrated_at
        where = (f", {share * 100:.0f} % of it at {cname or 'collective'} #{index} "
                 f"({st.concentrated_lateness_ns / 1000:,.0f} µs)")
    forced = (" [forced: the rank traces are not one run, see Trace health]"
              if r.forced else "")
    return (f"rank {st.rank} arrives {_ms(st.lateness_ns_per_instance)} late at "
            f"{st.late_instances_per_step:g} of {st.instances_per_step:g} {name} per step "
            f"(median per {name}; {_ms(st.mean_lateness_ns)} per step in all{where}; "
            f"straggler in {st.steps} of {st.matched_steps} steps): {bound}{forced}")


def _checks(n: int) -> str:
    return f"{n} consistency check{'s' if n != 1 else ''}"


def consistency_fact(r: RanksAnalysis) -> str:
    """The "one run" fact: whether the traces are consistent as one run, and what follows."""
    if r.consistent:
        return "yes: world sizes, GPU models and clocks agree"
    head = f"no: {_checks(len(r.inconsistency))} failed (see Trace health)"
    if r.forced:
        return head + "; cross-rank results computed anyway (--force-ranks)"
    return head + ("; no waits, lateness or straggler across ranks, only each rank's own "
                   "figures (--force-ranks computes them anyway)")


def _table_text(t: Table) -> list[str]:
    numeric = t.numeric or (False,) * len(t.columns)
    rows = [tuple(visible(c) for c in r) for r in t.rows]
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c)
              for i, c in enumerate(t.columns)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.rjust(w) if n else c.ljust(w)
                         for c, w, n in zip(cells, widths, numeric, strict=True)).rstrip()

    out = [visible(t.title), line(t.columns), line(tuple("-" * w for w in widths))]
    out += [line(r) for r in rows] or ["(none)"]
    if t.note:
        out.append(visible(t.note))
    return [*out, ""]


def render_ranks_text(report: Report) -> str:
    """Facts, warnings and every table, as aligned plain text."""
    title = visible(report.title)
    lines = [title, "=" * len(title)]
    lines += [visible(f"{k}: {v}") for k, v in report.facts]
    lines.append("")
    if report.warnings:
        lines += ["Trace health:", *(f"  - {visible(w)}" for w in report.warnings), ""]
    for s in report.sections:
        tables = [i for i in s.items if isinstance(i, Table)]
        if tables:
            lines += [visible(s.title), "-" * len(visible(s.title)), visible(s.intro), ""]
            for t in tables:
                lines += _table_text(t)
    return "\n".join(lines).rstrip() + "\n"
