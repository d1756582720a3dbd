"""--modes parsing and the skip rules of modes that cannot run here."""

import pytest

from traceviz.collect.mode_names import (
    ALL_MODES,
    ModeListError,
    first_call_phase,
    parse_modes,
    skip_reason,
)


def test_all_expands_to_every_mode_in_canonical_order():
    assert parse_modes("all") == list(ALL_MODES)


def test_a_list_is_returned_in_canonical_order_without_duplicates():
    assert parse_modes("cudagraph, eager,eager") == ["eager", "cudagraph"]


@pytest.mark.parametrize("text", ["", " , ", "eager,warp-speed"])
def test_empty_or_unknown_mode_lists_are_refused(text):
    with pytest.raises(ModeListError):
        parse_modes(text)


def test_cuda_only_modes_are_skipped_without_cuda_and_cpu_modes_are_not():
    for mode in ("reduce-overhead", "max-autotune", "cudagraph", "triton"):
        assert "CUDA" in skip_reason(mode, cuda=False, triton=True, has_triton_step=True)
    for mode in ("eager", "compile", "max-autotune-no-cudagraphs"):
        assert skip_reason(mode, cuda=False, triton=False, has_triton_step=False) is None


def test_triton_mode_needs_a_triton_step_and_the_package():
    assert "triton_step" in skip_reason("triton", cuda=True, triton=True, has_triton_step=False)
    assert "not importable" in skip_reason(
        "triton", cuda=True, triton=False, has_triton_step=True
    )
    assert skip_reason("triton", cuda=True, triton=True, has_triton_step=True) is None


def test_the_first_call_phase_names_the_one_off_work_of_each_mode():
    phases = {m: first_call_phase(m) for m in ALL_MODES}
    assert phases == {"eager": "first call", "compile": "compiling",
                      "reduce-overhead": "compiling", "max-autotune-no-cudagraphs": "compiling",
                      "max-autotune": "compiling", "cudagraph": "capturing",
                      "triton": "first call"}
