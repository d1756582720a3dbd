"""Notebook figures embed plotly.js by default (they draw offline); the CDN is opt-in."""

from __future__ import annotations

import pytest

from tests.kineto import TraceBuilder
from traceviz.api import notebook


@pytest.fixture
def analysis(tmp_path):
    import traceviz

    b = TraceBuilder()
    for n in range(3):
        b.step(n + 1, n * 100_000, 100_000)
        b.kernel(launch_ts=n * 100_000 + 1_000, ts=n * 100_000 + 10_000, dur=20_000)
    path = tmp_path / "t.pt.trace.json"
    b.write(path)
    return traceviz.analyze(path)


def test_notebook_figure_is_inline_by_default_and_cdn_only_when_asked(analysis) -> None:
    inline = analysis._repr_html_()
    assert 'src="https://cdn.plot.ly' not in inline and len(inline) > 1_000_000
    try:
        notebook.set_plotlyjs("cdn")
        cdn = analysis._repr_html_()
    finally:
        notebook.set_plotlyjs("inline")
    assert 'src="https://cdn.plot.ly/plotly-' in cdn and len(cdn) < 200_000


def test_set_plotlyjs_rejects_an_unknown_mode() -> None:
    with pytest.raises(ValueError, match="inline' or 'cdn'"):
        notebook.set_plotlyjs("require")
