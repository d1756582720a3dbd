"""The multi-rank report (``traceviz report RANK0 RANK1 …``) and the rank sets of ``traceviz
compare``: which targets are rank traces and rendering (``output``), the report model
(``build``), its JSON document (``jsonout``), words and plain text (``text``), plotly figures
(``figures``), and rank directories as comparison modes (``compare_inputs``).

Nothing is imported here: each module is imported where it is used (the figures need plotly).
"""
