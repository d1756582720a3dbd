"""The documented Python API (``docs/api.md``): analyze a trace, load a run, compare.

``traceviz.analyze(path) -> Analysis`` (DataFrames, summary, reports, Perfetto overlay),
``traceviz.load_run(run_dir) -> Run`` and ``traceviz.compare(baseline, *others) ->
Comparison``. Importing it loads numpy and the loader only; pandas and the analysis load on
first use, plotly, HTA and the renderers inside the methods that need them.
"""

from traceviz.api.analysis import Analysis, HtaMissingError, Summary
from traceviz.api.comparison import Comparison, Run, compare, load_run
from traceviz.api.entry import analyze
from traceviz.api.ranks import Ranks

__all__ = ["Analysis", "Comparison", "HtaMissingError", "Ranks", "Run", "Summary", "analyze",
           "compare", "load_run"]
