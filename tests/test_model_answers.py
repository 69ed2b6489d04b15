"""The numbers quoted by the model answers of labs 3, 5, 6 and 7 are what specdec_lite computes.

Each test recomputes, with the package (and the explorer the question is about), every
number one model answer quotes, formats it as the answer writes it, and checks that
this text appears in *that* answer: the region between ``### BEGIN SOLUTION`` and
``### END SOLUTION`` after "**Answer to question N.**" of the lab's MyST master.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

from specdec_lite import batch, biased, theory
from specdec_lite import lookahead as la
from specdec_lite.chains import one_token
from specdec_lite.figures.part1 import pair
from specdec_lite.widgets import lookahead_explorer, tradeoff_explorer

SOURCE = Path(__file__).resolve().parents[1] / "notebooks" / "source"


def answer(lab: str, question: int) -> str:
    """The model answer to one exploration question of a lab master."""
    text = (SOURCE / lab / f"{lab}.md").read_text()
    start = text.index(f"**Answer to question {question}.**")
    body = text[text.index("### BEGIN SOLUTION", start) : text.index("### END SOLUTION", start)]
    assert "**Answer to question" not in body
    return body


def assert_quotes(text: str, *quotes: str) -> None:
    missing = [q for q in quotes if q not in text]
    assert not missing, f"not in the model answer: {missing}"


def test_answer_regions_are_found():
    for lab in ("lab03_rejections", "lab05_tradeoff", "lab06_batch", "lab07_lookahead"):
        for question in range(1, 5):
            assert len(answer(lab, question)) > 100
        with pytest.raises(ValueError):
            answer(lab, 5)


# --- Lab 3: the rejections explorer (V = 7, T = 50, seed 10) ---------------------------------------


def test_lab3_speedup_five():
    """Question 3: at quality 0.60 the speed-up is 4.9997, exactly 5 needs a hair more."""
    draft, target, _ = pair(7, 50, 0.6, 10)
    rej, calls = theory.expected_rejections(draft, target), theory.expected_oracle_calls(draft, target)
    speedup = theory.speedup(draft, target)
    assert speedup < 5 and f"{speedup:.2f}" == "5.00"  # below 5, and shown as 5.00 by the title

    def gap(w: float) -> float:
        return theory.speedup(*pair(7, 50, w, 10)[:2]) - 5

    w_star = brentq(gap, 0.55, 0.65, xtol=1e-12)
    d0, t0, _ = pair(7, 50, 0.0, 10)
    rej0, rest0 = theory.expected_rejections(d0, t0), theory.expected_oracle_calls(d0, t0) - 1
    assert 1 + rest0 * (1 - w_star) == pytest.approx(10, abs=1e-9)  # the equation the answer solves
    assert_quotes(
        answer("lab03_rejections", 3),
        f"= {rej:.2f}$",
        f"= {calls:.4f}$",
        f"= {speedup:.4f}$",
        f"quality {w_star:.6f}",
        f"= {rej0:.2f}\\,(1 - w)$",
        f"$1 + {rest0:.2f}\\,(1 - w) = 10$",
        "50/10 = 5.00",
    )
    assert f"{w_star:.6f}" != "0.600000"


def test_lab3_doubling_T():
    """Question 4: E[N_rej] at quality 0.5 for T = 50 and T = 100, and the TV per position."""
    profiles = {T: theory.rejection_profile(*pair(7, T, 0.5, 10)[:2]) for T in (50, 100)}
    assert profiles[50][0] == 0 == profiles[100][0]  # "position 1 never rejects"
    per_position = profiles[100][1:].mean()
    assert_quotes(
        answer("lab03_rejections", 4),
        f"about {per_position:.2f} at quality 0.5",
        f"from {profiles[50].sum():.2f} at $T = 50$",
        f"to {profiles[100].sum():.2f} at $T = 100$",
    )


def test_lab3_quality_one():
    """Question 2: with p = q, one call for T = 50 tokens."""
    draft, target, _ = pair(7, 50, 1.0, 10)
    assert theory.expected_rejections(draft, target) == 0
    assert theory.expected_oracle_calls(draft, target) == 1
    assert_quotes(answer("lab03_rejections", 2), f"$50/1 = {theory.speedup(draft, target):.0f}$")


# --- Lab 5: the trade-off explorer (seed 0, quality 0.5) ---------------------------------------------


def _lab5_losses(eps: float, kind: str) -> tuple[float, float, float, float, float]:
    """(first-token loss, summed loss, sequence TV, exact rejections, summed rejections), as the explorer."""
    draft, target = tradeoff_explorer.explorer_pair(0, 0.5)
    token = biased.chain_front_point(*one_token(draft.init, target.init), eps, kind)[1]
    summed_rej, summed = biased.chain_front_point(draft, target, eps, kind)
    rej, seq = biased.sequence_point(draft, target, eps, kind)
    return token, summed, seq, rej, summed_rej


def test_lab5_smallest_eps():
    """Question 1: OPT and UNO at eps = 0.001 on the three panels."""
    text = answer("lab05_tradeoff", 1)
    for kind, digits in (("opt", (3, 3, 3)), ("uno", (3, 2, 2))):
        token, summed, seq, _, _ = _lab5_losses(0.001, kind)
        assert_quotes(text, *(f"{v:.{d}f}" for v, d in zip((token, summed, seq), digits, strict=True)))
    token, summed, seq, _, _ = _lab5_losses(0.001, "opt")
    draft, target = tradeoff_explorer.explorer_pair(0, 0.5)
    over = int((draft.init > target.init).sum())
    assert token <= over * 0.001 + 1e-12  # "at most eps for each token the draft proposes more often"
    assert_quotes(text, f"{token:.3f} on the first token", f"{summed:.3f} summed", f"sequence TV of {seq:.3f}")


def test_lab5_losses_meet():
    """Question 2: UNO's summed loss within 0.01 of OPT's first at the slider's 10^-0.6 = 0.251."""
    slider = [10 ** (-3 + 0.1 * i) for i in range(31) if 10 ** (-3 + 0.1 * i) <= 0.5 + 1e-9]
    gaps = [_lab5_losses(e, "uno")[1] - _lab5_losses(e, "opt")[1] for e in slider]
    first = next(i for i, g in enumerate(gaps) if g <= 0.01)
    eps = slider[first]
    assert f"{eps:.3f}" == "0.251" and f"{slider[first - 1]:.1f}" == "0.2"
    opt, uno = _lab5_losses(eps, "opt"), _lab5_losses(eps, "uno")
    draft, target = tradeoff_explorer.explorer_pair(0, 0.5)
    assert_quotes(
        answer("lab05_tradeoff", 2),
        f"slider's {eps:.3f}: {uno[1]:.3f} against {opt[1]:.3f}",
        f"the gap is still {gaps[first - 1]:.3f}",
        f"shows only {opt[4]:.3f} rejections",
        f"{opt[3]:.3f} for OPT, {uno[3]:.3f} for UNO",
        f"against {theory.expected_rejections(draft, target):.3f} for speculative decoding",
    )
    assert opt[4] == pytest.approx(uno[4])  # the same rule b_eps: the summed rejections coincide


def test_lab5_sequence_against_summed():
    """Question 3: summed loss against sequence TV at always-accept and for OPT at eps = 0.05."""
    draft, target = tradeoff_explorer.explorer_pair(0, 0.5)
    always_summed, always_seq = theory.expected_rejections(draft, target), biased.sequence_tv(draft, target)
    _, summed, seq, _, _ = _lab5_losses(0.05, "opt")
    assert_quotes(
        answer("lab05_tradeoff", 3),
        f"always-accept end {always_summed:.2f} against a sequence TV of {always_seq:.2f}",
        f"for OPT {summed:.2f} against {seq:.2f}",
    )


# --- Lab 6: the batch explorer (V = 7, T = 50, seed 10) ----------------------------------------------


def _lab6(quality: float) -> tuple[float, float, np.ndarray, np.ndarray]:
    draft, target, _ = pair(7, 50, quality, 10)
    Ms = range(1, 65)
    return (
        theory.expected_rejections(draft, target),
        batch.batch_rejection_limit(draft, target),
        batch.rejections_by_M(draft, target, Ms),
        batch.rejections_by_M(draft, target, Ms, tree=True),
    )


def test_lab6_floor_and_tree():
    """Questions 1 and 2: Algorithm 4 at M = 64 against its floor; the M where the tree passes it."""
    thm1, floor, alg4, tree = _lab6(0.0)
    half = int(np.argmax(alg4 <= (thm1 + floor) / 2)) + 1
    below = int(np.argmax(tree < floor)) + 1
    assert_quotes(
        answer("lab06_batch", 1),
        f"{alg4[-1]:.2f} expected rejections at $M = 64$",
        f"floor of {floor:.2f}",
        f"still {alg4[-1] - floor:.2f} above it",
        f"single draft: {thm1:.2f}",
        f"closed by $M = {half}$",
    )
    assert_quotes(answer("lab06_batch", 2), f"From $M = {below}$ on", f"({floor:.2f})", f"reaches {tree[-1]:.2f}")


@pytest.mark.slow
def test_lab6_better_drafts():
    """Question 3: the gap between the curves at M = 64 first grows (0.25), then shrinks; the floor at 0.5."""
    gaps = {q: _lab6(q)[2][-1] - _lab6(q)[3][-1] for q in (0.0, 0.25, 0.5, 0.8)}
    assert gaps[0.25] > gaps[0.0] > gaps[0.5] > gaps[0.8]  # not monotone: apart first, then closer
    assert_quotes(
        answer("lab06_batch", 3),
        "first move apart slightly, then close in",
        f"{gaps[0.0]:.2f} at quality 0, {gaps[0.25]:.2f} at 0.25, {gaps[0.5]:.2f} at 0.5, {gaps[0.8]:.2f} at 0.8",
        f"({_lab6(0.5)[1]:.2f} at quality 0.5)",
    )


# --- Lab 7: the lookahead explorer (quality 0.7 by default) ------------------------------------------


def _lab7(quality: float, c: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The explorer's exact curve, its i.i.d. dotted line (K = 0..30) and alpha."""
    T, calls, drafts, alpha = lookahead_explorer._costs(quality)
    curve = T / (calls + c * drafts)
    return curve, np.array([la.iid_speedup(alpha, K, c) for K in range(len(curve))]), alpha


def test_lab7_best_K_and_threshold():
    """Questions 1 and 2: the best K for six cost ratios, and the cost ratio where it drops to 0."""
    best = {c: int(np.argmax(_lab7(0.7, c)[0])) for c in (0.01, 0.05, 0.1, 0.2, 0.3, 0.5)}
    alpha = _lab7(0.7, 0.0)[2]
    assert_quotes(
        answer("lab07_lookahead", 1),
        f"($\\alpha \\approx {alpha:.2f}$)",
        f"the best $K$ is {best[0.01]} at $c = 0.01$, {best[0.05]} at 0.05, {best[0.1]} at 0.1, "
        f"{best[0.2]} at 0.2, {best[0.3]} at 0.3 and {best[0.5]} at 0.5",
    )
    slider = [round(0.01 * i, 2) for i in range(101)]
    zero = next(c for c in slider if int(np.argmax(_lab7(0.7, c)[0])) == 0)
    assert all(int(np.argmax(_lab7(0.7, c)[0])) == 0 for c in slider if c >= zero)
    assert zero < alpha
    assert_quotes(
        answer("lab07_lookahead", 2),
        f"Around $c = {zero:.2f}$",
        f"best $K$ is 0 from $c = {zero:.2f}$ on",
        f"$\\alpha \\approx {alpha:.2f}$",
    )


def test_lab7_quality_one():
    """Question 3: p = q, c = 0, K = 30 on T = 50: two rounds of 31 and 19 tokens."""
    curve, _, _ = _lab7(1.0, 0.0)
    assert curve[30] == pytest.approx(25)
    assert_quotes(
        answer("lab07_lookahead", 3),
        f"{curve[30]:.0f}, not 50",
        "$K + 1 = 31$",
        "remaining 19",
        f"50/2 = {curve[30]:.0f}",
    )


def test_lab7_exact_above_formula():
    """Question 4: at c = 0.1 the exact curve is above the formula from some K on; at c = 0 never."""
    exact, iid, _ = _lab7(0.7, 0.1)
    start = next(K for K in range(len(exact)) if (exact[K:] > iid[K:]).all())
    assert start > 1
    free, free_iid, _ = _lab7(0.7, 0.0)
    assert (free[1:] < free_iid[1:]).all()
    assert_quotes(
        answer("lab07_lookahead", 4),
        f"from $K = {start}$ on",
        f"{exact[20]:.2f} against {iid[20]:.2f} at $K = 20$",
        f"{exact[30]:.2f} against {iid[30]:.2f} at $K = 30$",
        f"{free[30]:.2f} against {free_iid[30]:.2f} at $K = 30$",
    )


def test_no_answer_keeps_an_unchecked_number():
    """Every decimal number of these model answers is one the tests above recompute (or a setting)."""
    settings = {
        "0.001",
        "0.01",
        "0.05",
        "0.1",
        "0.2",
        "0.25",
        "0.3",
        "0.5",
        "0.6",
        "0.60",
        "0.7",
        "0.8",
        "0.85",
        "0.02",
    }
    checked = {
        "lab03_rejections": {
            "9.21",
            "10.0006",
            "4.9997",
            "5.00",
            "10.00",
            "0.600025",
            "23.02",
            "22.50",
            "0.23",
            "11.51",
            "23.15",
        },
        "lab05_tradeoff": {
            "0.002",
            "0.013",
            "0.008",
            "0.060",
            "0.42",
            "0.17",
            "0.251",
            "1.532",
            "1.526",
            "0.020",
            "0.078",
            "0.127",
            "0.128",
            "1.604",
            "1.60",
            "0.64",
            "0.55",
            "0.28",
        },
        "lab06_batch": {"16.53", "15.78", "0.75", "23.02", "13.56", "2.97", "3.17", "2.33", "0.73", "9.36"},
        "lab07_lookahead": {"0.86", "2.37", "2.31", "2.00", "1.79", "6.43", "7.17"},
    }
    for lab, numbers in checked.items():
        for question in range(1, 5):
            found = set(re.findall(r"(?<![\w.])\d+\.\d+", answer(lab, question)))
            assert found <= numbers | settings, (lab, question, found - numbers - settings)
