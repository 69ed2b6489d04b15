"""Checks for the labs' coding exercises: specific feedback, not just pass/fail.

Every ``check_...`` function takes the student's answer (a number, an array or a
function), compares it with the package's own implementation, and returns a
``Feedback`` that prints as one clear message in a notebook. It never raises on a
wrong answer; ``Feedback.assert_correct()`` does, with the same message, which is how
the labs' graded cells turn a check into a pass or a fail for nbgrader.
"""

from .feedback import Feedback, NotYet

__all__ = ["Feedback", "NotYet"]
