"""Memory of one trace's report, stage by stage, in one process (where the peak is).

``python -m benchmarks.memory_stages TRACE [--workers N]`` runs ``traceviz.load``, the
analysis and the JSON report one after the other, with glibc's mmap threshold set as the CLI
sets it (:mod:`traceviz.freed_memory`), and prints for each stage its wall time, the peak RSS
while it ran (sampled every 2 ms by a thread) and the RSS at its end, in MiB.
"""

from __future__ import annotations

import argparse
import importlib
import os
import threading
import time

MIB = 1024 * 1024


def rss_mib() -> float:
    """This process's resident set size (MiB), from ``/proc/self/statm``."""
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MIB


class PeakSampler:
    """The highest RSS seen since the last :meth:`take` (a daemon thread samples it)."""

    def __init__(self, every_s: float = 0.002) -> None:
        self.peak = rss_mib()
        self._every = every_s
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, rss_mib())
            time.sleep(self._every)

    def take(self) -> float:
        """The peak since the last call; starts the next stage at the current RSS."""
        peak, self.peak = max(self.peak, rss_mib()), rss_mib()
        return peak


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_stages",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--workers", type=int, default=1)
    a = parser.parse_args(argv)

    from traceviz.freed_memory import return_freed_memory

    return_freed_memory()
    import pandas  # noqa: F401  (imported before the stages, as the CLI's load does early)

    from traceviz.api.analysis import Analysis
    from traceviz.trace.loader import load

    analysis = importlib.import_module("traceviz.analyze.analysis")
    sampler = PeakSampler()

    def stage(name: str, t0: float) -> None:
        print(f"{name:10s} {time.monotonic() - t0:6.1f} s  peak {sampler.take():8.1f} MiB"
              f"  end {rss_mib():8.1f} MiB", flush=True)

    stage("imports", time.monotonic())
    t0 = time.monotonic()
    trace = load(a.trace, workers=a.workers)
    stage("load", t0)
    t0 = time.monotonic()
    result = analysis.analyze(trace, workers=a.workers)
    stage("analysis", t0)
    t0 = time.monotonic()
    doc = Analysis(trace, result).render("json")
    stage("json", t0)
    print(f"JSON report: {len(doc):,} characters")


if __name__ == "__main__":
    main()
