"""The mutation fuzzer (``benchmarks.fuzz``): its classification, its determinism, and a small
campaign over the real traces that must end with no FAILURE.

``TRACEVIZ_FUZZ_EXAMPLES`` sets the campaign's size (default 200; CI may ask for thousands).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchmarks.fuzz import (
    CORPUS_DIRS,
    MUTATIONS,
    classify,
    load_corpus,
    main,
    make_example,
    rss_bound,
    serialise,
)

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def seeds():
    return load_corpus([REPO / "tests" / "data" / "gpu"], max_events=2000)


def test_a_clean_error_is_one_line_and_exit_1() -> None:
    assert classify(1, b"", b"traceviz: error: t.json: truncated JSON\n")[0] == "clean-error"
    assert classify(1, b"", b"traceviz: error: a\ntraceviz: error: b\n")[0] == "FAILURE"
    assert classify(2, b"", b"traceviz: error: usage\n")[0] == "FAILURE"
    assert classify(1, b"", b"some other line\n")[0] == "FAILURE"
    assert classify(1, b"", b"traceviz: error: out of memory while reading the trace\n"
                    )[0] == "FAILURE"


def test_a_traceback_is_a_failure_whatever_the_exit_code() -> None:
    err = b'Traceback (most recent call last):\n  File "x"\nOverflowError: too big\n'
    for code in (0, 1, 98):
        cls, reason = classify(code, b"{}", err)
        assert cls == "FAILURE" and "OverflowError" in reason


def test_exit_0_needs_strict_json_and_a_silent_stderr() -> None:
    assert classify(0, b'{"health": []}', b"") == ("ok", "")
    assert classify(0, b'{"health": [{"code": "x"}]}', b"")[0] == "ok-health"
    assert classify(0, b'{"a": NaN}', b"")[0] == "FAILURE"
    assert classify(0, b'{"a": Infinity}', b"")[0] == "FAILURE"
    assert classify(0, b'{"a": 1', b"")[0] == "FAILURE"
    assert classify(0, b"{}", b"RuntimeWarning: overflow\n")[0] == "FAILURE"
    assert classify(None, b"", b"")[0] == "FAILURE"  # killed


def test_rss_bound_is_one_and_a_half_times_the_json_plus_200_mib() -> None:
    assert rss_bound(0) == 200 * 2**20
    assert rss_bound(2 * 10**9) == 3 * 10**9 + 200 * 2**20


def test_examples_depend_only_on_seed_and_index(seeds) -> None:
    a = make_example(seeds, 7, 123)
    b = make_example(seeds, 7, 123)
    c = make_example(seeds, 8, 123)
    assert a == b
    assert a != c


def test_every_mutation_changes_the_document(seeds) -> None:
    import random

    base = json.loads(seeds[0].text)
    for name, mutate in MUTATIONS.items():
        changed = False
        for i in range(20):
            doc = json.loads(seeds[0].text)
            mutate(random.Random(i), doc)
            changed |= serialise(doc) != serialise(base)
        assert changed, name


def test_deep_nesting_is_expanded_into_the_bytes() -> None:
    data = serialise({"traceEvents": [{"args": {"nested": "@@NEST3@@"}}]})
    assert json.loads(data) == {"traceEvents": [{"args": {"nested": [[[1]]]}}]}


def test_campaign_over_real_traces_has_no_failure(tmp_path: Path) -> None:
    n = int(os.environ.get("TRACEVIZ_FUZZ_EXAMPLES", "200"))
    corpus = [d for d in CORPUS_DIRS if d.is_dir()]
    args = ["--examples", str(n), "--workers", "2", "--seed", "12", "--out", str(tmp_path),
            "--max-events", "2000"]
    for d in corpus:
        args += ["--corpus", str(d)]
    rc = main(args)
    result = json.loads((tmp_path / "fuzz-result.json").read_text())
    assert result["examples"] == n and result["seed"] == 12
    assert sum(result["counts"].values()) == n
    assert result["counts"]["clean-error"] > 0 and result["counts"]["ok"] + \
        result["counts"]["ok-health"] > 0  # both sides of the contract were exercised
    assert result["failures"] == 0, result["failure_list"][:5]
    assert rc == 0
    assert not list((tmp_path / "work").iterdir())  # every example cleaned up


def test_a_failure_is_kept_as_a_reproducer(tmp_path: Path, monkeypatch) -> None:
    """A run whose stderr is not one line is a FAILURE and its input is saved."""
    import benchmarks.fuzz as fuzz

    monkeypatch.setattr(fuzz, "classify", lambda code, out, err: ("FAILURE", "forced"))
    rc = main(["--examples", "2", "--workers", "1", "--seed", "1", "--out", str(tmp_path),
               "--corpus", str(REPO / "tests" / "data" / "gpu"), "--max-events", "500"])
    result = json.loads((tmp_path / "fuzz-result.json").read_text())
    assert rc == 1 and result["failures"] == 2
    for f in result["failure_list"]:
        kept = Path(f["reproducer"])
        assert kept.exists() and kept.parent == tmp_path / "failures"
        assert (tmp_path / "failures" / f"ex-{f['index']}.txt").read_text().startswith(
            "mutations: ")
