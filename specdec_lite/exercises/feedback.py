"""The ``Feedback`` value every ``check_...`` function returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Feedback:
    """Outcome of a check: ``ok`` and a message saying what is right or what is wrong."""

    ok: bool
    message: str

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return ("Correct. " if self.ok else "Not yet. ") + self.message

    def _repr_markdown_(self) -> str:
        icon = "✅" if self.ok else "❌"
        return f"{icon} **{'Correct.' if self.ok else 'Not yet.'}** {self.message}"

    def __repr__(self) -> str:
        return str(self)


def correct(message: str) -> Feedback:
    return Feedback(True, message)


def wrong(message: str) -> Feedback:
    return Feedback(False, message)


def call_student(fn: Callable[..., Any], *args: Any) -> tuple[Any, str | None]:
    """Call the student's ``fn`` on copies of the array arguments; ``(result, None)`` or ``(None, what failed)``."""
    try:
        return fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]), None
    except Exception as e:  # the student's code may fail in any way; report it, never raise
        return None, f"your function raised {type(e).__name__}: {e}"


def as_number(x: Any) -> float | None:
    """``x`` as a float, or ``None`` when it is not one number (strings do not count)."""
    if isinstance(x, (str, bytes)):
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def fmt(x: Any) -> str:
    """A short, readable rendering of a law or array for feedback messages."""
    return np.array2string(np.asarray(x, dtype=float), precision=3, suppress_small=True)
