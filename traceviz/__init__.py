"""traceviz: evidence from PyTorch profiler traces on whether torch.compile and CUDA graphs cut
kernel count and launch overhead.

``traceviz.load(path)`` reads a trace; ``traceviz.analyze(trace)`` computes the metrics of
``docs/metrics.md``. Importing traceviz loads numpy, pandas and msgspec, never torch, plotly or
HTA (those load only in the commands that need them).
"""

from traceviz.analyze import Analysis, analyze
from traceviz.trace import Trace, load

__version__ = "0.1.0"

__all__ = ["Analysis", "Trace", "__version__", "analyze", "load"]
