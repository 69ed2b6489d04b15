"""Section 8, the draft's token and its law: the verifier tests ``x`` with the law ``p`` it was drawn from;
then the output follows ``q`` and a round rejects with probability ``TV(p, q)`` (Theorem 1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._i18n import _
from ...laws import residual, tv
from .. import feedback as _feedback
from .. import instances
from ..feedback import Feedback, correct, fmt, wrong
from .common import Q, Z, _failure, _fits, _guard, _repeat, softmax
from .temperature import LOGITS


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


def _race_scores(law: np.ndarray | None, x: int) -> bool:
    """Whether ``law``, handed over with token ``x``, looks like the race's scores p/E: more than 1 in all,
    largest at ``x``."""
    return law is not None and float(np.sum(law)) > 1 + 1e-6 and int(np.argmax(law)) == x


def _stacked(laws: list[np.ndarray | None], p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The laws handed over as rows of one array (``p`` where none was): ``(handed over?, rows)``."""
    handed = np.array([law is not None for law in laws])
    return handed, np.array([p if law is None else law for law in laws]).reshape(len(laws), len(p))


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
        handed, stacked = _stacked(laws, p)
        if np.all(~handed | np.all(stacked == np.eye(len(q))[drafted], axis=1)):
            return wrong(
                where
                + _(
                    "you hand the verifier no law of the draft (or the one-hot law of the token), so it treats "
                    "each drafted token as certain, as for n-gram drafts. The output still follows q, but {rate:.3f} "
                    "of the steps reject, near 1 - sum_x p(x) q(x) = {overlap_miss:.3f}, where Theorem 1 gives "
                    "TV(p, q) = {t:.3f} for the law the token was drawn from (vllm #40149). Return the draft's law p."
                ).format(rate=rate, overlap_miss=1 - float(p @ q), t=t)
            )
        bad = np.flatnonzero(~handed | ~np.all(np.isclose(stacked, p, atol=1e-9), axis=1)).tolist()
        if bad:
            # a step whose "law" sums past 1 with its largest entry at the drafted token shows the race's scores
            scores = [i for i in bad if _race_scores(laws[i], int(drafted[i]))]
            x, law = int(drafted[(scores or bad)[0]]), laws[(scores or bad)[0]]
            if scores:
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
