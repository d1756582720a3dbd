"""torch.compile diagnostics for one mode: graphs, graph breaks, recompiles, CUDA-graph skips.

Two sources, merged into the manifest's ``compile`` block:

* Dynamo/Inductor counters (``torch._dynamo.utils.counters``), read in the child process by
  :func:`compile_counters`: ``graphs`` is ``stats.unique_graphs`` (graphs Dynamo compiled),
  ``frames_traced`` is ``frames.ok`` (frames Dynamo processed, with or without a graph),
  ``graph_breaks`` the number of graph-break events Dynamo recorded (each recorded once per
  compile of the frame that breaks), ``break_reasons`` their distinct first lines with counts,
  ``cudagraph_skips_counted`` Inductor's ``cudagraph_skips`` counter, and the FX-graph cache
  hits and misses (a warm cache makes ``first_call_s`` small).
* The mode's log (the child runs with ``TORCH_LOGS=recompiles,cudagraphs``), parsed by
  :func:`parse_compile_log`: ``recompiles`` counts ``Recompiling function`` lines (with their
  guard failures as ``recompile_reasons``) and ``cudagraph_skips`` lists the distinct
  ``skipping cudagraphs due to …`` messages, each whole (with the source location Inductor prints
  on the lines after "Found from :").
"""

from __future__ import annotations

import re
from typing import Any

#: Environment for the child process: the log artifacts :func:`parse_compile_log` reads.
TORCH_LOGS = "recompiles,cudagraphs"

_RECOMPILE = re.compile(r"Recompiling function (\S+)")
_GUARD_FAILURE = re.compile(r"\[__recompiles\]\s+- (\d+/\d+: .+?)\s*$")
#: Guard-failure texts are cut to this many characters.
MAX_REASON_CHARS = 200
_CUDAGRAPH_SKIP = re.compile(r"(skipping cudagraphs due to .+?)\s*$")
#: The start of a log record (``TORCH_LOGS`` glog format, e.g. ``V1122 18:55:00.123 …``), a
#: traceback or a traceviz phase line: whatever is not a continuation of a skip message.
_RECORD_START = re.compile(r"^(?:[VIWEDC]\d{4} \d\d:\d\d|Traceback|@@traceviz|\[rank\d+\])")
#: Continuation lines (the source location Inductor prints after "Found from :") kept at most.
MAX_SKIP_CONTINUATION = 12


def _first_line(reason: str) -> str:
    return reason.strip().splitlines()[0].strip() if reason.strip() else reason


def compile_counters() -> dict[str, Any]:
    """Snapshot of the Dynamo/Inductor counters this process accumulated (see module doc)."""
    from torch._dynamo.utils import counters

    reasons: dict[str, int] = {}
    for group in ("graph_break", "unimplemented"):
        for reason, count in counters[group].items():
            key = _first_line(str(reason))
            reasons[key] = reasons.get(key, 0) + int(count)
    return {
        "graphs": int(counters["stats"]["unique_graphs"]),
        "frames_traced": int(counters["frames"]["ok"]),
        "graph_breaks": sum(reasons.values()),
        "break_reasons": reasons,
        "cudagraph_skips_counted": int(counters["inductor"]["cudagraph_skips"]),
        "fxgraph_cache_hits": int(counters["inductor"]["fxgraph_cache_hit"]),
        "fxgraph_cache_misses": int(counters["inductor"]["fxgraph_cache_miss"]),
    }


def _skip_message(prefix: str, first: str, following: list[str]) -> str:
    """A whole skip message: its first line plus the source lines Inductor prints after it
    (``… mutated inputs (1 instances). Found from :`` then ``File "w.py", line 9, in step`` and
    the code line), joined into one line with runs of whitespace collapsed.

    Continuation lines either repeat the first line's log prefix (``prefix``: the glog header
    and artifact tags, as torch writes them) or carry none; a blank payload, another record or
    a traceviz phase line ends the message.
    """
    parts = [first.rstrip()]
    for line in following[:MAX_SKIP_CONTINUATION]:
        if prefix and line.startswith(prefix):
            line = line[len(prefix):]
        elif _RECORD_START.match(line):
            break
        if not line.strip():
            break
        parts.append(line.strip())
    text = " ".join(parts)
    text = re.sub(r"\s*Found from\s*:\s*", ". Found from: ", text).replace(".. Found", ". Found")
    return re.sub(r"\s+", " ", text).strip().removesuffix(". Found from:")


def parse_compile_log(text: str) -> dict[str, Any]:
    """Recompiles and CUDA-graph skip reasons from a child's log (see module doc)."""
    recompiles = 0
    recompiled: dict[str, int] = {}
    guard_failures: list[str] = []
    skips: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if m := _RECOMPILE.search(line):
            recompiles += 1
            recompiled[m.group(1)] = recompiled.get(m.group(1), 0) + 1
        elif m := _GUARD_FAILURE.search(line):
            failure = re.sub(r"\s+", " ", m.group(1))[:MAX_REASON_CHARS]
            if failure not in guard_failures:
                guard_failures.append(failure)
        elif m := _CUDAGRAPH_SKIP.search(line):
            message = _skip_message(line[: m.start(1)], m.group(1), lines[i + 1 :])
            if message not in skips:
                skips.append(message)
    return {
        "recompiles": recompiles,
        "recompiled_functions": recompiled,
        "recompile_reasons": guard_failures[:20],
        "cudagraph_skips": skips,
    }
