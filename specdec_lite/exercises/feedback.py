"""The ``Feedback`` value every ``check_...`` function returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


class NotYet(AssertionError):
    """Raised by ``Feedback.assert_correct()`` on a wrong answer; its message is the feedback."""


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

    def assert_correct(self) -> None:
        """Show this feedback when the answer is right; raise ``NotYet`` with the message otherwise.

        The labs' graded cells call ``check_...(answer).assert_correct()``: the student reads the
        same message either way, and a grader (nbgrader) sees a failing cell on a wrong answer.
        The feedback is displayed rather than returned: a graded cell whose value is a number
        would be read by nbgrader as partial credit.
        """
        __tracebackhide__ = True  # IPython and pytest show the message, not this frame
        if not self.ok:
            raise NotYet(str(self))
        from IPython.display import display

        display(self)


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
