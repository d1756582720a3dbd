"""The single-trace text report has the gap, kernel, CUDA-graph and torch.compile tables that
Markdown and HTML have, on the real GPU traces."""

from __future__ import annotations

import pytest

import traceviz
from tests.conftest import GPU_TRACES
from traceviz.report.model import compile_parts, gap_table, graph_table, kernel_tables
from traceviz.report.shorten import ELLIPSIS
from traceviz.report.text_tables import NAME_CHARS

TRACES = ["elementwise_eager", "elementwise_compile", "elementwise_reduce-overhead",
          "elementwise_cudagraph"]


@pytest.fixture(scope="module", params=TRACES)
def analysed(request):
    path = GPU_TRACES / f"{request.param}.pt.trace.json.gz"
    if not path.is_file():
        pytest.skip(f"{path} absent")
    a = traceviz.analyze(path)
    return a, a.render("text", text_width=400), a.render("md")


def test_text_shows_every_table_markdown_shows(analysed) -> None:
    a, text, md = analysed
    r = a.result
    tables = [gap_table(r), *kernel_tables(r)]
    graphs = graph_table(r)
    intro, per_step = compile_parts(r)
    tables += [t for t in (graphs, per_step) if t is not None]
    for t in tables:
        assert f"**{t.title}**" in md.replace("\\_", "_")
        assert t.title in text, t.title
    assert intro.split(".")[0] in text
    if graphs is not None:
        assert "Graph replays" in text and text.count("cudaGraphLaunch") >= len(graphs.rows)


def test_text_lists_every_top_kernel_whole_or_shortened_and_distinct(analysed) -> None:
    a, text, _ = analysed
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Top kernels by GPU time"))
    names = [k.name for k in a.result.top_kernels]
    shown = [line.split("│")[1].strip() for line in lines[start + 4:start + 4 + len(names)]]
    assert len(set(shown)) == len(set(names))
    for name, s in zip(names, shown, strict=True):
        if ELLIPSIS in s:
            head, tail = s.split(ELLIPSIS)[0], s.split(ELLIPSIS)[-1]
            assert name.startswith(head) and name.endswith(tail) and len(s) <= NAME_CHARS
        else:
            assert s == name
