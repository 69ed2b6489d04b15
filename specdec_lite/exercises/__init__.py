"""Checks for the labs' coding exercises: specific feedback, not just pass/fail.

Every ``check_...`` function takes the student's answer (a number, an array or a
function), compares it with the package's own implementation, and returns a
``Feedback`` that prints as one clear message in a notebook. It never raises, whatever
the answer; ``Feedback.assert_correct()`` does on a wrong answer, with the same
message, which is how the labs' graded cells turn a check into a pass or a fail for
nbgrader. While a check runs the student's code, the package functions that compute
that exercise's answer are switched off (``specdec_lite._lock``): calling one gives a
"write it yourself" message instead of the answer.
"""

from .feedback import Feedback, NotYet

__all__ = ["Feedback", "NotYet"]
