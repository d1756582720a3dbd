"""Defaults of ``traceviz profile`` that both the command's signature and the run read."""

#: Seconds of paired timing against the baseline per mode (``--timing-budget-s``).
DEFAULT_TIMING_BUDGET_S = 30.0
#: Seconds a mode's child process may run before it is killed (``--timeout``).
DEFAULT_TIMEOUT_S = 600.0
