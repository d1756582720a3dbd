"""The definition edges of gaps/steps/links stay pinned: every hand-maintained edge mutant
(``tests/edge_mutants.py``) makes the tests that pin its edge fail.

The fast CI subset of the mutation campaign (``python -m benchmarks.mutation``; no mutation tool
needed). A mutant is applied by compiling the mutated module source and swapping the mutated
function's code object into the imported function for the duration of the check, so every
caller, whatever name it imported the function under, runs the mutant; the killers are then
called directly (each takes at most ``tmp_path``). Each killer is also run unmutated first, so a
failure is the mutant's doing.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FunctionType, ModuleType

import pytest

from tests.edge_mutants import EDGE_MUTANTS, EdgeMutant

ROOT = Path(__file__).resolve().parents[1]


def _function(namespace: dict, dotted: str) -> FunctionType:
    owner, _, name = dotted.rpartition(".")
    return vars(namespace[owner])[name] if owner else namespace[name]


def _mutated_source(m: EdgeMutant) -> str:
    module = importlib.import_module(m.module)
    source = Path(module.__file__).read_text()
    fn = _function(vars(module), m.function)
    lines, first = inspect.getsourcelines(fn)
    body = "".join(lines)
    assert body.count(m.original) == 1, f"{m.id}: {m.original!r} is not once in {m.function}"
    start = sum(len(ln) for ln in source.splitlines(keepends=True)[: first - 1])
    assert source[start:start + len(body)] == body
    return source[:start] + body.replace(m.original, m.mutated) + source[start + len(body):]


@contextmanager
def applied(m: EdgeMutant) -> Iterator[None]:
    """Run the mutated ``m.function`` wherever the original is called, then restore it."""
    module = importlib.import_module(m.module)
    scratch = ModuleType(f"{m.module}__mutant")  # registered while it runs: dataclasses look it up
    scratch.__file__ = module.__file__
    sys.modules[scratch.__name__] = scratch
    try:
        exec(compile(_mutated_source(m), module.__file__, "exec"), vars(scratch))
    finally:
        del sys.modules[scratch.__name__]
    target = _function(vars(module), m.function)
    original = target.__code__
    target.__code__ = _function(vars(scratch), m.function).__code__
    try:
        yield
    finally:
        target.__code__ = original


def _killer(node_id: str) -> Callable[..., None]:
    path, _, name = node_id.partition("::")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    return getattr(module, name)


def _call(test: Callable[..., None], tmp: Path) -> None:
    params = inspect.signature(test).parameters
    assert set(params) <= {"tmp_path"}, f"{test.__name__}: killers take at most tmp_path"
    tmp.mkdir(parents=True)
    test(**({"tmp_path": tmp} if params else {}))


def test_every_killer_exists_and_every_mutant_names_one_edge() -> None:
    assert len({m.id for m in EDGE_MUTANTS}) == len(EDGE_MUTANTS)
    for m in EDGE_MUTANTS:
        assert m.killers and m.edge and m.original != m.mutated
        for node in m.killers:
            assert (ROOT / node.partition("::")[0]).is_file(), node
            assert callable(_killer(node)), node


@pytest.mark.parametrize("mutant", EDGE_MUTANTS, ids=[m.id for m in EDGE_MUTANTS])
def test_edge_mutant_is_killed_by_the_tests_pinning_its_edge(
        mutant: EdgeMutant, tmp_path: Path) -> None:
    for k, node in enumerate(mutant.killers):
        test = _killer(node)
        _call(test, tmp_path / f"clean{k}")  # passes on the real code
        # applied() is entered before pytest.raises: a mutant that cannot apply is an error.
        with applied(mutant), pytest.raises(Exception):  # noqa: B017 - any failure kills
            _call(test, tmp_path / f"mutant{k}")
