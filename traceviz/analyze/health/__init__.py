"""Trace health: can this trace's numbers be trusted, and what was left out of them?

:mod:`.validity` screens values (invalid times, empty step windows, far outliers) out of every
metric and counts them; :mod:`.ambiguity` finds the events whose owner the trace does not
determine. Each finding is a health code with its count; definitions: ``docs/metrics.md``,
"Trace health".
"""
