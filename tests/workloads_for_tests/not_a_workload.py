"""A Python file without the workload interface (no DESCRIPTION, no step)."""


def make_inputs(device):
    """Inputs, but nothing else of the interface."""
    return ()
