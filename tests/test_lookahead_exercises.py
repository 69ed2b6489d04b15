"""Lab 7 checks: they accept right answers and name the typical mistakes."""

import re
from pathlib import Path

import nbformat
import numpy as np

from specdec_lite import lookahead as la
from specdec_lite.exercises import Feedback
from specdec_lite.exercises import lookahead as E
from tests import check_answers as A


def assert_wrong(fb: Feedback, *fragments: str) -> None:
    assert isinstance(fb, Feedback) and not fb.ok, fb
    for f in fragments:
        assert f in fb.message, fb.message


def test_check_tokens_per_call():
    assert_wrong(E.check_tokens_per_call(la.expected_tokens_per_call), "write it yourself")
    assert E.check_tokens_per_call(lambda a, K: sum(a**i for i in range(K + 1)))
    assert_wrong(E.check_tokens_per_call(lambda a, K: (1 - a ** (K + 1)) / (1 - a)), "divide 0 by 0")
    assert_wrong(E.check_tokens_per_call(lambda a, K: sum(a**i for i in range(K))), "forgot")
    assert_wrong(E.check_tokens_per_call(lambda a, K: sum(a**i for i in range(1, K + 1))), "accepted drafts only")
    assert_wrong(E.check_tokens_per_call(lambda a, K: 1 / (1 - a)), "K = infinity")
    assert_wrong(E.check_tokens_per_call(lambda a, K: 1 + K * a), "alpha^t")
    assert_wrong(E.check_tokens_per_call(lambda a, K: "many"), "one number")
    assert_wrong(E.check_tokens_per_call(lambda a, K: 2.0), "P(the round emits more than i tokens)")


def test_check_tokens_per_call_reports_the_zero_division():
    def closed(a, K):
        return (1 - a ** (K + 1)) / (1 - a) if a < 1 else 1 / 0

    assert_wrong(E.check_tokens_per_call(closed), "ZeroDivisionError", "every draft is accepted")


def test_check_wallclock_speedup():
    assert E.check_wallclock_speedup(A.speedup)
    assert_wrong(E.check_wallclock_speedup(la.iid_speedup), "write it yourself")
    tokens = la.expected_tokens_per_call
    assert_wrong(E.check_wallclock_speedup(lambda a, K, c: tokens(a, K)), "K c + 1")
    assert_wrong(E.check_wallclock_speedup(lambda a, K, c: tokens(a, K) / (K * c)), "left out the target call")
    assert_wrong(E.check_wallclock_speedup(lambda a, K, c: tokens(a, K) / ((K + 1) * c + 1)), "bonus token")
    assert_wrong(E.check_wallclock_speedup(lambda a, K, c: tokens(a, K) / (1 + c)), "K c per round")
    assert_wrong(E.check_wallclock_speedup(lambda a, K, c: float("nan")), "finite")
    assert_wrong(E.check_wallclock_speedup(lambda a, K, c: [1, 2]), "one number")


def good_rounds(alpha, K, runs, rng):
    first_reject = rng.geometric(1 - alpha, size=runs) if alpha < 1 else np.full(runs, K + 1)
    return np.minimum(first_reject, K + 1)


def test_check_round_lengths():
    assert E.check_round_lengths(good_rounds)
    assert_wrong(E.check_round_lengths(lambda a, K, n, rng: np.minimum(rng.geometric(1 - a, n), K)), "bonus")
    assert_wrong(E.check_round_lengths(lambda a, K, n, rng: good_rounds(a, K, n, rng) - 1), "at least one")
    assert_wrong(E.check_round_lengths(lambda a, K, n, rng: rng.geometric(1 - a, n)), "at most K + 1")
    # accepted drafts are Binomial(K, alpha), not stopped at the first rejection
    assert_wrong(E.check_round_lengths(lambda a, K, n, rng: 1 + rng.binomial(K, a, n)), "min(Geometric")
    assert_wrong(E.check_round_lengths(lambda a, K, n, rng: good_rounds(a, K, n - 1, rng)), "shape (19999,)")
    assert_wrong(E.check_round_lengths(lambda a, K, n, rng: good_rounds(a, K, n, rng) + 0.5), "whole numbers")
    assert_wrong(E.check_round_lengths(lambda a, K, n, rng: rng.nope()), "AttributeError")


def test_check_best_lookahead():
    alpha, c = 0.8, 0.05
    best = la.best_lookahead_iid(alpha, c)
    assert E.check_best_lookahead(best, alpha, c)
    assert_wrong(E.check_best_lookahead(best - 3, alpha, c), "larger")
    assert_wrong(E.check_best_lookahead(best + 5, alpha, c), "smaller")
    assert_wrong(E.check_best_lookahead(-1, alpha, c), "whole number")
    assert_wrong(E.check_best_lookahead(2.5, alpha, c), "whole number")
    assert E.check_best_lookahead(0, 0.3, 0.4)  # alpha < c: do not speculate


# --- the chapter and the lab around these checks ------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
LAB = "lab07_lookahead"


def test_chapter_has_the_three_kinds_of_exercises_with_dropdown_solutions():
    text = (ROOT / "book" / "ch07_lookahead.md").read_text()
    exercises = re.findall(r":::\{exercise\}\n:label: (\S+)", text)
    solutions = re.findall(r":::\{solution\} (\S+)\n:class: dropdown", text)
    assert len(exercises) >= 3 and sorted(exercises) == sorted(solutions)
    assert "*pencil and paper" in text.lower() and "*coding (lab 7)" in text.lower()
    assert "*exploration (lab 7 widget" in text.lower()
    for name in ("check_round_lengths", "check_tokens_per_call", "check_wallclock_speedup"):
        assert name in text and hasattr(E, name)
    assert not re.search(r"^def ", text, re.M), "formulas live in specdec_lite, not in the chapter"


def test_lab_structure():
    """The master of lab 7: four graded checks, in the chapter's order, and the lookahead explorer."""
    nb = nbformat.read(ROOT / "notebooks" / "source" / LAB / f"{LAB}.ipynb", as_version=4)
    graded = [c.source for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")]
    assert [re.match(r"check_\w+", g)[0] for g in graded] == [
        "check_round_lengths",
        "check_tokens_per_call",
        "check_wallclock_speedup",
        "check_best_lookahead",
    ]
    assert any(c.source == "lookahead_explorer()" for c in nb.cells)
