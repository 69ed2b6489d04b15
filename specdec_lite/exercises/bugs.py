"""Lab 9: bugs that real speculative decoders shipped, and the checks of their fixes.

Each ``buggy_...`` function is a short implementation that looks right and reproduces
a bug reported in a public implementation (the lab links the report); the lab shows
its source, the student detects the bug with one of the book's tools, and fixes it.
Each ``check_...`` runs the student's fix and returns a ``Feedback``: never raising,
"not attempted yet" for the stub, and a specific message for the typical wrong fixes.

Tools the checks use, computed outside the student's code: the chi-square test of
unbiasedness against an exact law (``stats.chi_square``), Theorem 1's exact counts
(``lookahead.expected_oracle_calls_k``), the greedy-equality test (speculative
decoding at temperature 0 is the target's greedy output) and direct inspection of a
KV cache. Every call of student code goes through ``_student``, the one place a
guard around student code would wrap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._i18n import _
from ..chains import MarkovChain, sequence_law
from ..laws import residual, tv
from ..lookahead import expected_oracle_calls_k
from ..stats import chi_square, sequence_index
from . import feedback as _feedback
from . import instances
from .feedback import Feedback, correct, fmt, wrong

try:  # the KV-cache and bfloat16 bugs run on torch models; the others need numpy only
    import torch
except ImportError:  # pragma: no cover - torch is part of the book's environment
    torch = None

#: Chi-square false-alarm rate of every check (as in the tests: a correct fix fails once in 1000 seeds).
ALPHA = 1e-3
#: Standard errors a Monte Carlo mean may stray from its exact value.
Z = 5.0

#: The draft p and target q of the single-law checks (one token q(x) = 0 that p can propose).
P = np.array([0.45, 0.3, 0.15, 0.1, 0.0])
Q = np.array([0.1, 0.2, 0.2, 0.3, 0.2])


def _student(fn: Callable[..., Any], *args: Any, convert: Callable[[Any], Any] | None = None) -> tuple[Any, str | None]:
    """Call student code (arguments copied); ``(result, None)`` or ``(None, what failed)``.

    The one door to student code: with the grading lock of ``feedback.run`` where the
    package has it (the names a ``@_guard`` holds refuse to run meanwhile), else
    ``feedback.call_student``.
    """
    if not callable(fn):
        return None, _("expected a function, got {type_fn_name}").format(type_fn_name=type(fn).__name__)
    runner = getattr(_feedback, "run", None)
    if runner is not None:
        return runner(fn, *args, convert=convert)
    return _feedback.call_student(fn, *args)


def _repeat(
    fn: Callable[..., Any], calls: list[tuple], convert: Callable[[Any], Any] | None = None
) -> tuple[Any, str | None]:
    """``[convert(fn(*args)) for args in calls]`` in one call of student code (arguments copied); or what failed.

    ``convert`` runs inside the lock too: a lazy answer or an array subclass is read before the lock is released.
    """
    if not callable(fn):
        return None, _("expected a function, got {type_fn_name}").format(type_fn_name=type(fn).__name__)

    def all_calls() -> list[Any]:
        outs = []
        for args in calls:
            out = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            outs.append(out if convert is None else convert(out))
        return outs

    return _student(all_calls)


def _guard(*names: str) -> Callable[[Callable[..., Feedback]], Callable[..., Feedback]]:
    """``feedback.checker(*names)`` where the package has the lock: those functions refuse student calls."""
    checker = getattr(_feedback, "checker", None)
    return checker(*names) if checker is not None else (lambda check: check)


def _failure(err: str) -> Feedback:
    if "NotImplementedError" in err or _feedback.is_stub(err):
        return wrong(
            _(
                "not attempted yet: your function still raises NotImplementedError (replace the stub's `raise` "
                "with your fix)."
            )
        )
    return wrong(_("{err}.").format(err=err))


def softmax(z: np.ndarray) -> np.ndarray:
    """``exp(z) / sum exp(z)``, shifted by the maximum (numpy, float64)."""
    e = np.exp(z - z.max())
    return e / e.sum()


def _step_counts(step: Callable[..., Any], args: tuple, V: int, runs: int, seed: int) -> tuple[Any, str | None]:
    """Run ``step(*args, rng)`` ``runs`` times: ``(counts per token, rejection flags)`` or an error message."""
    gen = np.random.default_rng(seed)
    outs, err = _repeat(step, [(*args, gen)] * runs, convert=_token_and_flag)
    if err:
        return None, err
    tokens, rejected = np.empty(runs, dtype=int), np.empty(runs, dtype=bool)
    for i, out in enumerate(outs):
        tokens[i], rejected[i] = out
        if not 0 <= tokens[i] < V:
            return None, _("token {tokens_i} is outside the vocabulary 0..{V_1}").format(tokens_i=tokens[i], V_1=V - 1)
    return (np.bincount(tokens, minlength=V), rejected), None


def _token_and_flag(out: Any) -> tuple[int, bool]:
    """A step's ``(token, rejected)`` as plain Python values (the token an integer id: ``2`` or ``2.0``)."""
    try:
        token, flag = out
    except (TypeError, ValueError):
        raise _feedback._Refused(
            _("return a pair (token, rejected), got {feedback_kind_of_out}").format(
                feedback_kind_of_out=_feedback.kind_of(out)
            )
        ) from None
    try:
        token = _feedback.integer(token)
    except _feedback._Refused as e:
        raise _feedback._Refused(_("the token must be an integer id: {e}").format(e=e)) from None
    if not isinstance(flag, bool | np.bool_ | int | np.integer):
        raise _feedback._Refused(
            _("rejected must be True or False, got {feedback_kind_of_flag}").format(
                feedback_kind_of_flag=_feedback.kind_of(flag)
            )
        )
    return token, bool(flag)


def _tokens_and_calls(T: int, V: int) -> Callable[[Any], tuple[np.ndarray, float]]:
    """A decoder's ``(tokens, calls)``: an int64 array of ``T`` ids in ``0..V-1`` (whole floats pass), a float."""

    def convert(out: Any) -> tuple[np.ndarray, float]:
        try:
            tokens, calls = out
        except (TypeError, ValueError):
            raise _feedback._Refused(
                _("return a pair (tokens, oracle_calls), got {feedback_kind_of_out}").format(
                    feedback_kind_of_out=_feedback.kind_of(out)
                )
            ) from None
        wanted = _("T = {T} integer token ids in 0..{V_1} (ints, or floats holding whole numbers)").format(
            T=T, V_1=V - 1
        )
        try:
            arr = np.array(np.asarray(tokens), dtype=np.float64)
        except (TypeError, ValueError):
            raise _feedback._Refused(
                _("return {wanted}, got {feedback_kind_of_tokens}").format(
                    wanted=wanted, feedback_kind_of_tokens=_feedback.kind_of(tokens)
                )
            ) from None
        if arr.shape != (T,) or not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise _feedback._Refused(
                _("return {wanted}, got {np_asarray_tokens!r}").format(
                    wanted=wanted, np_asarray_tokens=np.asarray(tokens)
                )
            )
        if arr.min() < 0 or arr.max() >= V:
            raise _feedback._Refused(
                _("return {wanted}; got ids {arr_astype_np_int64!r} outside that range").format(
                    wanted=wanted, arr_astype_np_int64=arr.astype(np.int64)
                )
            )
        return arr.astype(np.int64), _feedback.number(calls)

    return convert


def _fits(counts: np.ndarray, law: np.ndarray) -> bool:
    law = np.asarray(law, dtype=float)
    return chi_square(counts, law / law.sum()).pvalue >= ALPHA


# --- Bug 1: the residual divides by zero when p = q ---------------------------------------------


def buggy_residual(p, q):
    pos = np.maximum(q - p, 0)  # the target's excess over the draft
    return pos / pos.sum()  # normalised to a law


def buggy_step_all_at_once(p, q, runs, rng, residual=buggy_residual):
    drafts = rng.choice(len(p), size=runs, p=p)  # every run's draft token
    fallback = rng.choice(len(q), size=runs, p=residual(p, q))  # and its replacement, drawn up front
    accept = rng.random(runs) < np.minimum(1, q[drafts] / p[drafts])
    return np.where(accept, drafts, fallback), ~accept


def _residual_cases() -> list[tuple[str, np.ndarray, np.ndarray]]:
    near = np.array([0.2, 0.3, 0.5])
    return [
        (_("a generic pair"), P, Q),
        ("p = q", np.array([0.7, 0.2, 0.1]), np.array([0.7, 0.2, 0.1])),
        (_("two one-hot laws on the same token (both models sure, at temperature 0)"), np.eye(4)[2], np.eye(4)[2]),
        (_("p = q up to rounding"), near, (near * 3) / 3),
        (_("disjoint supports"), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.5, 0.5])),
    ]


@_guard("laws.residual", "laws.rejected_mass", "tradeoff.optimal_rejection_law")
def check_residual_guard(student_residual: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Feedback:
    """Check a residual ``[q - p]_+`` that returns a law for every pair, ``p = q`` included."""
    rng = instances.fresh()
    same = instances.law(rng, int(rng.integers(3, 7)))
    drawn = [(_("a pair drawn for this check"), p, q) for p, q in instances.pairs(rng, 2)]
    drawn.append((_("p = q drawn for this check"), same, same.copy()))
    for name, p, q in _residual_cases() + drawn:
        with np.errstate(divide="ignore", invalid="ignore"):
            got, err = _student(student_residual, p, q, convert=_feedback.vector(p.shape))  # read inside the lock
        if err:
            return _failure(_("{err} (one probability per token) on {name}").format(err=err, name=name))
        where = _("On {name} (p = {p}, q = {q}) you returned {got}: ").format(
            name=name, p=fmt(p), q=fmt(q), got=fmt(got)
        )
        mass = np.maximum(q - p, 0).sum()
        if not np.all(np.isfinite(got)):
            return wrong(
                where
                + _(
                    "max(q - p, 0) has no mass, so normalising it is 0/0 = NaN, and drawing from it fails (the bug "
                    "of jaymody/speculative-sampling #5). Return a valid law when the mass is 0, e.g. q: it is never "
                    "used, because a rejection has probability TV(p, q) = 0."
                )
            )
        if np.any(got < 0) or not np.isclose(got.sum(), 1, atol=1e-9):
            if np.allclose(got, 0):
                return wrong(
                    where
                    + _(
                        "all zeros is not a law (replacing NaN by 0 leaves "
                        "nothing to draw from); return a law, e.g. q, "
                        "when max(q - p, 0) has no mass."
                    )
                )
            return wrong(
                where
                + _("not a law (sum {got_sum:.4f}, min {got_min:.3g}).").format(got_sum=got.sum(), got_min=got.min())
            )
        if mass > 1e-9 and not np.allclose(got, np.maximum(q - p, 0) / mass, atol=1e-9):
            return wrong(
                where
                + _("where the residual has mass it must be [q - p]+ = {residual_p_q}.").format(
                    residual_p_q=fmt(residual(p, q))
                )
            )
    counts, err = _all_at_once_counts(student_residual, np.array([0.7, 0.2, 0.1]), np.array([0.7, 0.2, 0.1]))
    if err:
        return _failure(err)
    return correct(
        _(
            "the residual is [q - p]+ where it has mass and a valid law otherwise, so a step that draws its "
            "fallback up front runs on p = q too, with output law q."
        )
    )


def _all_at_once_counts(student_residual: Callable, p: np.ndarray, q: np.ndarray) -> tuple[Any, str | None]:
    def guarded(a, b):
        out, err = _student(student_residual, a, b, convert=_feedback.vector(a.shape))
        if err:
            raise RuntimeError(err)
        return out

    try:
        tokens, _calls = buggy_step_all_at_once(p, q, 10_000, np.random.default_rng(0), residual=guarded)
    except Exception as e:  # noqa: BLE001 - the student's law may make the draw fail in any way
        return None, _("drawing the fallback tokens from your law failed ({type_e_name}: {e})").format(
            type_e_name=type(e).__name__, e=e
        )
    counts = np.bincount(tokens, minlength=len(q))
    if not _fits(counts, q):
        return None, _("on p = q the output frequencies {counts_counts_sum} do not follow q = {q}").format(
            counts_counts_sum=fmt(counts / counts.sum()), q=fmt(q)
        )
    return counts, None


# --- Bug 2: the draft token is the draft's argmax, not a draw from p ------------------------------


def buggy_step_argmax(p, q, rng):
    x = int(np.argmax(p))  # the draft proposes its most likely token
    if rng.random() < min(1.0, q[x] / p[x]):
        return x, False
    return int(rng.choice(len(q), p=residual(p, q))), True


def _law_of_proposal(r: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Output law when the draft token is drawn from ``r`` but tested with ``min(1, q/p)`` and ``[q - p]_+``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        b = np.where(p > 0, np.minimum(1, q / p), 0.0)
    kept = r * b
    return kept + (1 - kept.sum()) * residual(p, q)


@_guard(*_feedback.DECODERS)
def check_draft_sampling(step: Callable[..., Any], runs: int = 4000, seed: int = 0) -> Feedback:
    """Check ``step(p, q, rng) -> (token, rejected)``: output law q and rejection rate TV(p, q)."""
    got, err = _step_counts(step, (P, Q), len(P), runs, seed)
    if err:
        return _failure(err)
    counts, rejected = got
    freq = fmt(counts / runs)
    if not _fits(counts, Q):
        argmax = _law_of_proposal(np.eye(len(P))[np.argmax(P)], P, Q)
        top2 = np.where(P >= np.sort(P)[-2], P, 0)
        if _fits(counts, argmax):
            return wrong(
                _(
                    "your output frequencies {freq} follow {argmax}, not q = {Q}: the draft token is still the "
                    "argmax of p while the ratio uses p (jaymody/speculative-sampling #3). Draw it from p, or test "
                    "the argmax against the one-hot law it was drawn from."
                ).format(freq=freq, argmax=fmt(argmax), Q=fmt(Q))
            )
        if _fits(counts, _law_of_proposal(top2 / top2.sum(), P, Q)):
            return wrong(
                _(
                    "your output frequencies {freq} do not follow q = {Q}: the token is drawn from a truncated "
                    "(top-k) draft law but tested with the full p (huggingface/transformers #47932). Use the law you "
                    "drew from in the ratio and in the residual."
                ).format(freq=freq, Q=fmt(Q))
            )
        return wrong(
            _(
                "your output frequencies {freq} do not follow q = {Q} (chi-square test): the ratio min(1, q/p) "
                "and the residual are exact only for a token drawn from p."
            ).format(freq=freq, Q=fmt(Q))
        )
    rate, t = rejected.mean(), float(tv(P, Q))
    one_hot = float(tv(np.eye(len(P))[np.argmax(P)], Q))
    if abs(rate - one_hot) <= Z * np.sqrt(one_hot * (1 - one_hot) / runs):
        return correct(
            _(
                "output frequencies {freq} match q: the argmax tested against its own one-hot law is unbiased, "
                "but it rejects {rate:.3f} of the time, TV(one-hot, q) = {one_hot:.3f}, against TV(p, q) = "
                "{t:.3f} for a token drawn from p (Theorem 1 with the one-hot law as the draft)."
            ).format(freq=freq, rate=rate, one_hot=one_hot, t=t)
        )
    se = np.sqrt(t * (1 - t) / runs)
    if abs(rate - t) > Z * se:
        return wrong(
            _(
                "the output law is right, but you report a rejection rate {rate:.3f}; Theorem 1 says one step "
                "rejects with probability TV(p, q) = {t:.3f} when the token is drawn from p."
            ).format(rate=rate, t=t)
        )
    return correct(
        _("output frequencies {freq} match q, and the rejection rate {rate:.3f} matches TV(p, q) = {t:.3f}.").format(
            freq=freq, rate=rate, t=t
        )
    )


# --- Bug 3: temperature applied to the draft's logits only ---------------------------------------


def buggy_step_temperature(draft_logits, target_logits, temperature, rng):
    p = softmax(draft_logits / temperature)  # the draft samples at the requested temperature
    q = softmax(target_logits)  # the target's law, straight from its logits
    x = int(rng.choice(len(p), p=p))
    if rng.random() < min(1.0, q[x] / p[x]):
        return x, False
    return int(rng.choice(len(q), p=residual(p, q))), True


#: Logits of the temperature check (draft, target).
LOGITS = (np.array([2.0, 1.0, 0.5, 0.0, -1.0]), np.array([0.5, 1.5, 1.0, 0.8, -0.5]))


@_guard(*_feedback.DECODERS, "llm.verify.probs_from_logits")
def check_temperature(step: Callable[..., Any], runs: int = 4000, seed: int = 0) -> Feedback:
    """Check ``step(draft_logits, target_logits, temperature, rng)``: output law ``softmax(target_logits / T)``."""
    d, t = LOGITS
    for k, T in enumerate((0.5, 2.0)):
        got, err = _step_counts(step, (d, t, T), len(d), runs, seed + k)
        if err:
            return _failure(_("{err} (temperature τ = {tau})").format(err=err, tau=T))
        counts, rejected = got
        want = softmax(t / T)
        freq = fmt(counts / runs)
        if not _fits(counts, want):
            if _fits(counts, softmax(t)):
                return wrong(
                    _(
                        "at temperature τ = {tau} your output frequencies {freq} follow "
                        "softmax(target_logits) = {softmax_t}, "
                        "the target at temperature 1: unbiased, for the wrong target. Apply the temperature to both "
                        "models' logits (jaymody/speculative-sampling #9)."
                    ).format(tau=T, freq=freq, softmax_t=fmt(softmax(t)))
                )
            return wrong(
                _(
                    "at temperature τ = {tau} your output frequencies {freq} do not follow "
                    "softmax(target_logits / τ) = {want}."
                ).format(tau=T, freq=freq, want=fmt(want))
            )
        pT = softmax(d / T)
        rate, r = rejected.mean(), float(tv(pT, want))
        if abs(rate - r) > Z * np.sqrt(r * (1 - r) / runs):
            return wrong(
                _(
                    "at temperature τ = {tau} the output law is right, but the rejection rate {rate:.3f} is not "
                    "TV(p_τ, q_τ) = {r:.3f}: does the draft sample at the same temperature as its ratio?"
                ).format(tau=T, rate=rate, r=r)
            )
    return correct(
        _(
            "both laws are taken at the same temperature: the output follows the tempered target at τ = 0.5 "
            "and τ = 2, and each step rejects with probability TV(p_τ, q_τ)."
        )
    )


# --- Bug 4: u <= b accepts a token of target probability 0 when u = 0 ----------------------------


def buggy_accept(p, q, x, u):
    return u <= min(1.0, q[x] / p[x])  # accept the draft token x with probability min(1, q/p)


def grid_acceptance(accept: Callable[..., Any], p: np.ndarray, q: np.ndarray, N: int = 64) -> tuple[Any, str | None]:
    """Accepted mass per token with ``u`` uniform on the grid ``0, 1/N, ..., (N-1)/N`` (a float RNG's values).

    Returns integer counts ``sum over u of [accept(p, q, x, u)] * (p(x) in units of 1/W)`` or an error message;
    with ``W`` chosen so that ``p * W`` are whole numbers (the lab's laws have two decimals).
    """
    W = 100
    counts = np.zeros(len(p), dtype=np.int64)
    grid = [(p, q, int(x), k / N) for x in np.flatnonzero(p > 0) for k in range(N)]
    outs, err = _repeat(accept, grid, convert=_verdict)
    if err:
        return None, err
    for (_p, _q, x, _u), out in zip(grid, outs, strict=True):
        if out:
            counts[x] += int(round(p[x] * W))
    return counts, None


def _verdict(out: Any) -> bool:
    """An acceptance test's answer as a plain ``bool``: only ``True``/``False`` (Python's or numpy's) pass."""
    if type(out) not in (bool, np.bool_):  # the type itself: an object may claim to be a bool through __class__
        if type(out) in (int, float, np.int64, np.float64):
            got = _("the number {out!r}").format(out=out)
        else:
            got = (
                _feedback.kind_of(out)
                if type(out).__module__ == "builtins"
                else _("a {type_name}").format(type_name=type(out).__name__)
            )
        raise _feedback._Refused(_("return True (accept) or False (reject), got {got}").format(got=got))
    return bool(out)


def _around(ratio: float) -> tuple[float, float]:
    b = min(1.0, ratio)
    return b / 2, (1 + b) / 2


@_guard("laws.acceptance", "laws.over_accept", "tradeoff.over_accept")
def check_accept(student_accept: Callable[..., Any]) -> Feedback:
    """Check ``accept(p, q, x, u)``: ``u < min(1, q(x)/p(x))``; never a token with ``q(x) = 0``, even at ``u = 0``."""
    p, q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.5, 0.3, 0.2, 0.0])
    tests = [(p, q, x, u) for x in range(len(p)) for u in (0.0, 0.25, 0.5, 0.75, 0.999, *_around(q[x] / p[x]))]
    rng = instances.fresh()  # and a pair drawn now, with a token the target cannot emit
    V = int(rng.integers(3, 7))
    p2, q2 = instances.law(rng, V, positive=True), instances.law(rng, V, zeros=1)
    drawn_u = [int(k) / 1000 for k in rng.integers(0, 1000, 3)]
    tests += [(p2, q2, x, u) for x in range(V) for u in (0.0, *drawn_u, *_around(q2[x] / p2[x]))]
    outs, err = _repeat(student_accept, tests, convert=_verdict)
    if err:
        return _failure(err)
    for (pt, qt, x, u), out in zip(tests, outs, strict=True):
        b = min(1.0, qt[x] / pt[x])
        if b == 0 and out:
            return wrong(
                _("at u = {u:.3f} you accept token {x} of p = {pt}, whose target probability is 0 in q = {qt}").format(
                    u=u, x=x, pt=fmt(pt), qt=fmt(qt)
                )
                + (
                    _(
                        ": `u <= b` is true for u = b = 0 (sglang #35771). The "
                        "output then has mass where the target has "
                        "none; accept on u < b, false for every u when b = 0."
                    )
                    if u == 0
                    else "."
                )
            )
        if u < b and not out:
            return wrong(
                _("token {x} (p = {pt}, q = {qt}) must be accepted at u = {u:.3f} < min(1, q/p) = {b:.3f}.").format(
                    x=x, pt=fmt(pt), qt=fmt(qt), u=u, b=b
                )
            )
        if u > b and out:
            return wrong(
                _("token {x} (p = {pt}, q = {qt}) must be rejected at u = {u:.3f} > min(1, q/p) = {b:.3f}.").format(
                    x=x, pt=fmt(pt), qt=fmt(qt), u=u, b=b
                )
            )
    counts, err = grid_acceptance(student_accept, p, q)
    if err:
        return _failure(err)
    if chi_square(counts, np.minimum(p, q) / np.minimum(p, q).sum()).pvalue == 0:
        return wrong(_("with u on a grid of 64 values, a token of target probability 0 is accepted."))
    return correct(_("the test is u < min(1, q/p): a token the target cannot emit is never accepted, whatever u."))


# --- Bug 5: the bonus token after a fully accepted round -----------------------------------------


def buggy_speculative_k(draft, target, K, rng):
    T, V = target.T, target.V
    tokens, calls = [], 0
    while len(tokens) < T:
        n0 = len(tokens)
        prev = tokens[-1] if tokens else None
        drafts = []
        for n in range(n0, min(n0 + K, T)):  # draft up to K tokens from p
            prev = int(rng.choice(V, p=draft.conditional(n, prev)))
            drafts.append(prev)
        calls += 1  # one target call scores them all (and the position after them)
        prev = tokens[-1] if tokens else None
        for n, x in enumerate(drafts, start=n0):
            p_n, q_n = draft.conditional(n, prev), target.conditional(n, prev)
            if rng.random() < min(1.0, q_n[x] / p_n[x]):
                tokens.append(x)
                prev = x
            else:
                tokens.append(int(rng.choice(V, p=residual(p_n, q_n))))
                break
        else:  # every draft accepted: one more token, for free
            n = len(tokens)
            if n < T:
                tokens.append(int(rng.choice(V, p=draft.conditional(n, prev))))
    return np.array(tokens), calls


def bonus_pair() -> tuple[MarkovChain, MarkovChain, int]:
    """The chains ``(draft, target)`` and lookahead ``K`` of the bonus-token check: V = 3 tokens, T = 4 positions."""
    q_init = np.array([0.2, 0.5, 0.3])
    q_trans = np.array([[[0.6, 0.3, 0.1], [0.1, 0.3, 0.6], [0.3, 0.4, 0.3]]] * 3)
    p_init = np.array([0.3, 0.4, 0.3])
    p_trans = np.array([[[0.3, 0.5, 0.2], [0.3, 0.3, 0.4], [0.5, 0.2, 0.3]]] * 3)
    return MarkovChain(p_init, p_trans), MarkovChain(q_init, q_trans), 2


def decode_runs(
    fn: Callable[..., Any], draft: MarkovChain, target: MarkovChain, K: int, runs: int, seed: int = 0
) -> tuple[Any, str | None]:
    """``runs`` runs of ``fn(draft, target, K, rng) -> (tokens, calls)``: ``(sequence counts, calls)`` or an error."""
    gen = np.random.default_rng(seed)
    outs, err = _repeat(fn, [(draft, target, K, gen)] * runs, convert=_tokens_and_calls(target.T, target.V))
    if err:
        return None, err
    seqs, calls = np.empty((runs, target.T), dtype=np.int64), np.empty(runs)
    for i, (tokens, c) in enumerate(outs):
        seqs[i], calls[i] = tokens, c
    return (np.bincount(sequence_index(seqs, target.V), minlength=target.V**target.T), calls), None


@_guard(*_feedback.DECODERS)
def check_bonus(fn: Callable[..., Any], runs: int = 4000, seed: int = 0) -> Feedback:
    """Check a decoder with lookahead K: sequence law of the target (chi-square) and Theorem 1's exact calls."""
    draft, target, K = bonus_pair()
    got, err = decode_runs(fn, draft, target, K, runs, seed)
    if err:
        return _failure(err)
    counts, calls = got
    if not _fits(counts, sequence_law(target)):
        return wrong(
            _(
                "the sequences do not follow the target's law (chi-square test over all 81 sequences). When "
                "every draft is accepted, the next token is a bonus drawn from the target's law q at the next "
                "position, which the target's call already computed; drawing it from the draft p biases every "
                "position after a fully accepted round."
            )
        )
    want = expected_oracle_calls_k(draft, target, K)
    mean, se = calls.mean(), calls.std(ddof=1) / np.sqrt(runs)
    if abs(mean - want) > Z * max(se, 1e-12):
        if mean > want:
            return wrong(
                _(
                    "the output law is right, but you make {mean:.3f} target calls per run on average, against the "
                    "exact {want:.3f} of Chapter 7's count with lookahead K = {K}: a fully accepted round must also "
                    "emit its bonus token (dropping it wastes a call, as in ohdearquant/lattice #509)."
                ).format(mean=mean, want=want, K=K)
            )
        return wrong(
            _(
                "you count {mean:.3f} target calls per run, fewer than the exact {want:.3f}: count one call per round."
            ).format(mean=mean, want=want)
        )
    return correct(
        _(
            "the sequences follow the target, and {mean:.3f} ± {se:.3f} calls per run match Chapter 7's "
            "exact {want:.3f} at K = {K}."
        ).format(mean=mean, se=se, want=want, K=K)
    )


# --- The last section: one slip, not named --------------------------------------------------------


def mystery_speculative_k(draft, target, K, rng):
    T, V = target.T, target.V
    tokens, calls = [], 0
    while len(tokens) < T:
        n0 = len(tokens)
        prevs, drafts = [tokens[-1] if tokens else None], []
        for n in range(n0, min(n0 + K, T)):  # draft up to K tokens from p
            drafts.append(int(rng.choice(V, p=draft.conditional(n, prevs[-1]))))
            prevs.append(drafts[-1])
        calls += 1  # one target call scores them all (and the position after them)
        at = list(zip(range(n0, n0 + len(drafts)), prevs[:-1], drafts, strict=True))
        p_x = np.array([draft.conditional(n, u)[x] for n, u, x in at])
        q_x = np.array([target.conditional(n, u)[x] for n, u, x in at])
        u = rng.random(len(drafts))
        failed = u >= np.maximum(1.0, q_x / p_x)  # a draft fails its test where u is not below its ratio
        n_matches = int((failed.cumsum() < 1).sum())  # the drafts before the first failure
        tokens.extend(drafts[:n_matches])
        n = len(tokens)
        if n_matches < len(drafts):  # the first failure: draw from the residual instead
            tokens.append(int(rng.choice(V, p=residual(draft.conditional(n, prevs[n_matches]),
                                                       target.conditional(n, prevs[n_matches])))))
        elif n < T:  # every draft passed: the bonus token, from the target
            tokens.append(int(rng.choice(V, p=target.conditional(n, tokens[-1]))))
    return np.array(tokens), calls


@_guard(*_feedback.DECODERS)
def check_mystery(fn: Callable[..., Any], runs: int = 4000, seed: int = 0) -> Feedback:
    """Check the last section's decoder: the target's sequence law (chi-square) and Chapter 7's exact calls."""
    draft, target, K = bonus_pair()
    got, err = decode_runs(fn, draft, target, K, runs, seed)
    if err:
        return _failure(err)
    counts, calls = got
    want = expected_oracle_calls_k(draft, target, K)
    mean, se = calls.mean(), calls.std(ddof=1) / np.sqrt(runs)
    law_ok, calls_ok = _fits(counts, sequence_law(target)), abs(mean - want) <= Z * max(se, 1e-12)
    if law_ok and calls_ok:
        return correct(
            _(
                "the sequences follow the target, and {mean:.3f} ± {se:.3f} calls per run match Chapter 7's "
                "exact {want:.3f} at K = {K}."
            ).format(mean=mean, se=se, want=want, K=K)
        )
    if mean < want:
        return wrong(
            _(
                "{mean:.3f} target calls per run, fewer than the exact {want:.3f} of Chapter 7's count at K = {K}"
            ).format(mean=mean, want=want, K=K)
            + ("" if law_ok else _(", and the sequences do not follow the target"))
            + _(": drafts pass that should fail.")
        )
    if not law_ok:
        return wrong(
            _(
                "the sequences do not follow the target's law (chi-square test over all 81 sequences): a draft "
                "must pass with probability min(1, q/p), a failure be replaced from the residual, and a round "
                "that keeps every draft end with a bonus token from q."
            )
        )
    return wrong(
        _(
            "the output law is right, but {mean:.3f} target calls per run differ from the exact {want:.3f} "
            "of Chapter 7's count at K = {K}: count one call per round, and end each round as the algorithm "
            "does."
        ).format(mean=mean, want=want, K=K)
    )


# --- Bug 6: the KV cache after a rejection (on the offline pair) ---------------------------------


def buggy_rollback(cache, keep):
    cache.reset()  # forget the rejected drafts (and, with them, everything else)


def greedy_speculative(
    draft: Any, target: Any, prompt: Any, n_new: int, K: int, rollback: Callable[[Any, int], Any]
) -> tuple[list[int], int, int]:
    """Greedy speculative decoding with KV caches: ``(new tokens, accepted drafts, drafted tokens)``.

    The draft proposes its argmax ``K`` times; the target scores them in one call and
    keeps the prefix that matches its own argmax, then emits its own token. The loop
    remembers how many tokens each cache holds and feeds only the rest, so after each
    round ``rollback(cache, keep)`` must leave exactly the first ``keep`` tokens in it.
    """
    from ..llm import _hf

    seq = [int(t) for t in prompt]
    n0 = len(seq)
    models = {"draft": draft, "target": target}
    caches = {name: _hf.new_cache(m) for name, m in models.items()}
    held = {"draft": 0, "target": 0}  # tokens of seq each cache holds
    accepted = drafted = 0
    with torch.inference_mode():
        while len(seq) - n0 < n_new:
            k = min(K, n_new - (len(seq) - n0))
            drafts: list[int] = []
            for _i in range(k):
                fed = (seq + drafts)[held["draft"] :]
                logits = _hf.forward(draft, torch.tensor(fed), caches["draft"])
                held["draft"] += len(fed)
                drafts.append(int(logits[-1].argmax()))
            fed = (seq + drafts)[held["target"] :]
            logits = _hf.forward(target, torch.tensor(fed), caches["target"])[-(k + 1) :]
            held["target"] += len(fed)
            choice = logits.argmax(-1).tolist()  # the target's greedy token after each drafted prefix
            n = 0
            while n < k and drafts[n] == choice[n]:
                n += 1
            seq += drafts[:n] + [choice[n]]
            accepted, drafted = accepted + n, drafted + k
            for name in caches:  # both caches must now hold at most seq[:-1]
                held[name] = min(held[name], len(seq) - 1)
                rollback(caches[name], held[name])
    return seq[n0 : n0 + n_new], accepted, drafted


def _keys(cache: Any) -> list[Any]:
    """The key tensors of every layer of a ``DynamicCache`` (transformers 5: ``layers``; 4: ``key_cache``)."""
    if hasattr(cache, "layers"):
        return [layer.keys for layer in cache.layers]
    return list(cache.key_cache)


def _pair() -> Any:
    from ..llm import load_pair

    return load_pair(hub=False, progress=False)


@_guard()
def check_rollback(
    rollback: Callable[[Any, int], Any],
    pair: Any = None,
    prompt: str = "def __init__(self, ",
    n_new: int = 32,
    K: int = 4,
) -> Feedback:
    """Check ``rollback(cache, keep)`` on a real cache, then by the greedy-equality test on the offline pair."""
    from ..llm import _hf, autoregressive_generate

    try:
        pair = pair if pair is not None else _pair()
    except Exception as e:  # noqa: BLE001 - report, never raise
        return wrong(
            _("could not load the offline pair ({type_e_name}: {e}).").format(type_e_name=type(e).__name__, e=e)
        )
    ids = torch.as_tensor(pair.encode(prompt))
    cache = _hf.new_cache(pair.target)
    with torch.inference_mode():
        _hf.forward(pair.target, ids, cache)
    n, keep = len(ids), len(ids) - 3
    before = [k[..., :keep, :].clone() for k in _keys(cache)]
    # in place: the cache itself goes to the student's function (a copy would hide what it did)
    _done, err = _student(lambda: (rollback(cache, keep), True)[1])
    if err:
        return _failure(err)
    length = int(cache.get_seq_length())
    if length != keep:
        if length == 0:
            return wrong(
                _(
                    "after rollback(cache, {keep}) the cache is empty: a reset, not a rollback. The loop then feeds "
                    "only the new tokens, so the models see almost no context: drafts are rejected that should not "
                    "be and the output leaves the target's (the 1/k acceptance of paiml/aprender #2014)."
                ).format(keep=keep)
            )
        if length == n:
            return wrong(
                _(
                    "the cache still holds all {n} tokens: the rejected drafts stay in it and the next round attends "
                    "to them (the no-op trim of ml-explore/mlx-lm #1109)."
                ).format(n=n)
            )
        if length == n - keep:
            return wrong(
                _(
                    "the cache holds {length} tokens, not {keep}: crop(-m) removes m tokens from the end; remove the "
                    "{n_keep} extra ones."
                ).format(length=length, keep=keep, n_keep=n - keep)
            )
        return wrong(
            _("rollback(cache, {keep}) left {length} tokens in a cache of {n}; it must keep exactly {keep}.").format(
                keep=keep, length=length, n=n
            )
        )
    if not all(torch.equal(k, b) for k, b in zip(_keys(cache), before, strict=True)):
        return wrong(
            _(
                "the cache holds {keep} tokens but not the first {keep}: keep the oldest entries, drop the newest."
            ).format(keep=keep)
        )
    try:
        got, acc, drafted = greedy_speculative(pair.draft, pair.target, ids, n_new, K, rollback)
    except Exception as e:  # noqa: BLE001 - a student's rollback may break the loop in any way
        return _failure(
            _("the speculative loop with your rollback failed ({type_e_name}: {e})").format(
                type_e_name=type(e).__name__, e=e
            )
        )
    greedy = autoregressive_generate(pair.target, ids, n_new, temperature=0).tokens.tolist()
    if got != greedy:
        first = next(i for i, (a, b) in enumerate(zip(got, greedy, strict=True)) if a != b)
        return wrong(
            _(
                "with your rollback the greedy speculative output leaves the target's greedy output at new token "
                "{first}: the caches do not hold what the loop thinks they hold."
            ).format(first=first)
        )
    return correct(
        _(
            "the greedy speculative output equals the target's greedy output ({n_new} tokens); {acc} of "
            "{drafted} drafts accepted."
        ).format(n_new=n_new, acc=acc, drafted=drafted)
    )


# --- Bug 7: the draft samples in bfloat16, the ratio uses float32 --------------------------------


def buggy_sampling_law(logits, temperature):
    return torch.softmax(logits / temperature, dim=-1)  # the law the draft's token is drawn from


def ratio_law(logits: Any, temperature: float) -> Any:
    """The draft law the acceptance ratio and the residual use: ``softmax(logits / T)`` in float32."""
    return torch.softmax(logits.float() / temperature, dim=-1)


def one_position_counts(
    sampling_law: Callable[[Any, float], Any],
    draft_logits: Any,
    target_logits: Any,
    temperature: float,
    n: int,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` speculative steps at one position, vectorised: ``(output counts, exact target law q)``.

    The draft token is drawn from ``sampling_law(draft_logits, T)``; the ratio ``min(1, q/p)``
    and the residual ``[q - p]_+`` use ``ratio_law`` (float32) for both models.
    """
    g = torch.Generator().manual_seed(seed)
    r = sampling_law(draft_logits, temperature).float()
    p, q = ratio_law(draft_logits, temperature), ratio_law(target_logits, temperature)
    x = torch.multinomial(r, n, replacement=True, generator=g)
    accept = torch.rand(n, generator=g) < torch.clamp(q / p, max=1)[x]
    y = torch.multinomial(torch.clamp(q - p, min=0), n, replacement=True, generator=g)
    counts = torch.where(accept, x, y).bincount(minlength=len(q)).numpy()
    law = q.double().numpy()
    return counts, law / law.sum()


def bf16_logits(seed: int = 0, V: int = 2048, scale: float = 2.0) -> Any:
    """Logits as a bfloat16 model outputs them: Gaussian, rounded to bfloat16."""
    g = torch.Generator().manual_seed(seed)
    return (scale * torch.randn(V, generator=g)).bfloat16()


def _plain_law(x: Any) -> Any:
    """The student's law as a plain float64 tensor, read inside the lock (a tensor subclass is read there too)."""
    try:
        arr = np.array(torch.as_tensor(x).detach().double().cpu().numpy(), dtype=np.float64)
    except (TypeError, ValueError, RuntimeError):
        raise _feedback._Refused(
            _("return the law as a tensor, got {feedback_kind_of_x}").format(feedback_kind_of_x=_feedback.kind_of(x))
        ) from None
    return torch.from_numpy(arr)


@_guard("llm.verify.probs_from_logits")
def check_sampling_law(sampling_law: Callable[[Any, float], Any]) -> Feedback:
    """Check ``sampling_law(logits, T)``: the law the draft samples from equals the ratio's float32 law."""
    for seed, T in ((0, 0.3), (1, 1.0)):
        logits = bf16_logits(seed)
        got, err = _student(sampling_law, logits.clone(), T, convert=_plain_law)
        if err:
            return _failure(_("{err} (temperature τ = {tau})").format(err=err, tau=T))
        want = ratio_law(logits, T).double()
        if got.shape != want.shape:
            return wrong(
                _("return one probability per token (shape {tuple_want_shape}), got {tuple_got_shape}.").format(
                    tuple_want_shape=tuple(want.shape), tuple_got_shape=tuple(got.shape)
                )
            )
        gap = float((got - want).abs().sum() / 2)
        if gap <= 1e-6:
            continue
        soft_bf16 = torch.softmax(logits / T, dim=-1).double()
        div_bf16 = torch.softmax((logits / T).float(), dim=-1).double()
        where = _("at temperature τ = {tau} your law is {gap:.2e} from the float32 law of the ratio in TV: ").format(
            tau=T, gap=gap
        )
        if (
            float((got - soft_bf16).abs().max()) < 1e-7
            or float((got / got.sum() - soft_bf16 / soft_bf16.sum()).abs().max()) < 1e-7
        ):
            return wrong(
                where
                + _(
                    "the softmax is still computed in bfloat16 (casting its result to float32 keeps the rounding). "
                    "Cast the logits to float32 first (deepseek-ai/DeepSpec #31)."
                )
            )
        if float((got - div_bf16).abs().max()) < 1e-7:
            return wrong(
                where
                + _(
                    "the division by the temperature is done in bfloat16 and rounds the scaled logits; cast to "
                    "float32 before dividing."
                )
            )
        return wrong(where + _("the token must be drawn from the same law as the one in the ratio and the residual."))
    return correct(_("the draft samples from the float32 law its ratio uses: the output law is the target's."))


# --- Bug 8: the draft's law, handed to the verifier ---------------------------------------------


def buggy_draft(logits, rng):
    probs = softmax(logits)  # the draft's law p
    probs /= rng.exponential(size=len(probs))  # the exponential race: the largest p(x) / E_x is a draw from p
    token = int(np.argmax(probs))
    return token, probs  # the drafted token and the law the verifier tests it with


#: The draft's logits and the target's law of the section on the draft's law (the draft's law is softmax of them).
RACE = (LOGITS[0], Q)


def verify_drafted(token: int, law: np.ndarray | None, q: np.ndarray, u: float, v: float) -> tuple[int, bool]:
    """One verification of a drafted ``token`` given the draft ``law`` handed over: ``(output token, rejected)``.

    Accepts when ``u < min(1, q(x) / law(x))``; after a rejection draws from ``[q - law]_+`` by inverting its
    cumulative sum at ``v``. With ``law = None`` it does what serving engines do for drafts that come
    without probabilities (n-gram drafts): it treats the token as certain, the one-hot law ``delta_x``, so it
    accepts when ``u < q(x)`` and draws from ``q`` with ``x`` removed.
    """
    x = int(token)
    if law is None:
        law = np.eye(len(q))[x]
    b = min(1.0, q[x] / law[x]) if law[x] > 0 else 0.0
    if u < b:
        return x, False
    fallback = residual(law, q, check=False)
    return int(min(np.searchsorted(np.cumsum(fallback), v * fallback.sum(), side="right"), len(q) - 1)), True


def _token_and_law(V: int) -> Callable[[Any], tuple[int, np.ndarray | None]]:
    """A draft's ``(token, law)``: an integer id in ``0..V-1`` and ``None`` or ``V`` nonnegative finite numbers."""
    as_law = _feedback.vector(V)

    def convert(out: Any) -> tuple[int, np.ndarray | None]:
        try:
            token, law = out
        except (TypeError, ValueError):
            raise _feedback._Refused(
                _("return a pair (token, probs), got {kind}").format(kind=_feedback.kind_of(out))
            ) from None
        try:
            token = _feedback.integer(token)
        except _feedback._Refused as e:
            raise _feedback._Refused(_("the token must be an integer id: {e}").format(e=e)) from None
        if not 0 <= token < V:
            raise _feedback._Refused(
                _("token {token} is outside the vocabulary 0..{V_1}").format(token=token, V_1=V - 1)
            )
        if law is None:
            return token, None
        law = as_law(law)
        if not np.all(np.isfinite(law)) or np.any(law < 0):
            raise _feedback._Refused(
                _("the law you return must hold nonnegative numbers, got {law}").format(law=fmt(law))
            )
        return token, law

    return convert


def verified_runs(
    draft: Callable[..., Any], logits: np.ndarray, q: np.ndarray, runs: int, seed: int = 0
) -> tuple[Any, str | None]:
    """``runs`` drafts ``draft(logits, rng) -> (token, probs)``, each verified by ``verify_drafted``.

    Returns ``((output counts, rejection flags, drafted tokens, laws handed over), None)`` or an error message.
    The draft's generator is seeded with ``seed``; the verifier's uniform numbers come from another stream.
    """
    V = len(q)
    gen = np.random.default_rng(seed)
    outs, err = _repeat(draft, [(logits, gen)] * runs, convert=_token_and_law(V))
    if err:
        return None, err
    uv = np.random.default_rng([seed, 1]).random((runs, 2))
    tokens, rejected = np.empty(runs, dtype=int), np.empty(runs, dtype=bool)
    for i, ((x, law), (u, v)) in enumerate(zip(outs, uv, strict=True)):
        tokens[i], rejected[i] = verify_drafted(x, law, q, u, v)
    drafted = np.array([x for x, _law in outs])
    return (np.bincount(tokens, minlength=V), rejected, drafted, [law for _x, law in outs]), None


#: The drawn pairs of check_draft_probs have 3 to this many tokens.
RACE_MAX_V = 6


def _race_cases(rng: np.random.Generator) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The lab's pair, then pairs drawn now: logits ``log p`` of a law ``p`` with two decimals, and a target ``q``."""
    cases = [(_("the lab's logits"), RACE[0], RACE[1])]
    while len(cases) < 1 + instances.DRAWN:
        V = int(rng.integers(3, RACE_MAX_V + 1))
        p, q = instances.law(rng, V, positive=True), instances.law(rng, V)
        if not np.array_equal(p, q):
            cases.append((_("logits drawn for this check, log p"), np.log(p), q))
    return cases


@_guard()
def check_draft_probs(draft: Callable[..., Any], runs: int = 4000, seed: int = 0) -> Feedback:
    """Check ``draft(logits, rng) -> (token, probs)``: the token a draw from ``p = softmax(logits)``, ``probs = p``.

    On the lab's logits and on pairs drawn now, every law handed over must be ``p``; the verified output
    must follow ``q`` (chi-square on the lab's pair; every frequency within ``Z`` standard errors on a drawn
    one) and reject with probability ``TV(p, q)`` (Theorem 1).
    """
    for k, (name, logits, q) in enumerate(_race_cases(instances.fresh())):
        got, err = verified_runs(draft, logits, q, runs, seed + k)
        if err:
            return _failure(_("{err} (on {name})").format(err=err, name=name))
        counts, rejected, drafted, laws = got
        p = softmax(logits)
        freq, rate, t = fmt(counts / runs), float(rejected.mean()), float(tv(p, q))
        where = _("On {name} (p = {p}, q = {q}): ").format(name=name, p=fmt(p), q=fmt(q))
        tools = _(
            "the output frequencies are {freq} and {rate:.3f} of the steps reject, against TV(p, q) = {t:.3f}"
        ).format(freq=freq, rate=rate, t=t)
        one_hot = [law is None or np.array_equal(law, np.eye(len(q))[x]) for x, law in zip(drafted, laws, strict=True)]
        if all(one_hot):
            return wrong(
                where
                + _(
                    "you hand the verifier no law of the draft (or the one-hot law of the token), so it treats "
                    "each drafted token as certain, as for n-gram drafts. The output still follows q, but {rate:.3f} "
                    "of the steps reject, near 1 - sum_x p(x) q(x) = {overlap_miss:.3f}, where Theorem 1 gives "
                    "TV(p, q) = {t:.3f} for the law the token was drawn from (vllm #40149). Return the draft's law p."
                ).format(rate=rate, overlap_miss=1 - float(p @ q), t=t)
            )
        bad = next((i for i, law in enumerate(laws) if law is None or not np.allclose(law, p, atol=1e-9)), None)
        if bad is not None:
            x, law = int(drafted[bad]), laws[bad]
            if law is not None and law.sum() > 1 + 1e-6 and int(np.argmax(law)) == x:
                return wrong(
                    where
                    + _(
                        "the law you hand the verifier is not p: it sums to {law_sum:.3g}, and its largest entry, "
                        "{law_x:.3g}, is at the token you drew, x = {x}, where p(x) = {p_x:.3f}. These are the "
                        "race's scores p/E, written over p by the division in place (vllm PR #16952): the verifier "
                        "tests x with min(1, q(x)/score(x)) and draws from max(q - score, 0), so {tools}. Divide a "
                        "copy, and return p."
                    ).format(law_sum=law.sum(), law_x=law[x], x=x, p_x=p[x], tools=tools)
                )
            return wrong(
                where
                + _(
                    "the law you hand the verifier with token {x} is {law}, not the law p it was drawn from: the "
                    "ratio min(1, q/p) and the residual [q - p]+ are exact only for p, and {tools}."
                ).format(x=x, law=fmt(law), tools=tools)
            )
        if k == 0:
            fits = _fits(counts, q)
        else:
            fits = bool(np.all(np.abs(counts / runs - q) <= Z * np.sqrt(q * (1 - q) / runs)))
        if not fits:
            return wrong(
                where
                + _(
                    "you hand over p, but {tools}, and the output does not follow q: the token must be a draw from p "
                    "(the argmax of p, as in section 2, is not one)."
                ).format(tools=tools)
            )
        if abs(rate - t) > Z * np.sqrt(t * (1 - t) / runs):
            return wrong(
                where
                + _("{tools}: Theorem 1 says a token drawn from p and tested with p rejects that often.").format(
                    tools=tools
                )
            )
    return correct(
        _(
            "the verifier gets the law p each token was drawn from: on the lab's logits and on {drawn} pairs drawn "
            "now the output follows q and rejects at the rate TV(p, q) of Theorem 1 (the last: {rate:.3f} against "
            "{t:.3f})."
        ).format(drawn=instances.DRAWN, rate=rate, t=t)
    )


# Where the package has the labs' lock, a check module's names cannot be reassigned from a notebook.
_lock = getattr(_feedback, "_lock", None)
if _lock is not None and hasattr(_lock, "make_read_only"):
    _lock.make_read_only(__name__)
