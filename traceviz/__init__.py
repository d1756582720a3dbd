"""traceviz: evidence from PyTorch profiler traces on whether torch.compile and CUDA graphs cut
kernel count and launch overhead.

The Python API (``docs/api.md``): ``traceviz.analyze(path)`` → :class:`Analysis` (pandas
DataFrames of steps, gaps, kernels, ...), ``traceviz.load_run(run_dir)`` → :class:`Run`,
``traceviz.compare(baseline, *others)`` → :class:`Comparison`. ``traceviz.load(path)`` reads a
trace into columnar tables; ``traceviz.analyze(trace)`` on a loaded trace returns the frozen
:class:`traceviz.analyze.model.Analysis` (the pipeline's pure function). Importing traceviz
loads numpy, msgspec and the loader; pandas and the analysis load on first use (while a big
trace's worker processes decode), torch, plotly and HTA only in the commands and methods that
need them.
"""

# The subpackage first: importing it after the function ``analyze`` is bound here would bind
# the name to the subpackage instead (its own import is light: the analysis loads on use).
import traceviz.analyze  # noqa: F401
from traceviz._version import __version__
from traceviz.api import (
    Analysis,
    Comparison,
    Ranks,
    Run,
    Summary,
    analyze,
    compare,
    load_run,
)
from traceviz.trace import Trace, load

__all__ = ["Analysis", "Comparison", "Ranks", "Run", "Summary", "Trace", "__version__",
           "analyze", "compare", "load", "load_run"]
