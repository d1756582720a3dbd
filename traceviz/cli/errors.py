"""Map input errors to one line on stderr and an exit code (never a traceback)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from traceviz.errors import TracevizError, out_of_memory

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``traceviz: error: message`` on stderr and return the Exit to raise."""
    print(f"traceviz: error: {message}", file=sys.stderr)
    return typer.Exit(code)


def user_errors(func: F) -> F:
    """Decorator for commands: a :class:`TracevizError` becomes one stderr line + its exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except TracevizError as exc:
            raise fail(str(exc), exc.exit_code) from None
        except MemoryError as exc:
            raise fail(out_of_memory(exc), 1) from None

    return wrapper  # type: ignore[return-value]
