"""``traceviz profile``'s closing lines: a mode's reason is printed once, not again after a
headline that already carries it."""

from __future__ import annotations

from traceviz.cli.profile_run import notes


def test_a_reason_the_headline_already_says_is_not_repeated():
    modes = {
        "eager": {"status": "ok", "reason": None, "headline": None},
        "cudagraph": {"status": "skipped",
                      "reason": "cudagraph needs a CUDA device; none is available here",
                      "headline": "not measured: skipped: cudagraph needs a CUDA device; none "
                                  "is available here"},
        "compile": {"status": "failed", "reason": "during compiling: RuntimeError: boom\nTrace",
                    "headline": None},
        "triton": {"status": "ok", "reason": None, "headline": "1.20× faster",
                   "analysis_summary": {"error": "trace unreadable: truncated gzip"}},
    }
    assert notes(modes) == ["compile: during compiling: RuntimeError: boom",
                            "triton: trace unreadable: truncated gzip"]
