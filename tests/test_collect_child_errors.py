"""The failure reason a child records leads with the error that started it."""

from traceviz.collect.profiled_step import failure_text


def test_a_single_error_is_reported_as_is():
    assert failure_text(KeyError("x")) == "KeyError: 'x'"


def test_an_error_raised_while_handling_another_names_the_first_one_first():
    try:
        try:
            raise RuntimeError("operation not permitted when stream is capturing")
        except RuntimeError:
            raise ValueError("operation failed due to a previous error during capture")  # noqa: B904
    except ValueError as exc:
        text = failure_text(exc)
    assert text == (
        "RuntimeError: operation not permitted when stream is capturing "
        "(then: ValueError: operation failed due to a previous error during capture)"
    )
