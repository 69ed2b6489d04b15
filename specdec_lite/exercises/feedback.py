"""The ``Feedback`` value every ``check_...`` function returns."""

from __future__ import annotations

from dataclasses import dataclass


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
