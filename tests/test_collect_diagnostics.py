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


def test_cudagraph_skip_reasons_are_listed_once_without_a_dangling_found_from():
    assert parse_compile_log(LOG)["cudagraph_skips"] == [
        "skipping cudagraphs due to mutated inputs (2 instances)"
    ]


def test_a_quiet_log_has_no_recompiles_or_skips():
    parsed = parse_compile_log("@@traceviz-phase timing\n")
    assert parsed["recompiles"] == 0
    assert parsed["cudagraph_skips"] == []


def test_a_cudagraph_skip_message_keeps_its_source_location():
    log = (
        "V1122 18:55:00.123 1 torch/_inductor/cudagraph_utils.py:99] [0/0] [__cudagraphs] "
        "skipping cudagraphs due to mutated inputs (1 instances). Found from : \n"
        '   File "/w/inplace.py", line 20, in step\n'
        "    x.add_(1.0)\n"
        "\n"
        "V1122 18:55:00.125 1 x.py:1] unrelated\n"
    )
    assert parse_compile_log(log)["cudagraph_skips"] == [
        "skipping cudagraphs due to mutated inputs (1 instances). Found from: "
        'File "/w/inplace.py", line 20, in step x.add_(1.0)'
    ]


def test_a_one_line_cudagraph_skip_message_stops_at_the_next_record():
    log = (
        "I1122 18:55:00.123 1 a.py:9] [0/0] [__cudagraphs] skipping cudagraphs due to cpu device"
        " (arg0)\nI1122 18:55:00.124 1 a.py:9] next record\n"
    )
    assert parse_compile_log(log)["cudagraph_skips"] == [
        "skipping cudagraphs due to cpu device (arg0)"
    ]


def test_a_skip_message_continued_under_the_same_log_prefix_is_kept_whole():
    # As torch 2.11 writes it: every line of the message repeats the record's prefix.
    head = "W1122 19:10:19.347000 6004 torch/_inductor/cudagraph_utils.py:207] [__cudagraphs] "
    log = (
        head + "skipping cudagraphs due to mutated inputs (1 instances). Found from : \n"
        + head + '   File "/w/inplace_update.py", line 37, in step\n'
        + head + "    out.tanh_()\n"
        + head + "\n"
        + "@@traceviz-phase checking\n"
    )
    assert parse_compile_log(log)["cudagraph_skips"] == [
        "skipping cudagraphs due to mutated inputs (1 instances). Found from: "
        'File "/w/inplace_update.py", line 37, in step out.tanh_()'
    ]
