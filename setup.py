"""Build of traceviz's optional C scanner (``traceviz.trace._scan``); the rest is pyproject.toml.

The scanner is optional: where no C compiler is found the build goes on without it and
traceviz decodes traces with msgspec alone (same results, slower; ``traceviz doctor`` says
which). ``-ffp-contract=off`` keeps the nanosecond conversion's float arithmetic exactly that
of numpy's (no fused multiply-add).
"""

import sys

from setuptools import Extension, setup

_FLAGS = [] if sys.platform == "win32" else ["-O3", "-ffp-contract=off", "-std=c99"]

setup(ext_modules=[Extension("traceviz.trace._scan", ["traceviz/trace/_scan.c"],
                             extra_compile_args=_FLAGS, optional=True)])
