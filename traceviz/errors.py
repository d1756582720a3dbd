"""Errors a user can cause with bad input, each mapped to a CLI exit code.

The CLI prints ``str(error)`` as one line on stderr and exits with ``error.exit_code``;
anything else escaping is a bug in traceviz.
"""

from __future__ import annotations

import os


class TracevizError(Exception):
    """Base class for errors caused by input, not by traceviz itself."""

    exit_code = 1


class StageMemoryError(MemoryError):
    """Memory ran out after the trace was read, in the stage ``stage`` names (what was being
    done, e.g. "attributing host wait (block 1 of 1)")."""

    def __init__(self, stage: str) -> None:
        super().__init__(stage)
        self.stage = stage


def out_of_memory(exc: MemoryError) -> str:
    """The one-line message for ``exc``: the stage it names, else reading the trace."""
    stage = exc.stage if isinstance(exc, StageMemoryError) else "reading the trace"
    return f"out of memory while {stage}"


class TraceNotFoundError(TracevizError):
    """The trace path does not exist or is not a readable file."""


class TraceDecodeError(TracevizError):
    """The file is not valid (gzip-compressed) JSON: empty, truncated, corrupt."""


class NotATraceError(TracevizError):
    """Valid JSON, but not a Chrome/Kineto trace (no ``traceEvents`` of timed events)."""


class OutputExistsError(TracevizError):
    """Refusing to overwrite an existing output without ``--force``."""

    @classmethod
    def of(cls, path: object) -> OutputExistsError:
        """The error for ``path``, worded as every report writer words it."""
        return cls(f"{path} exists; use --force to overwrite it")

    @classmethod
    def refuse(cls, path: str | os.PathLike[str] | None, *, force: bool) -> None:
        """Raise :meth:`of` ``path`` when that file exists and ``force`` is not given
        (``None``: nothing goes to a file)."""
        if path is not None and not force and os.path.exists(path):
            raise cls.of(path)


class InconsistentRanksError(TracevizError):
    """Rank traces given together are not consistent as one run (world sizes, GPU models or
    clocks disagree: ``docs/metrics.md``, "Rank traces"); ``--force-ranks`` reports them as
    one run anyway. Exit code 1, like every error of the input's content."""

    @classmethod
    def of(cls, reasons: tuple[str, ...], codes: tuple[str, ...] = ()) -> InconsistentRanksError:
        """One line: the first failed check in full, the health codes of the others, the
        override (``reasons``: the checks' health messages, ``codes``: their codes)."""
        others = codes[1:] if len(codes) == len(reasons) else ()
        more = ("" if len(reasons) < 2 else f" (and {len(reasons) - 1} more: "
                + (", ".join(others) if others else "see the report's Trace health") + ")")
        return cls(f"the rank traces are not one run: {reasons[0]}{more}; --force-ranks "
                   "reports them as one run anyway")


class UsageError(TracevizError):
    """Arguments that cannot work together (the message says which)."""

    exit_code = 2


class TraceTooLargeError(TracevizError):
    """The trace needs more memory than ``--max-memory`` (default: 80 % of available) allows."""


class WorkerDiedError(TracevizError):
    """A worker process died without an answer (killed: most often by the system, out of
    memory)."""


class NoRankAnalysedError(TracevizError):
    """None of a set of rank traces could be analysed (the message names the first reason)."""
