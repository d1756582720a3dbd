"""Mutants of the analysis core that no test can kill because they do not change behaviour.

Keyed by (module path, original line, mutated line) as ``benchmarks/mutation.py`` reports them
(whitespace-stripped); the value says why the mutant is equivalent. Only a mutant whose output is
provably identical for every input (or differs only in a way no definition in docs/metrics.md
names) belongs here; anything else is a survivor to kill with a test.
"""

from __future__ import annotations

EQUIVALENTS: dict[tuple[str, str, str], str] = {}
