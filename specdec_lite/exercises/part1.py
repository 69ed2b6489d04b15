"""Checks for the Part I labs (chapters 1-3), each with feedback that names the mistake.

Every check compares the student's answer with the package's own functions and
recognises the typical wrong answers (a missing factor, a missing positive part,
swapped letters, the wrong weighting of prefixes, ...). While a check runs the
student's code, the package functions that compute the exercise's answer are
switched off (``specdec_lite._lock``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _lock, theory
from .._i18n import N_, _
from ..chains import MarkovChain
from ..laws import acceptance, residual, tv
from ..stats import chi_square
from . import instances
from .feedback import (
    DECODERS,
    Feedback,
    _Refused,
    checker,
    convert_answer,
    correct,
    fmt,
    integer,
    number,
    run,
    session,
    vector,
    wrong,
)

#: Absolute tolerance for numbers a student computes (by hand answers may be rounded).
HAND_ATOL = 1e-3

#: Tolerance for computed laws and numbers: float32 rounding passes, every typical mistake is far off.
ATOL = 1e-6


def _cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs ``(p, q)`` every law check runs on: generic, a zero in p, p == q, disjoint."""
    return [
        (np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])),
        (np.array([0.1, 0.6, 0.3, 0.0]), np.array([0.25, 0.25, 0.25, 0.25])),
        (np.array([0.7, 0.2, 0.1]), np.array([0.7, 0.2, 0.1])),
        (np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.5, 0.5])),
    ]


def _graded_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """The public pairs, then pairs drawn now (two decimals, stated in full by the messages)."""
    return _cases() + instances.pairs(instances.fresh())


def _near(a: Any, b: Any, atol: float = ATOL) -> bool:
    return bool(np.allclose(a, b, rtol=ATOL, atol=atol))


# --- Chapter 1 ------------------------------------------------------------------


@checker("laws.tv", "laws.accepted_mass", "laws.rejected_mass")
def check_tv(student_tv: Callable[[np.ndarray, np.ndarray], float]) -> Feedback:
    """Check a function ``student_tv(p, q)`` returning the total variation distance of two laws."""
    for p, q in _graded_cases():
        where = _("For p = {p}, q = {q}").format(p=fmt(p), q=fmt(q))
        got, err = run(student_tv, p, q, convert=number)
        if err:
            return wrong(_("{where}: {err}.").format(where=where, err=err))
        want = float(tv(p, q))
        if _near(got, want):
            continue
        if not np.isfinite(got):
            return wrong(
                _("{where} you returned {got}; TV is a finite number between 0 and 1.").format(where=where, got=got)
            )
        where += _(" you returned {got:.4f} instead of {want:.4f}: ").format(got=got, want=want)
        if _near(got, 2 * want):
            return wrong(where + _("that is sum |p - q|; TV has a factor 1/2 (each excess is counted twice)."))
        if _near(got, np.abs(p - q).max()):
            return wrong(
                where + _("that is the largest single-token gap; TV adds the gaps of all tokens (then halves).")
            )
        if _near(got, np.minimum(p, q).sum()):
            return wrong(where + _("that is the shared mass sum min(p, q), which equals 1 - TV."))
        if _near(got, abs((p - q).sum())) or _near(got, 0.5 * abs((p - q).sum())):
            return wrong(where + _("positive and negative differences cancel; take |p(x) - q(x)| before summing."))
        return wrong(where + _("TV(p, q) = 1/2 sum_x |p(x) - q(x)|."))
    return correct(_("TV is half the L1 distance, equivalently the mass of p above q (or of q above p)."))


@checker("MarkovChain.marginals", "chains.sequence_law")
def check_marginals(student_marginals: Callable[[MarkovChain], np.ndarray]) -> Feedback:
    """Check ``student_marginals(chain)`` returning the ``(T, V)`` marginal laws of ``x_1..x_T``."""
    drawn = instances.fresh()
    chains = [MarkovChain.random(3, 4, rng=7, uniform_init=False), instances.chain(drawn, 4, 3)]
    chains.append(instances.chain(drawn, 3, 4))
    for i, chain in enumerate(chains):
        where = (
            _("On a chain drawn for this check ({instances_describe_chain}): ").format(
                instances_describe_chain=instances.describe_chain(chain)
            )
            if i
            else ""
        )
        fb = _marginals_feedback(student_marginals, chain, where)
        if not fb.ok:
            return fb
    return correct(_("each marginal is the previous one, as a row vector, times the transition matrix."))


def _marginals_feedback(student_marginals: Callable[..., Any], chain: MarkovChain, where: str) -> Feedback:
    """The verdict of ``student_marginals`` on one chain; ``where`` (empty for the public chain) opens the message."""
    got, err = run(student_marginals, chain, convert=vector((chain.T, chain.V)))
    if err:
        return wrong(
            _("{where}{err} (one row per position: shape (T, V) = {chain_T_chain_V}).").format(
                where=where, err=err, chain_T_chain_V=(chain.T, chain.V)
            )
        )
    want = chain.marginals()  # computed after the student's code returned: no frame of this check holds it before
    if _near(got, want):
        return correct("")
    if not _near(got[0], chain.init):
        return wrong(
            _("{where}row 0 must be the law of the first token, chain.init = {chain_init}; got {got_0}.").format(
                where=where, chain_init=fmt(chain.init), got_0=fmt(got[0])
            )
        )
    transposed = np.empty_like(want)
    transposed[0] = chain.init
    for n in range(1, chain.T):
        transposed[n] = chain.trans[n - 1] @ transposed[n - 1]
    if _near(got, transposed):
        return wrong(
            _(
                "{where}you multiplied trans[n] @ mu (column convention); rows of trans are laws of the next "
                "token, so the marginal is the row vector mu @ trans[n]."
            ).format(where=where)
        )
    sums = got.sum(axis=1)
    if not np.all(np.isfinite(got)) or not _near(sums, 1):
        return wrong(
            _("{where}each row must be a law summing to 1; your row sums are {sums}.").format(
                where=where, sums=fmt(sums)
            )
        )
    n = int(np.argmax(np.abs(got - want).max(axis=1)))
    return wrong(
        _("{where}row {n} is {got_n}, expected {want_n}; use mu_n = mu_(n-1) @ trans[n-1].").format(
            where=where, n=n, got_n=fmt(got[n]), want_n=fmt(want[n])
        )
    )


# --- Chapter 2 ------------------------------------------------------------------


@checker("laws.acceptance", "laws.over_accept", "tradeoff.over_accept")
def check_acceptance(student_acceptance: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Feedback:
    """Check ``student_acceptance(p, q)``: one acceptance probability per token (any value where ``p(x) = 0``)."""
    for p, q in _graded_cases():
        where = _("For p = {p}, q = {q}").format(p=fmt(p), q=fmt(q))
        got, err = run(student_acceptance, p, q, convert=vector(p.shape))
        if err:
            aside = ""
            if np.any(p == 0) and ("Division" in err or "nan" in err.lower() or "inf" in err.lower()):
                aside = _(" Tokens with p(x) = 0 are never proposed; any finite value is fine there.")
            return wrong(_("{where}: {err}.").format(where=where, err=err) + aside)
        live = p > 0
        want = acceptance(p, q)
        if _near(got[live], want[live]):
            continue
        where += _(" you returned {got}: ").format(got=fmt(got))
        with np.errstate(divide="ignore", invalid="ignore"):
            if _near(got[live], (q / p)[live]):
                return wrong(
                    where
                    + _(
                        "q/p exceeds 1 where the target likes a token more than "
                        "the draft; a probability cannot exceed 1."
                    )
                )
            swapped = np.minimum(1, p / q)
        if np.allclose(got[live], swapped[live], rtol=ATOL, atol=ATOL, equal_nan=True):
            return wrong(where + _("the letters are swapped (here p is the draft, q the target)."))
        return wrong(where + _("expected {want} on the tokens the draft can propose.").format(want=fmt(want)))
    return correct(_("a draft token is kept with probability min(1, q(x)/p(x))."))


@checker("laws.residual", "laws.rejected_mass", "tradeoff.optimal_rejection_law")
def check_residual(student_residual: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Feedback:
    """Check ``student_residual(p, q)`` returning the residual law (any law when ``p == q``)."""
    for p, q in _graded_cases():
        where = _("For p = {p}, q = {q}").format(p=fmt(p), q=fmt(q))
        got, err = run(student_residual, p, q, convert=vector(p.shape))
        if err:
            return wrong(_("{where}: {err}.").format(where=where, err=err))
        pos = np.maximum(q - p, 0)
        if pos.sum() == 0:
            if not np.all(np.isfinite(got)):
                return wrong(
                    _(
                        "{where} (p == q) you returned {got}: max(q - p, 0) has no mass, so dividing by it gives 0/0. "
                        "Return a valid law instead (the package returns q); it is never sampled, because a rejection "
                        "has probability TV(p, q) = 0."
                    ).format(where=where, got=fmt(got))
                )
            if np.all(got >= -ATOL) and abs(got.sum() - 1) <= ATOL:
                continue
            return wrong(
                _("{where} (p == q) you returned {got}: return a valid law (e.g. q) in this case.").format(
                    where=where, got=fmt(got)
                )
            )
        if _near(got, residual(p, q)):
            continue
        where += _(" you returned {got}: ").format(got=fmt(got))
        if not np.all(np.isfinite(got)):
            return wrong(where + _("it has NaN or inf entries."))
        if np.any(got < -ATOL):
            return wrong(where + _("it has negative entries; you used q - p without the positive part max(q - p, 0)."))
        if _near(got, pos):
            return wrong(
                where
                + _(
                    "your residual is not normalised: it sums to {got_sum:.3f} (= TV(p, q)); divide by that mass."
                ).format(got_sum=got.sum())
            )
        if _near(got, residual(q, p)) or _near(got, np.maximum(p - q, 0)):
            return wrong(where + _("that is [p - q]+: the residual puts mass where the target q exceeds the draft p."))
        if abs(got.sum() - 1) > ATOL:
            return wrong(where + _("it sums to {got_sum:.3f}, not 1.").format(got_sum=got.sum()))
        return wrong(where + _("expected [q - p]+ = {residual_p_q}.").format(residual_p_q=fmt(residual(p, q))))
    return correct(_("[q - p]+ is the normalised positive part, with a fallback when it has no mass."))


#: The pair ``(p, q)`` of ``check_speculative_step``.
STEP_PAIR = (np.array([0.45, 0.3, 0.15, 0.1, 0.0]), np.array([0.1, 0.2, 0.2, 0.3, 0.2]))


def _step_output(V: int) -> Callable[[Any], tuple[int, bool]]:
    def convert(out: Any) -> tuple[int, bool]:
        try:
            token, flag = out
        except Exception:  # noqa: BLE001 - anything that is not a pair
            raise _Refused(_("return a pair (token, rejected)")) from None
        try:
            token = integer(token)
        except Exception as e:  # noqa: BLE001
            raise _Refused(_("the token must be a whole number: {e}").format(e=e)) from None
        if not 0 <= token < V:
            raise _Refused(_("token {token} is outside the vocabulary 0..{V_1}").format(token=token, V_1=V - 1))
        if isinstance(flag, bool | np.bool_) or (isinstance(flag, int | np.integer) and flag in (0, 1)):
            return token, bool(flag)
        raise _Refused(_("rejected must be True or False, got {flag!r}").format(flag=flag)[:200])

    return convert


def _joint(accepted: np.ndarray, rejected: np.ndarray) -> np.ndarray:
    """Cells (token, accepted) then (token, rejected), as one law."""
    return np.concatenate([accepted, rejected])


@checker(*DECODERS)
def check_speculative_step(
    student_step: Callable[[np.ndarray, np.ndarray, np.random.Generator], tuple[int, bool]],
    runs: int = 10_000,
    seed: int = 0,
    alpha: float = 1e-3,
) -> Feedback:
    """Check ``student_step(p, q, rng) -> (token, rejected)``, one step of Algorithm 1.

    Runs it ``runs`` times (generator seeded with ``seed``) on a fixed pair and tests the
    joint law of ``(token, rejected)``, cell by cell, with a chi-square test at level
    ``alpha`` against the exact joint law of Algorithm 1; a failing law is compared with
    the joint laws of typical mistakes.
    """
    p, q = STEP_PAIR
    V = len(p)
    gen = np.random.default_rng(seed)
    counts = np.zeros(2 * V, dtype=np.int64)
    convert = _step_output(V)
    with session():
        for _i in range(runs):
            out, err = run(student_step, p, q, gen, convert=convert)
            if err:
                return wrong(_("{err}.").format(err=err))
            token, rej = out
            counts[token + V * rej] += 1
    t = float(tv(p, q))
    shared, excess = np.minimum(p, q), np.maximum(q - p, 0)
    exact = _joint(shared, excess)
    fit = chi_square(counts, exact)
    freq_acc, freq_rej = counts[:V] / runs, counts[V:] / runs
    seen = _("accepted tokens {freq_acc}, rejected ones {freq_rej} (frequencies)").format(
        freq_acc=fmt(freq_acc), freq_rej=fmt(freq_rej)
    )
    if fit.pvalue >= alpha:
        return correct(
            _(
                "{seen} match min(p, q) = {shared} and max(q - p, 0) = {excess}: the output follows q and a "
                "rejection happens with probability TV(p, q) = {t:.3f}."
            ).format(seen=seen, shared=fmt(shared), excess=fmt(excess), t=t)
        )
    mistakes = {
        _(
            "your token follows q, but the rejection flag is drawn apart from it: the token of an accepted draft "
            "follows min(p, q) and a rejected one the residual [q - p]+, so the two are tied together"
        ): _joint((1 - t) * q, t * q),
        _("after a rejection you sample q instead of the residual [q - p]+ (rejected tokens then follow q)"): _joint(
            shared, t * q
        ),
        _(
            "you never reject, or after a rejection you sample [p - q]+ (letters swapped), so the output follows "
            "the draft p"
        ): _joint(p, np.zeros(V)),
        _("the letters are swapped: you sample [p - q]+ after a rejection"): _joint(shared, np.maximum(p - q, 0)),
        _("you flag accepted tokens as rejected and rejected ones as accepted"): _joint(excess, shared),
    }
    for what, law in mistakes.items():
        if chi_square(counts, law / law.sum()).pvalue >= alpha:
            return wrong(_("{seen}: {what}.").format(seen=seen, what=what))
    marginal = counts[:V] + counts[V:]
    if chi_square(marginal, q).pvalue < alpha:
        return wrong(
            _("{seen}: the output does not follow q = {q} (chi-square test, p = {fit_pvalue:.1e}).").format(
                seen=seen, q=fmt(q), fit_pvalue=fit.pvalue
            )
        )
    return wrong(
        _(
            "{seen}: the output follows q, but not with Algorithm 1's joint law of (token, rejected): "
            "accepted tokens must follow min(p, q) = {shared}, rejected ones max(q - p, 0) = {excess} "
            "(chi-square test, p = {fit_pvalue:.1e})."
        ).format(seen=seen, shared=fmt(shared), excess=fmt(excess), fit_pvalue=fit.pvalue)
    )


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


#: What a number answered by hand must be: said in every message that refuses one.
PRECISION = N_("a number answered by hand passes within {atol:g} of the exact value: give at least three decimals")


def _rounded(answer: float, want: float) -> str | None:
    """The message for an answer right to two decimals but not to ``HAND_ATOL`` (rounded too early)."""
    if np.isfinite(answer) and abs(answer - want) <= 0.005 + 1e-12:
        return _("{answer} agrees with the exact value to two decimals only; {PRECISION}.").format(
            answer=answer, PRECISION=_(PRECISION).format(atol=HAND_ATOL)
        )
    return None


def _pair_or_default(draft: Any, target: Any) -> tuple[MarkovChain, MarkovChain] | str:
    if (draft is None) != (target is None):
        return _("pass both draft and target, or neither (to use two_state_pair()).")
    if draft is None:
        return two_state_pair()
    if not isinstance(draft, MarkovChain) or not isinstance(target, MarkovChain):
        return _("draft and target must be MarkovChain objects.")
    return draft, target


@checker()
def check_expected_rejections_two_state(
    answer: float, draft: MarkovChain | None = None, target: MarkovChain | None = None
) -> Feedback:
    """Check a number for ``E[N_rej]`` (Theorem 1(b)) on ``two_state_pair()`` or the given chains."""
    pair = _pair_or_default(draft, target)
    if isinstance(pair, str):
        return wrong(pair)
    draft, target = pair
    answer, err = convert_answer(answer, number)
    if err:
        return wrong(_("{err}.").format(err=err))
    profile = theory.rejection_profile(draft, target)
    want = float(profile.sum())
    if _close(answer, want):
        return correct(
            _(
                "E[N_rej] = {want:.4f}: the per-position TVs {profile} weighted by the target's law of the "
                "previous token, summed over positions."
            ).format(want=want, profile=fmt(profile))
        )
    if not np.isfinite(answer):
        return wrong(
            _("your answer is {answer}; E[N_rej] is a finite number between 0 and T = {target_T}.").format(
                answer=answer, target_T=target.T
            )
        )
    if _rounded(answer, want):
        return wrong(_rounded(answer, want))
    row_tv = tv(draft.laws(), target.laws())
    by_draft = row_tv[0, 0] + float(np.einsum("nu,nu->", draft.marginals()[:-1], row_tv[1:]))
    uniform = row_tv[0, 0] + float(row_tv[1:].mean(axis=1).sum())
    diagnoses = [
        (
            theory.expected_oracle_calls(draft, target),
            _(
                "that is the expected number of oracle calls, which counts the first round's call and not a "
                "rejection at the last position; the question asks for the expected number of rejections"
            ),
        ),
        (
            by_draft,
            _(
                "you weighted the previous token by the draft's marginals; Theorem 1(b) averages over prefixes "
                "drawn from the target q, because the output follows q"
            ),
        ),
        (
            uniform,
            _("you averaged the rows equally; weight each row's TV by the target's probability of being in that state"),
        ),
        (float(profile[1:].sum()), _("you left out the first position")),
        (2 * want, _("every TV is counted twice: TV has a factor 1/2")),
        (
            want - profile[-1],
            _("you left out the last position (a rejection there counts, even though it opens no new round)"),
        ),
    ]
    for value, why in diagnoses:
        if _close(answer, value):
            return wrong(_("{answer:.4f} is not E[N_rej]: {why}.").format(answer=answer, why=why))
    return wrong(
        _(
            "{answer:.4f} is not E[N_rej]; compute, for each position, the TV of the two laws given the "
            "previous token, averaged over the target's law of that token, and add them up ({PRECISION})."
        ).format(answer=answer, PRECISION=_(PRECISION).format(atol=HAND_ATOL))
    )


@checker()
def check_speedup(
    answer: float,
    draft: MarkovChain | None = None,
    target: MarkovChain | None = None,
    *,
    rejections: Any = None,
) -> Feedback:
    """Check a speed-up over autoregressive decoding; both conventions are accepted and named.

    ``rejections``, the student's own ``E[N_rej]`` (the previous exercise), lets a speed-up
    computed correctly from a wrong ``E[N_rej]`` pass: that mistake costs the previous
    exercise only.
    """
    pair = _pair_or_default(draft, target)
    if isinstance(pair, str):
        return wrong(pair)
    draft, target = pair
    answer, err = convert_answer(answer, number)
    if err:
        return wrong(_("{err}.").format(err=err))
    if not np.isfinite(answer):
        return wrong(_("your speed-up is {answer}; a speed-up is a finite positive number.").format(answer=answer))
    T, e = target.T, theory.expected_rejections(draft, target)
    calls = theory.expected_oracle_calls(draft, target)
    if np.isclose(answer, T / calls, atol=HAND_ATOL):
        return correct(
            _("T / E[oracle calls] = {T}/{calls:.4f} = {T_calls:.4f} (the package's convention).").format(
                T=T, calls=calls, T_calls=T / calls
            )
        )
    if e > 0 and np.isclose(answer, T / e, atol=HAND_ATOL):
        return correct(
            _(
                "T / E[N_rej] = {T}/{e:.4f} = {T_e:.4f} (the paper's convention; counting the first round's call "
                "too gives T / E[oracle calls] = {T_calls:.4f})."
            ).format(T=T, e=e, T_e=T / e, T_calls=T / calls)
        )
    mine, err = convert_answer(rejections, number) if rejections is not None else (None, _("no E[N_rej] given"))
    if (
        not err
        and np.isfinite(mine)
        and mine > 0
        and not _close(mine, e)
        and np.isclose(answer, T / mine, atol=HAND_ATOL)
    ):
        return correct(
            _(
                "T / E[N_rej] = {T}/{mine:.4f} with your E[N_rej] from the previous exercise. That number is not "
                "right (the exact one is {e:.4f}, so T / E[N_rej] = {T_e:.4f}); the previous exercise's check "
                "explains what went wrong there."
            ).format(T=T, mine=mine, e=e, T_e=T / e)
        )
    if (
        np.isclose(answer, calls / T, atol=HAND_ATOL)
        or (e > 0 and np.isclose(answer, e / T, atol=HAND_ATOL))
        or (not err and np.isfinite(mine) and np.isclose(answer, mine / T, atol=HAND_ATOL))
    ):
        return wrong(
            _(
                "that is the inverse: the speed-up is T calls of autoregressive decoding divided by the expected "
                "calls of speculative decoding."
            )
        )
    for exact in (T / calls, T / e if e > 0 else np.nan):
        if _rounded(answer, exact):
            return wrong(_rounded(answer, exact))
    return wrong(
        _(
            "{answer:.4f} is not a speed-up of this pair: autoregressive decoding makes T = {T} calls; "
            "divide by the expected number of calls (or of rejections) of speculative decoding ({PRECISION})."
        ).format(answer=answer, T=T, PRECISION=_(PRECISION).format(atol=HAND_ATOL))
    )


_lock.make_read_only(__name__)
