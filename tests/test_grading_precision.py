"""Questions and messages say the form and precision an answer needs, with the tolerances the checks use."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from specdec_lite.exercises import part1, part2
from specdec_lite.optimality import unbiased_rejection_law

SOURCE = Path(__file__).resolve().parents[1] / "notebooks" / "source"


def question(lab: str, exercise: int) -> str:
    text = (SOURCE / lab / f"{lab}.md").read_text()
    return text.split(f"**Lab exercise {exercise}.**")[1].split("\n")[0]


def power(x: float) -> str:
    return f"$10^{{{int(np.log10(x))}}}$"


def test_the_questions_state_the_tolerance_of_numbers_answered_by_hand():
    for exercise in (1, 2):
        assert power(part1.HAND_ATOL) in question("lab03_rejections", exercise)
    assert "three decimals" in question("lab03_rejections", 1)
    lab4 = question("lab04_optimality", 2)
    assert power(part2.REJECT_ATOL) in lab4 and power(part2.TOL) in lab4


def test_the_questions_state_the_form_of_token_ids_and_of_a_lookahead():
    for exercise in (2, 3, 5, 8, 11):
        assert "integer" in question("lab09_bugs", exercise), exercise
    assert "whole number" in question("lab07_lookahead", 4)


def test_a_rule_typed_with_rounded_values_is_told_the_precision():
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5])  # an instance of the lab's kind
    b = np.array([0.2, 0.9, 1.0])
    P = unbiased_rejection_law(p, q, b)
    assert part2.check_unbiased_member(p, q, b, P)
    rounded = np.round(P, 2)
    rounded[0] += 1 - rounded.sum()  # a law, typed to two decimals
    assert not np.allclose(rounded, P, atol=1e-4)
    fb = part2.check_unbiased_member(p, q, b, rounded)
    assert not fb.ok and f"to within {part2.TOL:g}" in fb.message and "rather than typing rounded" in fb.message
    r = float(((1 - b) * p).sum())
    fb = part2.check_unbiased_member(p, q, b, P, target_reject=r + 0.002)
    assert not fb.ok and f"(within {part2.REJECT_ATOL:g})" in fb.message, fb.message
    assert part2.check_unbiased_member(p, q, b, P, target_reject=r + 0.0009)
