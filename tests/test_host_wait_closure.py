"""`_with_ancestors`: the (gap, call path) keys closed under the parent path, against a loop."""

import numpy as np

from traceviz.analyze.host_wait import _with_ancestors


def test_with_ancestors_matches_a_loop() -> None:
    rng = np.random.default_rng(14)
    n_paths = 40
    # Parents are numbered before their children; -1 marks a root.
    path_parent = np.array([-1 if p < 3 else int(rng.integers(-1, p)) for p in range(n_paths)])
    for _ in range(20):
        gap = rng.integers(0, 6, 30)
        path = rng.integers(0, n_paths, 30)
        keys = np.unique(gap * n_paths + path)
        want = set()
        for k in keys.tolist():
            g, p = divmod(k, n_paths)
            while p >= 0:
                want.add(g * n_paths + p)
                p = int(path_parent[p])
        got = _with_ancestors(keys, path_parent, n_paths)
        assert len(got) == len(want)
        assert set(got.tolist()) == want


def test_with_ancestors_of_nothing() -> None:
    assert len(_with_ancestors(np.zeros(0, np.int64), np.array([-1, 0]), 2)) == 0
