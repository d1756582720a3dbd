"""One trace's metrics: what happened on the GPU and the CPU that launched it, step by step.

Launch linking (:mod:`.links`), step windows and attribution (:mod:`.steps`), interval unions
(:mod:`.intervals`), GPU busy, period and classified idle gaps (:mod:`.gaps`, the ``queued`` part
in :mod:`.queued`), totals over the union of step periods (:mod:`.union_totals`), graph replays
(:mod:`.graphs`), kernel families (:mod:`.families`), torch.compile structure
(:mod:`.compile_structure`) and the compute / communication split (:mod:`.comm`). All times are
integer ns; definitions: ``docs/metrics.md``. :func:`traceviz.analyze.analysis.analyze` runs them.
"""
