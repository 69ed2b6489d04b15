"""Checks for the labs' coding exercises: specific feedback, not just pass/fail.

Every ``check_...`` function takes the student's answer (a number, an array or a
function), compares it with the package's own implementation, and returns a
``Feedback`` that prints as one clear message in a notebook. It never raises on a
wrong answer, so a lab still runs top to bottom.
"""

from .feedback import Feedback

__all__ = ["Feedback"]
