"""Checks for the Part I labs (chapters 1-3), each with feedback that names the mistake.

Every check compares the student's answer with the package's own ``tv``,
``residual``, ``acceptance``, ``MarkovChain.marginals`` and ``theory`` functions,
and recognises the typical wrong answers (a missing 1/2, a missing positive part,
swapped letters, the wrong weighting of prefixes, ...).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import theory
from ..chains import MarkovChain
from ..laws import acceptance, residual, tv
from ..stats import chi_square
from .feedback import Feedback, call_student, correct, fmt, wrong

#: Absolute tolerance for numbers a student computes (by hand answers may be rounded).
HAND_ATOL = 1e-3


def _cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs ``(p, q)`` every law check runs on: generic, a zero in p, p == q, disjoint."""
    return [
        (np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])),
        (np.array([0.1, 0.6, 0.3, 0.0]), np.array([0.25, 0.25, 0.25, 0.25])),
        (np.array([0.7, 0.2, 0.1]), np.array([0.7, 0.2, 0.1])),
        (np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.5, 0.5])),
    ]




# --- Chapter 1 ------------------------------------------------------------------


def check_tv(student_tv: Callable[[np.ndarray, np.ndarray], float]) -> Feedback:
    """Check a function ``student_tv(p, q)`` returning ``TV(p, q) = 1/2 sum_x |p(x) - q(x)|``."""
    for p, q in _cases():
        got, err = call_student(student_tv, p, q)
        if err:
            return wrong(f"{err} on p = {fmt(p)}, q = {fmt(q)}.")
        try:
            got = float(got)
        except (TypeError, ValueError):
            return wrong(f"return one number, got {type(got).__name__} on p = {fmt(p)}, q = {fmt(q)}.")
        want = float(tv(p, q))
        if np.isclose(got, want, atol=1e-9):
            continue
        where = f"For p = {fmt(p)}, q = {fmt(q)} you returned {got:.4f} instead of {want:.4f}: "
        if np.isclose(got, 2 * want):
            return wrong(where + "that is sum |p - q|; TV has a factor 1/2 (each excess is counted twice).")
        if np.isclose(got, np.abs(p - q).max()):
            return wrong(where + "that is the largest single-token gap; TV adds the gaps of all tokens (then halves).")
        if np.isclose(got, np.minimum(p, q).sum()):
            return wrong(where + "that is the shared mass sum min(p, q), which equals 1 - TV.")
        if np.isclose(got, abs((p - q).sum())) or np.isclose(got, 0.5 * abs((p - q).sum())):
            return wrong(where + "positive and negative differences cancel; take |p(x) - q(x)| before summing.")
        return wrong(where + "TV(p, q) = 1/2 sum_x |p(x) - q(x)|.")
    return correct("TV is half the L1 distance, equivalently the mass of p above q (or of q above p).")


def check_marginals(student_marginals: Callable[[MarkovChain], np.ndarray]) -> Feedback:
    """Check ``student_marginals(chain)`` returning the ``(T, V)`` marginal laws of ``x_1..x_T``."""
    chain = MarkovChain.random(3, 4, rng=7, uniform_init=False)
    got, err = call_student(student_marginals, chain)
    if err:
        return wrong(err + ".")
    got = np.asarray(got, dtype=float)
    want = chain.marginals()
    if got.shape != want.shape:
        return wrong(f"expected shape (T, V) = {want.shape}, got {got.shape}: one row per position.")
    if np.allclose(got, want, atol=1e-9):
        return correct("mu_{n+1} = mu_n @ trans[n]: a row vector times the transition matrix.")
    if not np.allclose(got[0], chain.init):
        return wrong(f"row 0 must be the law of the first token, chain.init = {fmt(chain.init)}; got {fmt(got[0])}.")
    transposed = np.empty_like(want)
    transposed[0] = chain.init
    for n in range(1, chain.T):
        transposed[n] = chain.trans[n - 1] @ transposed[n - 1]
    if np.allclose(got, transposed, atol=1e-9):
        return wrong("you multiplied trans[n] @ mu (column convention); rows of trans are laws of the next "
                     "token, so the marginal is the row vector mu @ trans[n].")
    sums = got.sum(axis=1)
    if not np.allclose(sums, 1):
        return wrong(f"each row must be a law summing to 1; your row sums are {fmt(sums)}.")
    n = int(np.argmax(np.abs(got - want).max(axis=1)))
    return wrong(f"row {n} is {fmt(got[n])}, expected {fmt(want[n])}; use mu_n = mu_(n-1) @ trans[n-1].")


# --- Chapter 2 ------------------------------------------------------------------


def check_acceptance(student_acceptance: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Feedback:
    """Check ``student_acceptance(p, q)`` returning ``min(1, q(x)/p(x))`` per token (where ``p(x) > 0``)."""
    for p, q in _cases():
        got, err = call_student(student_acceptance, p, q)
        if err:
            return wrong(f"{err} on p = {fmt(p)}, q = {fmt(q)} (tokens with p(x) = 0 are never proposed; "
                         "any finite value is fine there).")
        got = np.asarray(got, dtype=float)
        if got.shape != p.shape:
            return wrong(f"return one probability per token (shape {p.shape}), got shape {got.shape}.")
        live = p > 0
        want = acceptance(p, q)
        if np.allclose(got[live], want[live], atol=1e-9):
            continue
        where = f"For p = {fmt(p)}, q = {fmt(q)} you returned {fmt(got)}: "
        with np.errstate(divide="ignore", invalid="ignore"):
            if np.allclose(got[live], (q / p)[live]):
                return wrong(where + "q/p exceeds 1 where the target likes a token more than the draft; "
                             "a probability needs min(1, q/p).")
            swapped = np.minimum(1, p / q)
        if np.allclose(got[live], swapped[live], equal_nan=True):
            return wrong(where + "that is min(1, p/q): the letters are swapped (here p is the draft, q the target).")
        return wrong(where + f"expected {fmt(want)} on the tokens the draft can propose.")
    return correct("accept a draft token x with probability min(1, q(x)/p(x)).")


def check_residual(student_residual: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Feedback:
    """Check ``student_residual(p, q)`` returning the law ``[q - p]_+`` (any law when ``p == q``)."""
    for p, q in _cases():
        got, err = call_student(student_residual, p, q)
        where = f"For p = {fmt(p)}, q = {fmt(q)}"
        if err:
            return wrong(f"{err} ({where}).")
        got = np.asarray(got, dtype=float)
        if got.shape != p.shape:
            return wrong(f"return one probability per token (shape {p.shape}), got shape {got.shape}.")
        pos = np.maximum(q - p, 0)
        if pos.sum() == 0:
            if not np.all(np.isfinite(got)):
                return wrong(f"{where} (p == q) you returned {fmt(got)}: max(q - p, 0) has no mass, so "
                             "dividing by it gives 0/0. Return a valid law instead (the package returns q); "
                             "it is never sampled, because a rejection has probability TV(p, q) = 0.")
            if np.all(got >= 0) and np.isclose(got.sum(), 1):
                continue
            return wrong(f"{where} (p == q) you returned {fmt(got)}: return a valid law (e.g. q) in this case.")
        if np.allclose(got, residual(p, q), atol=1e-9):
            continue
        where += f" you returned {fmt(got)}: "
        if np.any(got < -1e-12):
            return wrong(where + "it has negative entries; you used q - p without the positive part max(q - p, 0).")
        if np.allclose(got, pos, atol=1e-9):
            return wrong(where + f"your residual is not normalised: it sums to {got.sum():.3f} (= TV(p, q)); "
                         "divide by that mass.")
        if np.allclose(got, residual(q, p), atol=1e-9) or np.allclose(got, np.maximum(p - q, 0), atol=1e-9):
            return wrong(where + "that is [p - q]+: the residual puts mass where the target q exceeds the draft p.")
        if not np.isclose(got.sum(), 1):
            return wrong(where + f"it sums to {got.sum():.3f}, not 1.")
        return wrong(where + f"expected [q - p]+ = {fmt(residual(p, q))}.")
    return correct("[q - p]+ is the normalised positive part, with a fallback when it has no mass.")


def check_speculative_step(
    student_step: Callable[[np.ndarray, np.ndarray, np.random.Generator], tuple[int, bool]],
    runs: int = 10_000,
    seed: int = 0,
    alpha: float = 1e-3,
) -> Feedback:
    """Check ``student_step(p, q, rng) -> (token, rejected)``, one step of Algorithm 1.

    Runs it ``runs`` times on a fixed pair: the output must pass a chi-square test
    against ``q`` and the rejection rate must be within 5 standard errors of ``TV(p, q)``.
    A failing output law is compared with the laws of typical mistakes.
    """
    p, q = np.array([0.45, 0.3, 0.15, 0.1, 0.0]), np.array([0.1, 0.2, 0.2, 0.3, 0.2])
    gen = np.random.default_rng(seed)
    tokens, rejected = np.empty(runs, dtype=int), np.empty(runs, dtype=bool)
    for i in range(runs):
        out, err = call_student(student_step, p, q, gen)
        if err:
            return wrong(err + ".")
        try:
            tokens[i], rejected[i] = int(out[0]), bool(out[1])
        except (TypeError, ValueError, IndexError):
            return wrong(f"return a pair (token, rejected), got {out!r}.")
        if not 0 <= tokens[i] < len(p):
            return wrong(f"token {tokens[i]} is outside the vocabulary 0..{len(p) - 1}.")
    counts = np.bincount(tokens, minlength=len(p))
    freq = fmt(counts / runs)
    rate, t = rejected.mean(), float(tv(p, q))
    if chi_square(counts, q).pvalue < alpha:
        mistakes = {
            "after a rejection you sampled from q instead of the residual [q - p]+ (output min(p, q) + TV q)":
                np.minimum(p, q) + t * q,
            "the output follows the draft p: you never reject, or after a rejection you sample [p - q]+ "
            "(letters swapped; min(p, q) + TV [p - q]+ = p)": p,
        }
        for what, law in mistakes.items():
            if chi_square(counts, law).pvalue >= alpha:
                return wrong(f"your output frequencies {freq} do not follow q = {fmt(q)}: {what}.")
        return wrong(f"your output frequencies {freq} do not follow q = {fmt(q)} (chi-square test).")
    se = np.sqrt(max(t * (1 - t), 1e-12) / runs)
    if abs(rate - t) > 5 * se:
        hint = " (did you flag accepted tokens as rejected?)" if np.isclose(rate, 1 - t, atol=5 * se) else ""
        return wrong(f"the output law is right, but you report a rejection rate {rate:.3f} instead of "
                     f"TV(p, q) = {t:.3f}{hint}.")
    return correct(f"output frequencies {freq} match q = {fmt(q)}, and the rejection rate {rate:.3f} "
                   f"matches TV(p, q) = {t:.3f}.")


# --- Chapter 3 ------------------------------------------------------------------


def two_state_pair() -> tuple[MarkovChain, MarkovChain]:
    """The lab's 2-state, 3-token example ``(draft, target)``: small enough to do by hand."""
    q_init = np.array([0.5, 0.5])
    q_trans = np.array([[[0.9, 0.1], [0.4, 0.6]]] * 2)
    p_init = np.array([0.8, 0.2])
    p_trans = np.array([[[0.6, 0.4], [0.2, 0.8]]] * 2)
    return MarkovChain(p_init, p_trans), MarkovChain(q_init, q_trans)


def _close(a: float, b: float) -> bool:
    return bool(abs(a - b) <= HAND_ATOL)


def check_expected_rejections_two_state(
    answer: float, draft: MarkovChain | None = None, target: MarkovChain | None = None
) -> Feedback:
    """Check a number for ``E[N_rej]`` (Theorem 1(b)) on ``two_state_pair()`` or the given chains."""
    if (draft is None) != (target is None):
        return wrong("pass both draft and target, or neither (to use two_state_pair()).")
    if draft is None:
        draft, target = two_state_pair()
    try:
        answer = float(answer)
    except (TypeError, ValueError):
        return wrong(f"answer with one number, got {answer!r}.")
    profile = theory.rejection_profile(draft, target)
    want = float(profile.sum())
    if _close(answer, want):
        return correct(f"E[N_rej] = {want:.4f}: the per-position TVs {fmt(profile)} weighted by the target's "
                       "law of the previous token, summed over positions.")
    row_tv = tv(draft.laws(), target.laws())
    by_draft = row_tv[0, 0] + float(np.einsum("nu,nu->", draft.marginals()[:-1], row_tv[1:]))
    uniform = row_tv[0, 0] + float(row_tv[1:].mean(axis=1).sum())
    diagnoses = [
        (theory.expected_oracle_calls(draft, target),
         "that is E[oracle calls] = 1 + sum of E[R_n] over n < T; the question asks for E[N_rej] = sum over all n"),
        (by_draft, "you weighted the previous token by the draft's marginals; Theorem 1(b) averages over "
                   "prefixes drawn from the target q, because the output follows q"),
        (uniform, "you averaged the rows equally; weight each row's TV by the target's probability of "
                  "being in that state"),
        (float(profile[1:].sum()), "you left out the first position, whose TV is TV(p_1, q_1)"),
        (2 * want, "every TV is counted twice: TV has a factor 1/2"),
        (want - profile[-1], "you left out the last position (a rejection there counts, even though it opens no "
                             "new round)"),
    ]
    for value, why in diagnoses:
        if _close(answer, value):
            return wrong(f"{answer:.4f} is not E[N_rej]: {why}.")
    return wrong(f"{answer:.4f} is not E[N_rej]; compute E[R_n] = sum_u P_q(x_(n-1) = u) TV(p_n, q_n)(. | u) for "
                 "each position and add them up.")


def check_speedup(answer: float, draft: MarkovChain | None = None, target: MarkovChain | None = None) -> Feedback:
    """Check a speed-up over autoregressive decoding; both conventions are accepted and named."""
    if (draft is None) != (target is None):
        return wrong("pass both draft and target, or neither (to use two_state_pair()).")
    if draft is None:
        draft, target = two_state_pair()
    try:
        answer = float(answer)
    except (TypeError, ValueError):
        return wrong(f"answer with one number, got {answer!r}.")
    T, e = target.T, theory.expected_rejections(draft, target)
    calls = theory.expected_oracle_calls(draft, target)
    if np.isclose(answer, T / calls, atol=HAND_ATOL):
        return correct(f"T / E[oracle calls] = {T}/{calls:.4f} = {T / calls:.4f} (the package's convention).")
    if e > 0 and np.isclose(answer, T / e, atol=HAND_ATOL):
        return correct(f"T / E[N_rej] = {T}/{e:.4f} = {T / e:.4f} (the paper's convention; counting the first "
                       f"round's call too gives T / E[oracle calls] = {T / calls:.4f}).")
    if np.isclose(answer, calls / T, atol=HAND_ATOL) or (e > 0 and np.isclose(answer, e / T, atol=HAND_ATOL)):
        return wrong("that is the inverse: the speed-up is T calls of autoregressive decoding divided by the "
                     "expected calls of speculative decoding.")
    return wrong(f"{answer:.4f} is not a speed-up of this pair: autoregressive decoding makes T = {T} calls; "
                 "divide by the expected number of calls (or of rejections) of speculative decoding.")
