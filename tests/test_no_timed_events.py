"""A trace with no timed events at all is the error docs/reliability.md lists ("no timed
events", :class:`NotATraceError`, exit 1), not a CPU-only report with exit 0 (issue 37, item
13); a CPU-only trace *with* timed CPU events still reports (tests/test_cpu_only_trace_report.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import traceviz
from tests.kineto import TraceBuilder
from traceviz.errors import NotATraceError


@pytest.mark.parametrize(("doc", "needle"), [
    ({"traceEvents": []}, "'traceEvents' is empty"),
    ({"traceEvents": [], "schemaVersion": 1, "baseTimeNanoseconds": 1}, "'traceEvents' is empty"),
    (TraceBuilder().document(), "none of the 2 entries"),  # only process-name metadata
    ({"traceEvents": [{"ph": "i", "name": "mark", "ts": 1}, {"ph": "X", "cat": "Trace",
                                                             "name": "x", "ts": 1, "dur": 5}]},
     "none of the 2 entries"),
])
def test_a_trace_without_timed_events_is_not_a_trace(tmp_path: Path, doc: dict,
                                                     needle: str) -> None:
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(NotATraceError, match=f"no timed events: .*{needle}"):
        traceviz.load(p)


def test_the_report_of_an_empty_event_array_exits_1_in_one_line(tmp_path: Path) -> None:
    p = tmp_path / "t.json"
    p.write_text('{"traceEvents": []}')
    r = subprocess.run([sys.executable, "-m", "traceviz", "report", str(p), "-f", "json"],
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (1, "")
    (line,) = r.stderr.strip().splitlines()
    assert "no timed events" in line


def test_one_timed_cpu_event_is_enough(tmp_path: Path) -> None:
    b = TraceBuilder()
    b.cpu_op("aten::add", 1_000, 2_000)
    a = traceviz.analyze(b.write(tmp_path / "t.json"))
    assert a.result.cpu_only and a.result.totals.steps == 1
