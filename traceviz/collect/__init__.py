"""The profiling runner behind ``traceviz profile``.

This is the only package that imports torch (and triton, through workloads), and only inside
functions or in the per-mode child process, so ``import traceviz.collect`` stays cheap.

Modules: :mod:`.mode_names` (the mode vocabulary, no torch), :mod:`.workload` (load and validate a
workload file), :mod:`.modes` (apply a mode to a step function), :mod:`.timing` (steady-state step
times), :mod:`.correctness`, :mod:`.tracing` (the profiled run), :mod:`.diagnostics`
(torch.compile counters and log lines), :mod:`.profiled_step` (the phases of a mode's run that
both children share), :mod:`.child` (one mode in a subprocess), :mod:`.rank_child` (one rank of
a ``--nproc`` mode), :mod:`.runner` (the parent side), :mod:`.manifest` (the run directory's
``manifest.json``) and :mod:`.analysis` (the analyzer and comparison report over a finished run
directory).
"""
