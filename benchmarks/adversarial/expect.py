"""Predicates over a case's command results (:data:`~.harness.Verdict`: None when fine, else
what is wrong, in words).

"Named" (:func:`names`) is the rule for silently-wrong cases: the last command either exits
non-zero with a message naming the problem, or exits 0 and some line of its output (stdout or
stderr) names the problem *and* says something is wrong with it (a warning word). Reports are
written as JSON or Markdown in these cases, so a health warning is one line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from benchmarks.adversarial.harness import StepResult, Verdict

#: Words that make a line a warning rather than a plain value.
WARN = (r"(?i)warn|invalid|mismatch|inconsisten|recomput|does not match|disagree|swapped|"
        r"not finite|non-finite|negative|not a number|ignored|duplicate|unpaired|unmatched|"
        r"out of range|overflow|dropped|refus|differ|not a trace|no timed|unknown|"
        r"not (?:a |an )?(?:number|list|array|object|string)|expected|must be|missing|"
        r"zero|empty|unequal|length")


def _last(results: Sequence[StepResult]) -> StepResult:
    return results[-1]


def names(problem: str, warn: str = WARN, not_said: str | None = None) -> Verdict:
    """The last command names ``problem`` (a regex, case-insensitive): in its error line when it
    exits non-zero, else on a line that also carries a ``warn`` word. ``not_said``: a regex the
    output must not match (a wrong name for the problem, e.g. "not JSON" for ``null``)."""
    prob, warn_re = re.compile(problem, re.IGNORECASE), re.compile(warn)
    wrong = re.compile(not_said, re.IGNORECASE) if not_said else None

    def verdict(results: Sequence[StepResult]) -> str | None:
        r = _last(results)
        said = r.message + "\n" + r.text
        if wrong is not None and wrong.search(said):
            return f"exit {r.rc}, and it is called {wrong.search(said).group()!r}: {_line(r)}"
        if r.rc not in (0, None):
            return None if prob.search(r.message) else f"exit {r.rc}: {_line(r)}"
        for line in said.splitlines():
            if prob.search(line) and warn_re.search(line):
                return None
        return "exit 0 with no warning naming it"

    return verdict


def steps_total(n: int, otherwise: str) -> Verdict:
    """The JSON report of the last command counts ``n`` steps, or ``otherwise`` is named."""
    fallback = names(otherwise)

    def verdict(results: Sequence[StepResult]) -> str | None:
        r = _last(results)
        if r.rc == 0:
            try:
                if json.loads(r.stdout).get("steps_total") == n:
                    return None
            except (ValueError, AttributeError):
                pass
        why = fallback(results)
        return None if why is None else f"not {n} steps, and {why}"

    return verdict


def refused(option: str) -> Verdict:
    """The last command exits non-zero with a message naming ``option``."""
    return names(re.escape(option))


def no_bytes(*forbidden: bytes) -> Verdict:
    """No command writes any of ``forbidden`` on stdout (raw terminal control bytes)."""

    def verdict(results: Sequence[StepResult]) -> str | None:
        for r in results:
            hit = [b for b in forbidden if b in r.stdout]
            if hit:
                return f"{r.argv[0]}: raw {hit!r} in stdout"
        return None

    return verdict


def shows(*literals: str) -> Verdict:
    """The last command exits 0 and its stdout holds each of ``literals`` verbatim."""

    def verdict(results: Sequence[StepResult]) -> str | None:
        r = _last(results)
        if r.rc != 0:
            return f"exit {r.rc}: {_line(r)}"
        missing = [lit for lit in literals if lit not in r.text]
        return f"{missing!r} not shown" if missing else None

    return verdict


def exits(*codes: int) -> Verdict:
    """The last command exits with one of ``codes``."""

    def verdict(results: Sequence[StepResult]) -> str | None:
        r = _last(results)
        return None if r.rc in codes else f"exit {r.rc}, expected {codes}: {_line(r)}"

    return verdict


def every(*verdicts: Verdict) -> Verdict:
    """All of ``verdicts`` hold (the first failure is reported)."""

    def verdict(results: Sequence[StepResult]) -> str | None:
        for v in verdicts:
            why = v(results)
            if why:
                return why
        return None

    return verdict


def _line(r: StepResult) -> str:
    lines = [ln for ln in r.message.splitlines() if ln.strip()]
    return (lines[-1] if lines else "(no message)")[:240]
