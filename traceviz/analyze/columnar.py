"""Frozen columnar tables of frozen rows: one numpy array per field of a row dataclass.

A result with one row per step (or per step and class) is stored as columns, never as one
Python object per row: at 10⁶ steps a frozen dataclass of boxed ints costs about 1 KB a step,
its columns about 150 bytes. A :class:`RowTable` subclass names its row dataclass
(``class StepTable(RowTable[StepMetrics], row=StepMetrics)``); its columns are that
dataclass's fields, in order, derived from it — a field added to the row is a column of the
table, with nothing else to change here. Column dtypes follow the annotations:

* ``int`` → int64, ``float`` → float64, ``bool`` → bool;
* ``str`` and anything else (``tuple[str, ...]``) → object: references, e.g. to the strings
  the trace's categorical columns already hold (producers share equal tuples);
* an optional field (``X | None``) has, besides its values, a boolean *missing* mask; its
  value in a missing row is 0 (0.0, ``None`` for object columns).

A column whose rows all hold one value (all zeros: ``memcpys`` of a trace without copies, the
compile columns of an uncompiled trace; for object columns, one and the same object) is kept
as that value once, broadcast to the table's length (a read-only zero-stride view), and
pickled that way; other columns are contiguous (a strided view of a producer's 2-D array is
copied, so the 2-D array is not kept alive).

The table behaves as the read-only sequence of rows it replaces (``len``, ``t[i]``, slices,
iteration, ``==``): ``t[i]`` builds the row dataclass on demand, with Python values
(``int``, not ``numpy.int64``). Code that looks at every row uses the columns
(:meth:`RowTable.column`, :meth:`RowTable.missing`, :meth:`RowTable.take`) instead.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

import numpy as np

R = TypeVar("R")
T = TypeVar("T", bound="RowTable[Any]")

#: Rows converted to Python values at a time while iterating.
_ITER_CHUNK = 4096
#: Columns of at least this many rows are stored once when all their rows hold one value.
_CONSTANT_MIN_ROWS = 64


@dataclasses.dataclass(frozen=True)
class ColumnSpec:
    """How one field of the row dataclass is stored."""

    name: str
    dtype: np.dtype
    optional: bool  # ``X | None``: the column has a missing mask


def _spec(name: str, hint: Any) -> ColumnSpec:
    args = typing.get_args(hint)
    optional = (typing.get_origin(hint) in (typing.Union, types.UnionType)
                and type(None) in args)
    if optional:
        rest = [a for a in args if a is not type(None)]
        hint = rest[0] if len(rest) == 1 else object
    dtype = {int: np.dtype(np.int64), float: np.dtype(np.float64),
             bool: np.dtype(bool)}.get(hint, np.dtype(object))
    return ColumnSpec(name, dtype, optional)


def object_column(values: Iterable[Any], n: int) -> np.ndarray:
    """A 1-D object array of ``n`` values (tuples stay elements, never a second axis)."""
    out = np.empty(n, dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def _readonly(view: np.ndarray) -> np.ndarray:
    """``view`` made read-only (a view: the producer's array is not copied)."""
    view.flags.writeable = False
    return view


def _constant(col: np.ndarray) -> bool:
    """Whether every row of ``col`` holds its first row's value (the same object, for object
    columns)."""
    if len(col) < _CONSTANT_MIN_ROWS:
        return False
    if col.dtype == object:
        first = col[0]
        return all(v is first for v in col.tolist())
    if col.dtype.kind == "f":
        return bool(np.array_equal(col, np.broadcast_to(col[:1], col.shape), equal_nan=True))
    return bool((col == col[0]).all())


def _stored(col: np.ndarray) -> np.ndarray:
    """``col`` as a table keeps it: one value broadcast when constant, else contiguous."""
    if _constant(col):
        return np.broadcast_to(col[:1].copy(), col.shape)
    return _readonly(np.ascontiguousarray(col).view())


def _packed(col: np.ndarray) -> np.ndarray | tuple[np.ndarray, int]:
    """For pickling: a broadcast column as ``(its one value, length)``."""
    if len(col) and col.strides == (0,):
        return col[:1].copy(), len(col)
    return col


def _unpacked(col: np.ndarray | tuple[np.ndarray, int]) -> np.ndarray:
    return np.broadcast_to(col[0], (col[1],)) if isinstance(col, tuple) else col


def _rebuild(cls: type[T], columns: dict[str, Any], missing: dict[str, np.ndarray]) -> T:
    return cls({k: _unpacked(v) for k, v in columns.items()}, missing)


class RowTable(Sequence[R], Generic[R]):
    """Rows of one frozen dataclass, stored as one read-only numpy array per field.

    ``columns``: one array-like per field of the row (exactly those names; equal lengths);
    ``missing``: for optional fields, a bool array per field (``True``: the row's value is
    ``None``); omitted ones are all ``False``.
    """

    row_type: ClassVar[type]
    specs: ClassVar[tuple[ColumnSpec, ...]]
    __slots__ = ("_columns", "_missing", "_n")

    def __init_subclass__(cls, row: type | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if row is not None:
            hints = typing.get_type_hints(row)
            cls.row_type = row
            cls.specs = tuple(_spec(f.name, hints[f.name]) for f in dataclasses.fields(row))

    def __init__(self, columns: Mapping[str, Any],
                 missing: Mapping[str, Any] | None = None) -> None:
        names = [s.name for s in self.specs]
        if set(columns) != set(names):
            extra, absent = set(columns) - set(names), set(names) - set(columns)
            raise ValueError(f"{type(self).__name__}: columns must be the fields of "
                             f"{self.row_type.__name__} (unknown: {sorted(extra)}, "
                             f"missing: {sorted(absent)})")
        cols: dict[str, np.ndarray] = {}
        for s in self.specs:
            v = columns[s.name]
            if s.dtype == object and not (isinstance(v, np.ndarray) and v.dtype == object):
                v = object_column(v, len(v))
            cols[s.name] = _stored(np.asarray(v, dtype=s.dtype).reshape(-1))
        lengths = {len(c) for c in cols.values()}
        if len(lengths) > 1:
            raise ValueError(f"{type(self).__name__}: columns of unequal lengths {lengths}")
        n = lengths.pop() if lengths else 0
        masks: dict[str, np.ndarray] = {}
        for s in self.specs:
            if not s.optional:
                continue
            m = (missing or {}).get(s.name)
            mask = np.zeros(n, bool) if m is None else np.asarray(m, dtype=bool).reshape(-1)
            if len(mask) != n:
                raise ValueError(f"{type(self).__name__}: missing mask of {s.name} has "
                                 f"{len(mask)} rows, not {n}")
            masks[s.name] = _readonly(mask.view())
        unknown = set(missing or {}) - set(masks)
        if unknown:
            raise ValueError(f"{type(self).__name__}: only optional fields have a missing "
                             f"mask, not {sorted(unknown)}")
        object.__setattr__(self, "_columns", cols)
        object.__setattr__(self, "_missing", masks)
        object.__setattr__(self, "_n", n)

    @classmethod
    def from_rows(cls: type[T], rows: Iterable[Any]) -> T:
        """The table of ``rows`` (instances of the row dataclass): for small inputs."""
        rows = list(rows)
        columns: dict[str, Any] = {}
        missing: dict[str, np.ndarray] = {}
        for s in cls.specs:
            values = [getattr(r, s.name) for r in rows]
            if s.optional:
                missing[s.name] = np.array([v is None for v in values], bool)
                zero = None if s.dtype == object else s.dtype.type(0)
                values = [zero if v is None else v for v in values]
            columns[s.name] = (object_column(values, len(values)) if s.dtype == object
                               else values)
        return cls(columns, missing)

    # --- columns ------------------------------------------------------------------------------

    def column(self, name: str) -> np.ndarray:
        """The read-only values of field ``name`` (0 / ``None`` in missing rows)."""
        return self._columns[name]

    def missing(self, name: str) -> np.ndarray:
        """Bool per row: the value of field ``name`` is ``None`` (all ``False`` for a field
        that is not optional)."""
        m = self._missing.get(name)
        return m if m is not None else np.zeros(self._n, bool)

    def take(self: T, rows: Sequence[int] | np.ndarray | slice) -> T:
        """The table of the given rows: integer indices (in that order), a bool mask or a
        slice."""
        sel = rows if isinstance(rows, slice) else np.asarray(rows)
        if not isinstance(sel, slice) and sel.dtype != bool:
            sel = sel.astype(np.int64, copy=False)
        return type(self)({k: v[sel] for k, v in self._columns.items()},
                          {k: v[sel] for k, v in self._missing.items()})

    # --- sequence -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._n

    @typing.overload
    def __getitem__(self, i: int) -> R: ...
    @typing.overload
    def __getitem__(self: T, i: slice) -> T: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return self.take(i)
        i = int(i)
        if not -self._n <= i < self._n:
            raise IndexError(f"{type(self).__name__} index {i} out of range ({self._n} rows)")
        return next(self._rows(i % self._n, i % self._n + 1))

    def __iter__(self) -> Iterator[R]:
        return self._rows(0, self._n)

    def _rows(self, lo: int, hi: int) -> Iterator[R]:
        make = self.row_type
        for a in range(lo, hi, _ITER_CHUNK):
            b = min(a + _ITER_CHUNK, hi)
            chunk = []
            for s in self.specs:
                values = self._columns[s.name][a:b].tolist()
                m = self._missing.get(s.name)
                if m is not None:
                    values = [None if gone else v for v, gone in zip(values, m[a:b].tolist(),
                                                                     strict=True)]
                chunk.append(values)
            names = [s.name for s in self.specs]
            for values in zip(*chunk, strict=True):
                yield make(**dict(zip(names, values, strict=True)))

    # --- frozen value -------------------------------------------------------------------------

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, RowTable)
        if self._n != other._n:
            return False
        for s in self.specs:
            if not np.array_equal(self.missing(s.name), other.missing(s.name)):
                return False
            a, b = self._columns[s.name], other._columns[s.name]
            same = (a.tolist() == b.tolist() if s.dtype == object
                    else np.array_equal(a, b, equal_nan=s.dtype.kind == "f"))
            if not same:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), {k: _packed(v) for k, v in self._columns.items()},
                           self._missing))

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self._n:,} {self.row_type.__name__} rows>"
