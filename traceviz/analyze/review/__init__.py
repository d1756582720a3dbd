"""Runs and versions: what changed between two runs of a workload, or two versions of a step.

:mod:`.manifest_check` checks a run manifest before anything reads it; :mod:`.kernel_diff` diffs
two traces kernel by kernel; :mod:`.run_speed` and :mod:`.run_diff` compare two runs (A → B) per
mode, :mod:`.run_gate` turns that into the regression gate of ``traceviz check --against``, and
:mod:`.version_diff` compares ``profile NEW --against OLD``. Rules: ``docs/comparison.md``.
"""
