"""Recompiles and CUDA-graph skip reasons read from a child's log."""

from traceviz.collect.diagnostics import parse_compile_log

# Lines as torch 2.13 writes them with TORCH_LOGS=recompiles,cudagraphs.
LOG = """\
@@traceviz-phase compiling
V1121 21:51:54.568000 5580 torch/_dynamo/guards.py:5396] [0/1] [__recompiles] Recompiling function f in /tmp/exp2.py:10
V1121 21:51:54.568000 5580 torch/_dynamo/guards.py:5396] [0/1] [__recompiles]     triggered by the following guard failure(s):
V1121 21:51:54.568000 5580 torch/_dynamo/guards.py:5396] [0/1] [__recompiles]     - 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16
V1121 21:51:54.651000 5580 torch/_dynamo/guards.py:5396] [0/2] [__recompiles] Recompiling function f in /tmp/exp2.py:10
V1121 21:51:54.651000 5580 torch/_dynamo/guards.py:5396] [0/2] [__recompiles]     - 0/1: tensor 'x' rank mismatch. expected 1, actual 2
W1121 21:52:00.000000 5580 torch/_inductor/cudagraph_utils.py:380] [1/0] [__cudagraphs] skipping cudagraphs due to mutated inputs (2 instances). Found from :
W1121 21:52:00.000000 5580 torch/_inductor/cudagraph_utils.py:380] [2/0] [__cudagraphs] skipping cudagraphs due to mutated inputs (2 instances). Found from :
"""  # noqa: E501


def test_recompiles_are_counted_per_function_with_their_guard_failures():
    parsed = parse_compile_log(LOG)
    assert parsed["recompiles"] == 2
    assert parsed["recompiled_functions"] == {"f": 2}
    assert parsed["recompile_reasons"] == [
        "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16",
        "0/1: tensor 'x' rank mismatch. expected 1, actual 2",
    ]


def test_cudagraph_skip_reasons_are_listed_once():
    assert parse_compile_log(LOG)["cudagraph_skips"] == [
        "skipping cudagraphs due to mutated inputs (2 instances). Found from :"
    ]


def test_a_quiet_log_has_no_recompiles_or_skips():
    parsed = parse_compile_log("@@traceviz-phase timing\n")
    assert parsed["recompiles"] == 0
    assert parsed["cudagraph_skips"] == []
