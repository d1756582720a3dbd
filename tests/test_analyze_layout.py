"""``traceviz/analyze/`` is grouped into subpackages named for the question each part answers
(``trace/``, ``health/``, ``host_wait/``, ``compare/``, ``review/``, ``distributed/``), with only
what they share at its top; the names the docs give keep importing from where the docs say."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

ANALYZE = Path(__file__).resolve().parent.parent / "traceviz" / "analyze"


def test_analyze_keeps_at_most_twelve_modules_at_its_top():
    top = sorted(p.name for p in ANALYZE.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= 12, top


def test_every_analyze_subfolder_with_code_is_a_package():
    for folder in (p for p in ANALYZE.iterdir() if p.is_dir() and p.name != "__pycache__"):
        assert (folder / "__init__.py").is_file(), folder


def test_the_names_the_docs_give_import_from_where_the_docs_say():
    from traceviz.analyze.analysis import analyze
    from traceviz.analyze.model import Analysis
    from traceviz.analyze.verdicts import Thresholds

    # docs/reference.md: the subpackage's ``analyze`` (``traceviz.analyze`` is the API function)
    assert importlib.import_module("traceviz.analyze").analyze is analyze
    assert Analysis.__module__ == "traceviz.analyze.model"  # docs/api.md
    assert Thresholds.__module__ == "traceviz.analyze.verdicts"  # docs/api.md


def test_the_compare_package_gives_the_comparison_without_importing_it_for_its_modules():
    code = (
        "import sys\n"
        "import traceviz.analyze.compare.speed\n"
        "assert 'traceviz.analyze.compare.modes' not in sys.modules\n"
        "import traceviz.analyze.distributed.bounding\n"  # reads compare.waterfall
        "from traceviz.analyze.compare import Comparison, ComparisonRow, ModeInput, compare\n"
        "from traceviz.analyze.compare import modes\n"
        "assert (compare, Comparison, ComparisonRow, ModeInput) == "
        "(modes.compare, modes.Comparison, modes.ComparisonRow, modes.ModeInput)\n"
        "try:\n"
        "    from traceviz.analyze.compare import skip_messages\n"
        "except ImportError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('only the documented names are re-exported')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
