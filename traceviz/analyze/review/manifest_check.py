"""A run manifest (``manifest.json`` of a ``traceviz profile`` run directory) checked before
anything reads it.

The manifest is input like a trace: it can be hand-edited, truncated by a crash or written by
another version. :func:`check_manifest` checks its schema version, the types and ranges of every
field a verdict or a figure of the report rests on, and the fields that must agree with each
other, and raises :class:`ManifestError` (exit 1, one line naming the file and the field) on the
first problem. For every ``paired`` block (a mode's, and a ``profile --against`` mode's
``against.paired``) it recomputes the speed-up and its CI from the recorded block times with
:func:`traceviz.analyze.stats.paired_speedup` and the recorded ``level``, ``resamples`` and
``seed`` — what :mod:`traceviz.collect.paired` recorded — so an edited estimate cannot reach a
verdict. :func:`manifest_warnings` names the problems of informational fields that no verdict
rests on (first-call time, wall time, peak memory); the report shows them as warnings.

What each field means: :mod:`traceviz.collect.manifest`. The checks: ``docs/reliability.md``,
"Run manifests".
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, NoReturn

from traceviz.analyze.stats import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, paired_speedup
from traceviz.errors import TracevizError

#: Manifest schema versions this traceviz reads (``traceviz.collect.manifest.SCHEMA_VERSION``
#: is the newest).
SUPPORTED_SCHEMAS = (1, 2, 3)
#: A mode's ``status`` (and an ``against`` record's).
STATUSES = ("ok", "failed", "skipped", "timeout", "mismatch", "crashed", "interrupted",
            "pending")
#: Why paired timing stopped (:mod:`traceviz.collect.paired`).
STOPPED = ("converged", "budget", "max_pairs")
#: Relative difference between a recorded estimate and the one recomputed from its blocks
#: that float rounding can explain (the same computation gives the same bits; this allows for
#: another numpy's summation order).
REL_TOL = 1e-9

_MISSING: Any = object()


class ManifestError(TracevizError):
    """A run manifest is malformed or disagrees with itself (the message names the file and
    the field)."""


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    """A recorded value as JSON writes it (``NaN``, ``null``, ``"x"``), cut to 40 characters."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:39] + "…"


def _join(where: str, key: str) -> str:
    """The field ``key`` of ``where`` (``""``: the top level) as a dotted path."""
    return f"{where}.{key}" if where else key


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=0.0)


class _Checker:
    """The checks, each raising :class:`ManifestError` for ``source`` on the first problem."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, field: str, problem: str) -> NoReturn:
        raise ManifestError(f"{self.source}: {field} {problem}")

    def get(self, d: Mapping[str, Any], key: str, where: str, *, required: bool = True,
            nullable: bool = False) -> Any:
        """``d[key]``; :data:`_MISSING` when it is absent (or ``null`` and ``nullable``) and not
        ``required``."""
        if key not in d:
            if required:
                self.fail(_join(where, key), "is missing")
            return _MISSING
        value = d[key]
        if value is None:
            if not nullable:
                self.fail(_join(where, key), "is null")
            return _MISSING
        return value

    def mapping(self, value: Any, field: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(field, f"is {_shown(value)}, not a JSON object")
        return value

    def string(self, d: Mapping[str, Any], key: str, where: str, *, required: bool = True,
               nullable: bool = False, allowed: tuple[str, ...] = ()) -> str | None:
        value = self.get(d, key, where, required=required, nullable=nullable)
        if value is _MISSING:
            return None
        if not isinstance(value, str):
            self.fail(_join(where, key), f"is {_shown(value)}, not a string")
        if allowed and value not in allowed:
            self.fail(_join(where, key), f"is {_shown(value)}, not one of {', '.join(allowed)}")
        return value

    def number(self, value: Any, field: str, *, positive: bool = False,
               nonnegative: bool = False) -> float:
        """``value`` as a float: a finite JSON number (``true`` / ``false`` are not), ``> 0``
        with ``positive``, ``>= 0`` with ``nonnegative``."""
        if not _is_number(value):
            self.fail(field, f"is {_shown(value)}, not a number")
        x = float(value)
        if not math.isfinite(x):
            self.fail(field, f"is {_shown(value)}, not a finite number")
        if positive and not x > 0:
            self.fail(field, f"is {_shown(value)}; it must be positive")
        if nonnegative and not x >= 0:
            self.fail(field, f"is {_shown(value)}; it must not be negative")
        return x

    def field_number(self, d: Mapping[str, Any], key: str, where: str, *,
                     required: bool = True, nullable: bool = False, positive: bool = False,
                     nonnegative: bool = False) -> float | None:
        value = self.get(d, key, where, required=required, nullable=nullable)
        if value is _MISSING:
            return None
        return self.number(value, _join(where, key), positive=positive, nonnegative=nonnegative)

    def integer(self, d: Mapping[str, Any], key: str, where: str, *, minimum: int,
                required: bool = True, nullable: bool = False) -> int | None:
        value = self.get(d, key, where, required=required, nullable=nullable)
        if value is _MISSING:
            return None
        if not _is_int(value):
            self.fail(_join(where, key), f"is {_shown(value)}, not an integer")
        if value < minimum:
            self.fail(_join(where, key), f"is {value}; it must be at least {minimum}")
        return int(value)

    def numbers(self, d: Mapping[str, Any], key: str, where: str, *, positive: bool,
                length: int | None = None, other: str = "") -> list[float]:
        """A non-empty list of finite numbers (``> 0`` with ``positive``, else ``>= 0``),
        ``length`` long when given (``other``: the field that length comes from)."""
        field = _join(where, key)
        value = self.get(d, key, where)
        if not isinstance(value, list):
            self.fail(field, f"is {_shown(value)}, not a list of numbers")
        if not value:
            self.fail(field, "is empty")
        out = [self.number(v, f"{field}[{i}]", positive=positive, nonnegative=not positive)
               for i, v in enumerate(value)]
        if length is not None and len(out) != length:
            self.fail(field, f"has {len(out)} values but {other} has {length}")
        return out

    def bool_or_null(self, d: Mapping[str, Any], key: str, where: str) -> None:
        value = d.get(key)
        if value is not None and not isinstance(value, bool):
            self.fail(_join(where, key), f"is {_shown(value)}, not true, false or null")

    def optional_mapping(self, d: Mapping[str, Any], key: str, where: str
                         ) -> dict[str, Any] | None:
        value = d.get(key)
        return None if value is None else self.mapping(value, _join(where, key))

    # --- the parts of a manifest ---------------------------------------------------------------

    def manifest(self, manifest: Any) -> None:
        top = self.mapping(manifest, "the manifest")
        schema = self.get(top, "schema", "")
        if not _is_int(schema) or schema not in SUPPORTED_SCHEMAS:
            newer = _is_int(schema) and schema > max(SUPPORTED_SCHEMAS)
            self.fail("schema", f"is {_shown(schema)}; this traceviz reads schema "
                      f"{', '.join(map(str, SUPPORTED_SCHEMAS))}"
                      + (" (a newer traceviz wrote it?)" if newer else ""))
        for key in ("workload", "environment", "settings", "against"):
            self.optional_mapping(top, key, "")
        for key in ("created", "report"):
            self.string(top, key, "", required=False, nullable=True)
        against = top.get("against")
        if isinstance(against, dict):
            self.string(against, "run", "against")
        modes = self.mapping(self.get(top, "modes", ""), "modes")
        for name, entry in modes.items():
            self.mode(self.mapping(entry, f"modes.{name}"), f"modes.{name}")

    def mode(self, entry: dict[str, Any], where: str) -> None:
        self.string(entry, "status", where, allowed=STATUSES)
        self.string(entry, "reason", where, required=False, nullable=True)
        timing = self.optional_mapping(entry, "timing", where)
        if timing is not None:
            self.timing(timing, f"{where}.timing")
        paired = self.optional_mapping(entry, "paired", where)
        if paired is not None:
            self.paired(paired, f"{where}.paired")
        for key in ("profiled", "stack_profiled"):
            profiled = self.optional_mapping(entry, key, where)
            if profiled is not None:
                self.profiled(profiled, _join(where, key))
        correctness = self.optional_mapping(entry, "correctness", where)
        if correctness is not None:
            self.bool_or_null(correctness, "ok", f"{where}.correctness")
        compiled = self.optional_mapping(entry, "compile", where)
        if compiled is not None:
            for key in ("graphs", "graph_breaks", "recompiles"):
                if not isinstance(compiled.get(key), list):  # a count, or the list counted
                    self.integer(compiled, key, f"{where}.compile", minimum=0, required=False,
                                 nullable=True)
        for key in ("analysis_summary", "ranks_summary"):
            self.optional_mapping(entry, key, where)
        against = self.optional_mapping(entry, "against", where)
        if against is not None:
            self.string(against, "status", f"{where}.against", allowed=STATUSES)
            block = self.optional_mapping(against, "paired", f"{where}.against")
            if block is not None:
                self.paired(block, f"{where}.against.paired")

    def timing(self, t: dict[str, Any], where: str) -> None:
        """Per-step ms of the mode's own unprofiled repeats: ``p10 <= median <= p90``."""
        median = self.field_number(t, "median_ms", where, positive=True)
        p10 = self.field_number(t, "p10_ms", where, positive=True)
        p90 = self.field_number(t, "p90_ms", where, positive=True)
        assert median is not None and p10 is not None and p90 is not None
        if not p10 <= median <= p90:
            self.fail(f"{where}.median_ms", f"is {_shown(t['median_ms'])}, outside its p10–p90 "
                      f"{_shown(t['p10_ms'])}–{_shown(t['p90_ms'])}")
        for key in ("repeats", "iters_per_repeat"):
            self.integer(t, key, where, minimum=1, required=False, nullable=True)
        self.bool_or_null(t, "noisy", where)

    def profiled(self, p: dict[str, Any], where: str) -> None:
        """A trace's record: file name(s), counts, and ms per step under the profiler."""
        self.string(p, "trace", where, required=False, nullable=True)
        traces = p.get("traces")
        if traces is not None and not (isinstance(traces, list)
                                       and all(isinstance(n, str) for n in traces)):
            self.fail(f"{where}.traces", f"is {_shown(traces)}, not a list of file names")
        for key in ("steps", "gpu_activities"):
            self.integer(p, key, where, minimum=0, required=False, nullable=True)
        step = self.field_number(p, "step_ms", where, required=False, nullable=True,
                                 positive=True)
        adjacent = self.field_number(p, "adjacent_unprofiled_ms", where, required=False,
                                     nullable=True, positive=True)
        inflation = self.field_number(p, "inflation", where, required=False, nullable=True,
                                      positive=True)
        if step is not None and adjacent is not None and inflation is not None \
                and not _close(inflation, step / adjacent):
            self.fail(f"{where}.inflation", f"is {_shown(p['inflation'])} but step_ms / "
                      f"adjacent_unprofiled_ms is {step / adjacent:.6g}")

    def paired(self, p: dict[str, Any], where: str) -> None:
        """A paired block: its block times, and its estimate recomputed from them. The block
        times are required; the estimate (``speedup``, ``ci_low``, ``ci_high``) is all there or
        all absent (then readers estimate it from the blocks); ``level``, ``resamples`` and
        ``seed`` default to :func:`~traceviz.analyze.stats.paired_speedup`'s, as readers do."""
        self.string(p, "baseline", where, required=False, nullable=True)
        if "error" in p:  # the baseline could not run: {"baseline", "error"}
            self.string(p, "error", where)
            return
        self.string(p, "order", where, required=False, allowed=("ABBA",))
        base = self.numbers(p, "baseline_block_ms", where, positive=True)
        n = len(base)
        mode = self.numbers(p, "mode_block_ms", where, positive=True, length=n,
                            other="baseline_block_ms")
        pairs = self.integer(p, "pairs", where, minimum=1, required=False)
        if pairs is not None and pairs != n:
            self.fail(f"{where}.pairs", f"is {pairs} but baseline_block_ms has {n} blocks")
        if "baseline_issue_ms" in p or "mode_issue_ms" in p:  # schema 3: both
            for key in ("baseline_issue_ms", "mode_issue_ms"):
                self.numbers(p, key, where, positive=False, length=n, other="baseline_block_ms")
        for key in ("iters_baseline", "iters_mode"):
            self.integer(p, key, where, minimum=1, required=False)
        resamples = self.integer(p, "resamples", where, minimum=1, required=False)
        seed = self.integer(p, "seed", where, minimum=0, required=False)
        level = self.field_number(p, "level", where, required=False)
        if level is not None and not 0 < level < 1:
            self.fail(f"{where}.level", f"is {_shown(p['level'])}; it must be between 0 and 1")
        self.string(p, "stopped", where, required=False, allowed=STOPPED)
        for key in ("budget_s", "elapsed_s"):
            self.field_number(p, key, where, required=False, nullable=True, nonnegative=True)
        if "rank_baseline_block_ms" in p or "rank_mode_block_ms" in p:
            self.ranks(p, where, base, mode)
        estimate = ("speedup", "ci_low", "ci_high")
        if not any(k in p for k in estimate):
            return
        speedup, low, high = (self.field_number(p, k, where, positive=True) for k in estimate)
        assert speedup is not None and low is not None and high is not None
        if low > high:
            self.fail(f"{where}.ci_low", f"is {_shown(p['ci_low'])}, above ci_high "
                      f"{_shown(p['ci_high'])} (bounds swapped?)")
        est = paired_speedup(base, mode, level=DEFAULT_LEVEL if level is None else level,
                             resamples=resamples or DEFAULT_RESAMPLES,
                             seed=DEFAULT_SEED if seed is None else seed)
        for key, recorded, computed in zip(estimate, (speedup, low, high),
                                           (est.speedup, est.ci_low, est.ci_high), strict=True):
            if not _close(recorded, computed):
                self.fail(f"{where}.{key}", f"is {_shown(p[key])} but its blocks give "
                          f"{computed:.6g}")
        if not low <= speedup <= high:
            self.fail(f"{where}.speedup", f"is {_shown(p['speedup'])}, outside its CI "
                      f"{_shown(p['ci_low'])}–{_shown(p['ci_high'])}")
        half = self.field_number(p, "half_width", where, required=False, nullable=True,
                                 nonnegative=True)
        if half is not None and not _close(half, est.half_width):
            self.fail(f"{where}.half_width", f"is {_shown(p['half_width'])} but its blocks "
                      f"give {est.half_width:.6g}")

    def ranks(self, p: dict[str, Any], where: str, base: list[float], mode: list[float]
              ) -> None:
        """``profile --nproc``'s per-rank blocks: per pair one time per rank, the block's time
        the slowest rank's."""
        ranks = self.integer(p, "ranks", where, minimum=1)
        for key, blocks, positive in (("rank_baseline_block_ms", base, True),
                                      ("rank_mode_block_ms", mode, True),
                                      ("rank_baseline_issue_ms", None, False),
                                      ("rank_mode_issue_ms", None, False)):
            rows = self.get(p, key, where)
            if not isinstance(rows, list) or len(rows) != len(base):
                self.fail(f"{where}.{key}", f"is not a list of {len(base)} pairs' per-rank "
                          "values")
            for i, row in enumerate(rows):
                if not isinstance(row, list) or len(row) != ranks:
                    self.fail(f"{where}.{key}[{i}]", f"is {_shown(row)}, not {ranks} values")
                values = [self.number(v, f"{where}.{key}[{i}][{r}]", positive=positive,
                                      nonnegative=not positive) for r, v in enumerate(row)]
                if blocks is not None and max(values) != blocks[i]:
                    side = key.removeprefix("rank_")
                    self.fail(f"{where}.{side}[{i}]", f"is {_shown(blocks[i])} but the "
                              f"slowest rank's ({key}[{i}]) is {_shown(max(values))}")


def check_manifest(manifest: Any, source: str) -> None:
    """Raise :class:`ManifestError` (``"<source>: <field> <problem>"``) on the first problem of
    a run manifest (module docstring); return quietly when it is sound. ``source`` names the
    file (``runs/x/manifest.json``)."""
    _Checker(source).manifest(manifest)


#: Informational fields (no verdict rests on them): where they are, and what they must be.
_INFORMATIONAL = (("first_call_s", "a number of seconds"), ("wall_s", "a number of seconds"),
                  ("peak_mem_bytes", "a whole number of bytes"))


def manifest_warnings(manifest: Mapping[str, Any]) -> tuple[str, ...]:
    """The problems of a checked manifest's informational fields, one sentence each (the
    report shows them among its warnings; the field is shown as recorded, or as unknown
    when it is not a number)."""
    out = []
    modes = manifest.get("modes")
    for name, entry in (modes.items() if isinstance(modes, dict) else ()):
        if not isinstance(entry, dict):
            continue
        for key, what in _INFORMATIONAL:
            value = entry.get(key)
            if value is None:
                continue
            sound = (_is_int(value) if key == "peak_mem_bytes" else _is_number(value)) \
                and math.isfinite(value) and value >= 0
            if not sound:
                out.append(f"manifest.json: modes.{name}.{key} is {_shown(value)}, not {what} "
                           "(informational: no verdict rests on it)")
    return tuple(out)
