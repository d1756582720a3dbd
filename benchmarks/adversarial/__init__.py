"""Adversarial campaign (issue 37): hostile outputs, traces, manifests and options through the
real ``traceviz`` CLI, each case in its own temporary folder.

``python -m benchmarks.adversarial --out benchmarks/results/DATE-adversarial.json [--jobs 2]
[--only CATEGORY|CASE-ID-PREFIX] [--list]``

Categories: ``outputs`` (:mod:`.outputs`), ``traces`` (:mod:`.traces`), ``manifests``
(:mod:`.manifests`), ``options`` (:mod:`.options`). The checks on every case are in
:mod:`.harness`; the predicates for silently-wrong cases in :mod:`.expect`. Exit status 1 when
any case failed.
"""
